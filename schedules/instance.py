"""The problem data: :class:`Instance` (MODEL.md, section *Instance*).

An instance fixes the pipeline (``P`` GPUs, ``v`` waves, so ``S = v*P`` stages, and the
stage-to-GPU placement), the workload (``m`` identical microbatches), the op durations
(``f``, ``b``, or the split ``b_I + b_W = b``), the memory limit ``K`` (stage activations per
GPU; ``None`` is unconstrained) and an optional communication delay ``c`` between stages held by
different GPUs.

Extensions (MODEL.md): each duration field may be a sequence with one number per stage
(per-stage costs; stored as a tuple, and :attr:`Instance.uniform` is then False: use
:meth:`Instance.duration_of`), and ``memory`` may hold a :class:`schedules.memory.MemoryModel`
(memory in bytes with a budget, checked besides ``K``).

Every number is kept as an exact :class:`fractions.Fraction`; construction validates every field
and raises :class:`InstanceError` with a message that names the field.

Example
-------
>>> inst = Instance(P=4, m=8, K=2, f=1, b=2)
>>> inst.S, inst.stage_to_rank, inst.split
(4, (0, 1, 2, 3), False)
>>> Instance(P=2, m=2, v=2, placement="vshape").stage_to_rank
(0, 1, 1, 0)
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm
from typing import TYPE_CHECKING, Optional, Union
from .errors import InputError

if TYPE_CHECKING:
    from .memory import MemoryModel

from .limits import DOCS, LimitError, MAX_TIME_UNITS, check_limit
from .numbers import read_fraction, read_limit, read_whole, show

Number = Union[int, Fraction, str, float]

PLACEMENTS = ("looped", "vshape")


class InstanceError(InputError):
    """An instance field is out of range or inconsistent; the message names the field."""


class DirectionsError(InstanceError):
    """A feature that does not support ``directions = 2`` yet (MODEL.md, *Directions*) was
    asked for one; the message names the feature."""


def require_one_direction(inst, feature: str) -> None:
    """Raise :class:`DirectionsError` naming ``feature`` when ``inst`` (an instance, or a schedule
    of one) has ``directions = 2``: what every feature that assumes one chain per microbatch on
    one placement calls first, so that it refuses rather than answer for the wrong GPUs. Any
    other argument passes (the caller's own type check names it)."""
    inst = getattr(inst, "instance", inst)
    if getattr(inst, "directions", 1) != 1:
        raise DirectionsError(f"{feature} does not support directions=2 (the bidirectional "
                              f"model, MODEL.md) yet")


def _directions(value, v: int, m: int, s2r: tuple[int, ...]) -> int:
    """The ``directions`` field validated: 1, or 2 with ``v = 1``, the identity placement and
    an even ``m`` (MODEL.md, *Directions*)."""
    d = whole_number(value, "directions", 1)
    if d not in (1, 2):
        raise InstanceError(f"directions must be 1 or 2, got {d}")
    if d == 2:
        if v != 1:
            raise InstanceError(f"directions=2 needs v=1 (each copy is a chain of P stages), "
                                f"got v={v}")
        if s2r != tuple(range(len(s2r))):
            raise InstanceError("directions=2 needs the default placement (copy 0: stage s on "
                                "GPU s; copy 1: stage s on GPU P-1-s), got an explicit "
                                "stage_to_rank")
        if m % 2:
            raise InstanceError(f"directions=2 needs an even m (m/2 microbatches each way), "
                                f"got m={m}")
    return d


class InstanceLimitError(InstanceError, LimitError):
    """An instance field beyond a limit of :mod:`schedules.limits` (the message names it)."""


def _limit(name: str, value, what: str) -> None:
    check_limit(name, value, what, InstanceLimitError)


def to_fraction(value: Number, name: str) -> Fraction:
    """Parse ``value`` into an exact Fraction, naming ``name`` on error
    (:func:`schedules.numbers.read_fraction` with the instance's errors)."""
    return read_fraction(value, name, InstanceError, InstanceLimitError)


def whole_number(value, name: str, minimum: int = 1) -> int:
    """``value`` as an exact whole number ``>= minimum``, naming ``name`` on error
    (:func:`schedules.numbers.read_whole` with the instance's errors)."""
    return read_whole(value, name, minimum, InstanceError, InstanceLimitError)


def require(value, expected: type, name: str, where: str) -> None:
    """Raise TypeError naming ``name`` (an argument of ``where``) unless ``value`` is an
    ``expected``; library entry points call it first, so a wrong type never fails deep inside."""
    if not isinstance(value, expected):
        article = "an" if expected.__name__[0] in "AEIOUaeiou" else "a"
        raise TypeError(f"{where}: {name} must be {article} {expected.__name__}, got "
                        f"{type(value).__name__} {show(value)}")


def stage_list(value, P: int) -> tuple[int, ...]:
    """An explicit stage-to-GPU list checked entry by entry: whole numbers in ``0..P-1``."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
        raise InstanceError(f"stage_to_rank must be a list with one GPU per stage, got "
                            f"{type(value).__name__}")
    if not len(value):
        raise InstanceError("stage_to_rank must list one GPU per stage, got an empty list")
    _limit("MAX_STAGES", len(value), "len(stage_to_rank)")
    out = []
    for s, r in enumerate(value):
        if isinstance(r, bool) or not hasattr(type(r), "__index__") or isinstance(r, float):
            raise InstanceError(f"stage_to_rank[{s}] must be a GPU number (a whole number), got "
                                f"{show(r)}")
        r = operator.index(r)
        if not 0 <= r < P:
            raise InstanceError(f"stage_to_rank names GPU {r}, outside 0..{P - 1}")
        out.append(r)
    if len(out) % P != 0:
        raise InstanceError(f"stage_to_rank has {len(out)} stages, not a multiple of P={P}")
    return tuple(out)


def placement_stage_to_rank(P: int, v: int, placement: str) -> tuple[int, ...]:
    """The GPU of every stage ``s = 0..vP-1`` under a named placement (MODEL.md).

    ``looped``: ``s mod P``. ``vshape``: wave ``q = s div P``, ``r = s mod P``, GPU ``r`` if ``q``
    is even else ``P-1-r``.
    """
    if placement == "looped":
        return tuple(s % P for s in range(v * P))
    if placement == "vshape":
        return tuple((s % P) if (s // P) % 2 == 0 else P - 1 - (s % P) for s in range(v * P))
    raise InstanceError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")


Durations = Union[Fraction, tuple[Fraction, ...]]


def _duration_values(value, name: str, S: int) -> Durations:
    """One duration field: a positive number, or a sequence of ``S`` positive numbers (one per
    stage; MODEL.md, *Extensions: per-stage costs*). A sequence whose entries are all equal
    collapses to that number, so a uniform instance always holds scalars."""
    if isinstance(value, (list, tuple)):
        if len(value) != S:
            raise InstanceError(f"{name} lists {len(value)} per-stage durations, the instance "
                                f"has S={S} stages")
        vals = tuple(to_fraction(x, f"{name}[{s}]") for s, x in enumerate(value))
        for s, x in enumerate(vals):
            if x <= 0:
                raise InstanceError(f"{name}[{s}] must be > 0, got {x}")
        return vals[0] if len(set(vals)) == 1 else vals
    return to_fraction(value, name)


def stage_durations(f, b, b_I, b_W, S: int) -> tuple[Durations, Durations, Optional[Durations],
                                                      Optional[Durations]]:
    """Validated ``(f, b, b_I, b_W)``: each a Fraction (uniform) or a tuple of ``S`` Fractions.

    Split form: ``b = b_I + b_W`` stage by stage (an explicit ``b`` that differs is an error).
    """
    what = {"f": "forward time", "b": "backward time", "b_I": "input-gradient time",
            "b_W": "weight-gradient time"}
    f = _duration_values(f, "f", S)
    b_I = None if b_I is None else _duration_values(b_I, "b_I", S)
    b_W = None if b_W is None else _duration_values(b_W, "b_W", S)
    for name, x in (("f", f), ("b_I", b_I), ("b_W", b_W)):
        if x is not None and not isinstance(x, tuple) and x <= 0:
            raise InstanceError(f"{name} ({what[name]}) must be > 0, got {x}")
    if (b_I is None) != (b_W is None):
        raise InstanceError("split backward needs both b_I and b_W")
    if b_I is not None:
        if isinstance(b_I, tuple) or isinstance(b_W, tuple):
            total = tuple(_at(b_I, s) + _at(b_W, s) for s in range(S))
            b_sum = total[0] if len(set(total)) == 1 else total
        else:
            b_sum = b_I + b_W
        if b is not None and _duration_values(b, "b", S) != b_sum:
            shown = b_sum if not isinstance(b_sum, tuple) else [str(x) for x in b_sum]
            raise InstanceError(f"b={b} contradicts b_I + b_W = {shown}")
        b = b_sum
    else:
        b = Fraction(2) if b is None else _duration_values(b, "b", S)
        if not isinstance(b, tuple) and b <= 0:
            raise InstanceError(f"b ({what['b']}) must be > 0, got {b}")
    return f, b, b_I, b_W


def _at(x: Durations, s: int) -> Fraction:
    """Entry ``s`` of a duration field (the number itself when uniform)."""
    return x[s] if isinstance(x, tuple) else x


def _positive_int(value, name: str) -> int:
    return whole_number(value, name, 1)


@dataclass(frozen=True)
class Instance:
    """One scheduling problem (MODEL.md).

    Parameters
    ----------
    P : number of GPUs, ``>= 1``.
    m : number of microbatches, ``>= 1``.
    K : activations one GPU may hold at once, ``>= 1``; ``None`` (or ``"inf"``) is unconstrained.
    v : waves; the model has ``S = v*P`` stages.
    placement : ``"looped"`` or ``"vshape"``; ignored when ``stage_to_rank`` is given.
    stage_to_rank : explicit GPU of every stage (length ``S``, each GPU holding ``v`` stages).
    f, b : forward and fused-backward durations (positive rationals).
    b_I, b_W : split backward durations; when given, ``b`` is ``b_I + b_W`` (a different
        explicit ``b`` is an error).
        Each of ``f, b, b_I, b_W`` may instead be a sequence of ``S`` positive rationals, one per
        stage (per-stage costs). A sequence of equal numbers becomes that number; otherwise the
        field holds a tuple and :attr:`uniform` is False.
    c : communication delay added to a precedence between stages on different GPUs (``>= 0``).
    memory : optional :class:`schedules.memory.MemoryModel` (bytes per stage and GPU, a budget);
        its budget is enforced besides ``K`` (normally only one of them is set).
    d_FB, d_FI : duration of an overlapped forward and backward op (MODEL.md, third-round
        extensions, ``F&B``) whose backward part is a full backward ``B`` (``d_FB``) or an input
        gradient ``I`` (``d_FI``): a number, or one per stage indexed by the *forward* part's
        stage. None: such an op lasts the sum of its parts. A given value must not exceed the
        sum of its parts for any backward stage on the forward stage's GPU
        (``d_FB[s] <= f_s + b_s'``), the model's ``d_FB <= f + b``.
    directions : 1 (default) or 2 (MODEL.md, *Directions*, the bidirectional DualPipe): with 2,
        two copies of the ``P``-stage model, microbatches ``j < m/2`` through copy 0 (stage
        ``s`` on GPU ``s``) and ``j >= m/2`` through copy 1 (stage ``s`` on GPU ``P-1-s``).
        Needs ``v = 1``, the default placement and an even ``m``; use :meth:`gpu_of`
        (:meth:`gpu` refuses: a stage alone does not name its GPU).
    """

    # the annotations are the types stored after validation; construction also accepts the
    # CLI.md spellings (ints, "3/2" strings, K = "inf", stage_to_rank as a list), and None for
    # b and stage_to_rank means "derive it" (b = 2 or b_I + b_W; the placement's list)
    P: int
    m: int
    K: Optional[int] = None
    v: int = 1
    placement: str = "looped"
    stage_to_rank: tuple[int, ...] = None  # type: ignore[assignment]
    f: Fraction = Fraction(1)
    b: Fraction = None  # type: ignore[assignment]
    b_I: Optional[Fraction] = None
    b_W: Optional[Fraction] = None
    c: Fraction = Fraction(0)
    memory: Optional["MemoryModel"] = None
    d_FB: Optional[Fraction] = None
    d_FI: Optional[Fraction] = None
    directions: int = 1
    _unit: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        P = _positive_int(self.P, "P")
        m = _positive_int(self.m, "m")
        v = _positive_int(self.v, "v")
        _limit("MAX_STAGES", P, "P")
        _limit("MAX_PAIRS", P * m, f"P·m = {P}·{m}")
        K = read_limit(self.K, "K", InstanceError, InstanceLimitError)
        if K is not None:
            _limit("MAX_INTEGER", K, "K")
        if self.stage_to_rank is not None:
            s2r = stage_list(self.stage_to_rank, P)
            v = len(s2r) // P
            counts = [0] * P
            for r in s2r:
                counts[r] += 1
            if any(cnt != v for cnt in counts):
                raise InstanceError(
                    f"stage_to_rank must give every GPU exactly v={v} stages, got counts "
                    f"{counts[:16]}{' ...' if P > 16 else ''}")
            # a list equal to a named placement is that placement, whatever was passed with it
            named = [name for name in ((self.placement,) + PLACEMENTS) if name in PLACEMENTS
                     and s2r == placement_stage_to_rank(P, v, name)]
            placement = named[0] if named else "explicit"
        else:
            placement = self.placement
            if not isinstance(placement, str) or placement not in PLACEMENTS:
                raise InstanceError(f"placement must be one of {', '.join(PLACEMENTS)}, got "
                                    f"{placement!r}"[:200])
            _limit("MAX_STAGES", P * v, f"P·v = {P}·{v}")
            s2r = placement_stage_to_rank(P, v, placement)
        _limit("MAX_PAIRS", P * v * m, f"P·v·m = {P}·{v}·{m}")
        directions = _directions(self.directions, v, m, s2r)
        S = v * P
        f, b, b_I, b_W = stage_durations(self.f, self.b, self.b_I, self.b_W, S)
        c = to_fraction(self.c, "c")
        if c < 0:
            raise InstanceError(f"c (communication delay) must be >= 0, got {c}")
        memory = self.memory
        if memory is not None:
            from .memory import MemoryModel, MemoryModelError

            if not isinstance(memory, MemoryModel):
                raise InstanceError(f"memory must be a MemoryModel, got {type(memory).__name__}")
            try:
                memory.check_shape(S, P)
            except MemoryModelError as exc:
                raise InstanceError(str(exc)) from None
        # stages sharing a GPU have equal keys; with directions=2 GPU s holds stage s of copy 0
        # and P-1-s of copy 1, so the stages on one GPU are {s, P-1-s}
        held = s2r if directions == 1 else tuple(min(s, P - 1 - s) for s in range(P))
        d_FB = self._overlap_durations(self.d_FB, "d_FB", f, b, held, S)
        d_FI = None
        if self.d_FI is not None:
            if b_I is None:
                raise InstanceError("d_FI (an overlapped forward and input gradient) needs split "
                                    "backward durations b_I, b_W")
            d_FI = self._overlap_durations(self.d_FI, "d_FI", f, b_I, held, S)
        numbers = [c]
        for x in (f, b, b_I, b_W, d_FB, d_FI):
            if x is not None:
                numbers.extend(x if isinstance(x, tuple) else (x,))
        unit = lcm(*(x.denominator for x in numbers))
        longest = max(numbers[1:])  # the longest op (numbers[0] is c)
        horizon = 5 * P * v * m * int((longest + c) * unit)
        if horizon > MAX_TIME_UNITS:
            raise InstanceLimitError(
                f"durations too large for this size: 5·P·v·m·(max duration + c) = {horizon} time "
                f"units of 1/{unit} is above the limit MAX_TIME_UNITS = {MAX_TIME_UNITS} "
                f"({DOCS})"[:300])
        for name, value in (("P", P), ("m", m), ("v", v), ("K", K), ("placement", placement),
                            ("stage_to_rank", s2r), ("f", f), ("b", b), ("b_I", b_I),
                            ("b_W", b_W), ("c", c), ("memory", memory), ("d_FB", d_FB),
                            ("d_FI", d_FI), ("directions", directions), ("_unit", unit)):
            object.__setattr__(self, name, value)

    @staticmethod
    def _overlap_durations(value, name: str, f, back, s2r, S: int):
        """``d_FB`` or ``d_FI`` validated: positive, at most ``f_s + back_s'`` for every stage
        ``s'`` on the GPU of ``s`` (an overlap is never slower than its parts apart)."""
        if value is None:
            return None
        d = _duration_values(value, name, S)
        for s in range(S):
            x = _at(d, s)
            if x <= 0:
                raise InstanceError(f"{name} must be > 0, got {x}")
            worst = min(_at(back, t) for t in range(S) if s2r[t] == s2r[s])
            if x > _at(f, s) + worst:
                which = "b" if name == "d_FB" else "b_I"
                raise InstanceError(f"{name} = {x} (stage {s}) is above f + {which} = "
                                    f"{_at(f, s) + worst}: an overlapped op is never slower than "
                                    f"its two parts apart")
        return d

    @property
    def overlapped(self) -> bool:
        """True when the instance gives an overlapped ``F&B`` duration (``d_FB`` or ``d_FI``)."""
        return self.d_FB is not None or self.d_FI is not None

    def overlap_duration(self, s_f: int, kind: str, s_b: int) -> Fraction:
        """Duration of the ``F&B`` op joining ``F(., s_f)`` and ``kind`` (``B`` or ``I``) of
        stage ``s_b``: ``d_FB``/``d_FI`` of ``s_f`` when given, else the sum of the parts."""
        given = self.d_FB if kind == "B" else self.d_FI
        if given is not None:
            return _at(given, s_f)
        return self.duration_of("F", s_f) + self.duration_of(kind, s_b)

    # ----------------------------------------------------------------- derived
    @property
    def S(self) -> int:
        """Number of stages, ``v*P``."""
        return self.v * self.P

    @property
    def split(self) -> bool:
        """True when the backward durations are split into ``b_I`` and ``b_W``."""
        return self.b_I is not None

    @property
    def unit(self) -> int:
        """Least common denominator of all durations: times are integers in units of ``1/unit``."""
        return self._unit

    def gpu(self, s: int) -> int:
        """The GPU that holds stage ``s`` (one direction; with ``directions = 2`` a stage alone
        does not name its GPU: :class:`DirectionsError`, use :meth:`gpu_of`)."""
        if self.directions != 1:
            raise DirectionsError("Instance.gpu(s): with directions=2 the GPU of stage s depends "
                                  "on the microbatch's copy; use gpu_of(s, j)")
        return self.stage_to_rank[s]

    def stages_of(self, p: int) -> tuple[int, ...]:
        """The stages GPU ``p`` holds, in increasing order (one direction; with
        ``directions = 2``: :class:`DirectionsError`, use :meth:`held_stages`)."""
        if self.directions != 1:
            raise DirectionsError("Instance.stages_of(p): with directions=2 a GPU holds one stage "
                                  "of each copy; use held_stages(p)")
        return tuple(s for s, r in enumerate(self.stage_to_rank) if r == p)

    def copy_of(self, j: int) -> int:
        """The copy of the parameters microbatch ``j`` runs through (MODEL.md, *Directions*):
        0, or with ``directions = 2`` 1 for ``j >= m/2``."""
        return 1 if self.directions == 2 and 2 * j >= self.m else 0

    def gpu_of(self, s: int, j: int) -> int:
        """The GPU that runs stage ``s`` of microbatch ``j``: ``stage_to_rank[s]``, or
        ``P-1-s`` for a microbatch of copy 1 (``directions = 2``)."""
        return self.P - 1 - s if self.copy_of(j) else self.stage_to_rank[s]

    def held_stages(self, p: int) -> tuple[tuple[int, int], ...]:
        """``(copy, stage)`` of every stage GPU ``p`` holds: ``(0, s)`` for its stages, and with
        ``directions = 2`` ``(0, p), (1, P-1-p)`` (two copies of the parameters: a GPU's static
        memory counts both)."""
        if self.directions == 1:
            return tuple((0, s) for s in self.stages_of(p))
        return ((0, p), (1, self.P - 1 - p))

    @property
    def uniform(self) -> bool:
        """True when every stage has the same durations (``f, b, b_I, b_W`` are numbers); False
        for per-stage costs (MODEL.md, *Extensions*), where those fields are tuples of length
        ``S``. The theorems of docs/theory.md for uniform durations apply only when True."""
        return not any(isinstance(x, tuple) for x in (self.f, self.b, self.b_I, self.b_W))

    def _field(self, kind: str):
        if kind in ("F", "R"):
            return self.f
        if kind == "B":
            return self.b
        if kind in ("I", "W", "RI"):
            value = self.b_W if kind == "W" else self.b_I  # RI re-runs I: it costs b_I
            if value is None:
                raise InstanceError(f"op kind {kind} needs split backward durations b_I, b_W")
            return value
        raise InstanceError(f"unknown op kind {kind!r}; ops are F B I W R RI")

    def duration(self, kind: str) -> Fraction:
        """Duration of an op of ``kind`` in ``F B I W R`` (``R`` costs ``f``).

        Only for a kind whose duration is the same on every stage; per-stage costs need
        :meth:`duration_of` (an InstanceError says so, rather than answering for one stage).
        """
        x = self._field(kind)
        if isinstance(x, tuple):
            raise InstanceError(f"op kind {kind} has per-stage durations; use duration_of(kind, s)")
        return x

    def duration_of(self, kind: str, s: int) -> Fraction:
        """Duration of an op of ``kind`` on stage ``s`` (``R(j,s)`` costs ``f_s``, ``RI(j,s)``
        ``b_I,s``)."""
        if not 0 <= s < self.S:
            raise InstanceError(f"stage {s} is outside 0..{self.S - 1}")
        return _at(self._field(kind), s)

    def durations_of(self, kind: str) -> tuple[Fraction, ...]:
        """The duration of ``kind`` on every stage ``s = 0..S-1``."""
        x = self._field(kind)
        return x if isinstance(x, tuple) else (x,) * self.S

    def with_(self, **changes) -> "Instance":
        """A copy with some fields changed (re-validated)."""
        if "v" in changes or "placement" in changes:
            changes.setdefault("stage_to_rank", None)
        elif "P" in changes and self.placement != "explicit":
            changes.setdefault("stage_to_rank", None)
        base = {k: getattr(self, k) for k in ("P", "m", "K", "v", "placement", "stage_to_rank",
                                              "f", "b", "b_I", "b_W", "c", "memory", "d_FB",
                                              "d_FI", "directions")}
        if base["placement"] == "explicit":
            base["placement"] = "looped"
        if "b_I" in changes or "b_W" in changes or ("b" in changes and self.split):
            if changes.get("b_I", self.b_I) is None:
                base["b_I"] = base["b_W"] = None
            elif "b" in changes and "b_I" not in changes:
                raise InstanceError("changing b of a split instance needs b_I and b_W")
            else:
                base["b"] = None
        base.update(changes)
        return Instance(**base)

    def to_dict(self) -> dict:
        """The instance as the JSON object of CLI.md (numbers as ints or ``"p/q"`` strings)."""
        d: dict = {"P": self.P, "m": self.m, "K": self.K, "v": self.v}
        if self.placement == "explicit":
            d["stage_to_rank"] = list(self.stage_to_rank)
        else:
            d["placement"] = self.placement
        d["f"] = durations_json(self.f)
        if self.split:
            d["b_input"] = durations_json(self.b_I)
            d["b_weight"] = durations_json(self.b_W)
        d["b"] = durations_json(self.b)
        if self.c:
            d["c"] = fraction_json(self.c)
        if self.memory is not None:
            d["memory"] = self.memory.to_json()
        for key in ("d_FB", "d_FI"):
            if getattr(self, key) is not None:
                d[key] = durations_json(getattr(self, key))
        if self.directions != 1:
            d["directions"] = self.directions
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Instance":
        """Build from the CLI.md instance object (``b_input``/``b_weight`` or ``b_I``/``b_W``)."""
        if not isinstance(d, dict):
            raise InstanceError(f"an instance must be a JSON object, got {type(d).__name__}")
        known = {"P", "m", "K", "v", "placement", "stage_to_rank", "f", "b", "b_input",
                 "b_weight", "b_I", "b_W", "c", "memory", "d_FB", "d_FI", "directions"}
        for key in ("P", "m"):
            if key not in d:
                raise InstanceError(f"instance is missing {key!r}")
        kwargs = {k: d[k] for k in d if k in known}
        if "b_input" in kwargs:
            kwargs["b_I"] = kwargs.pop("b_input")
        if "b_weight" in kwargs:
            kwargs["b_W"] = kwargs.pop("b_weight")
        if kwargs.get("placement") is None:
            kwargs.pop("placement", None)
        if kwargs.get("memory") is not None and not _is_memory_model(kwargs["memory"]):
            from .memory import memory_from_json

            kwargs["memory"] = memory_from_json(kwargs["memory"])
        return cls(**kwargs)


def fraction_json(x: Fraction):
    """An exact number for JSON: an int when whole, else the string ``"p/q"``."""
    return int(x) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def durations_json(x):
    """A duration field for JSON: a number (uniform) or a list with one number per stage."""
    return [fraction_json(y) for y in x] if isinstance(x, tuple) else fraction_json(x)


def _is_memory_model(x) -> bool:
    from .memory import MemoryModel

    return isinstance(x, MemoryModel)


def parse_K(text) -> Optional[int]:
    """Parse a memory limit: a whole number >= 1, or ``inf``/``None`` for unconstrained."""
    return Instance(P=1, m=1, K=text).K
