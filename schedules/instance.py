"""The problem data: :class:`Instance` (MODEL.md, section *Instance*).

An instance fixes the pipeline (``P`` GPUs, ``v`` waves, so ``S = v*P`` stages, and the
stage-to-GPU placement), the workload (``m`` identical microbatches), the op durations
(``f``, ``b``, or the split ``b_I + b_W = b``), the memory limit ``K`` (stage activations per
GPU; ``None`` is unconstrained) and an optional communication delay ``c`` between stages held by
different GPUs.

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

from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm
from typing import Optional, Union

Number = Union[int, Fraction, str, float]

PLACEMENTS = ("looped", "vshape")


class InstanceError(ValueError):
    """An instance field is out of range or inconsistent; the message names the field."""


def to_fraction(value: Number, name: str) -> Fraction:
    """Parse ``value`` (int, Fraction, ``"3/2"`` string) into a Fraction, naming ``name`` on error.

    Floats are accepted only when they are exactly representable small decimals such as ``1.5``
    (converted through their shortest decimal string), never silently rounded.
    """
    if isinstance(value, bool):
        raise InstanceError(f"{name} must be a number, got {value!r}")
    try:
        if isinstance(value, float):
            frac = Fraction(repr(value))
        elif isinstance(value, (int, Fraction)):
            frac = Fraction(value)
        elif isinstance(value, str):
            frac = Fraction(value.strip())
        else:
            # sympy Rational and numpy integers land here
            frac = Fraction(str(value))
    except (ValueError, ZeroDivisionError, TypeError):
        raise InstanceError(f"{name} must be a number such as 2 or 3/2, got {value!r}") from None
    return frac


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


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
            elif hasattr(value, "__index__"):
                value = int(value.__index__())
            else:
                raise TypeError
        except (TypeError, ValueError):
            raise InstanceError(f"{name} must be a whole number >= 1, got {value!r}") from None
    if value < 1:
        raise InstanceError(f"{name} must be >= 1, got {value}")
    return value


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
    c : communication delay added to a precedence between stages on different GPUs (``>= 0``).
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
    _unit: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        P = _positive_int(self.P, "P")
        m = _positive_int(self.m, "m")
        v = _positive_int(self.v, "v")
        K = self.K
        if isinstance(K, str) and K.strip().lower() in ("inf", "infinity", "none", ""):
            K = None
        elif isinstance(K, float) and K == float("inf"):
            K = None
        if K is not None:
            K = _positive_int(K, "K")
        if self.stage_to_rank is not None:
            s2r = tuple(int(r) for r in self.stage_to_rank)
            if not s2r:
                raise InstanceError("stage_to_rank must list one GPU per stage, got an empty list")
            if len(s2r) % P != 0:
                raise InstanceError(
                    f"stage_to_rank has {len(s2r)} stages, not a multiple of P={P}")
            bad = [r for r in s2r if not 0 <= r < P]
            if bad:
                raise InstanceError(f"stage_to_rank names GPU {bad[0]}, outside 0..{P - 1}")
            v = len(s2r) // P
            counts = [s2r.count(r) for r in range(P)]
            if any(cnt != v for cnt in counts):
                raise InstanceError(
                    f"stage_to_rank must give every GPU exactly v={v} stages, got counts {counts}")
            # a list equal to a named placement is that placement, whatever was passed with it
            named = [name for name in ((self.placement,) + PLACEMENTS) if name in PLACEMENTS
                     and s2r == placement_stage_to_rank(P, v, name)]
            placement = named[0] if named else "explicit"
        else:
            placement = self.placement
            s2r = placement_stage_to_rank(P, v, placement)
        f = to_fraction(self.f, "f")
        if f <= 0:
            raise InstanceError(f"f (forward time) must be > 0, got {f}")
        b_I = None if self.b_I is None else to_fraction(self.b_I, "b_I")
        b_W = None if self.b_W is None else to_fraction(self.b_W, "b_W")
        if (b_I is None) != (b_W is None):
            raise InstanceError("split backward needs both b_I and b_W")
        if b_I is not None and b_W is not None:
            if b_I <= 0:
                raise InstanceError(f"b_I (input-gradient time) must be > 0, got {b_I}")
            if b_W <= 0:
                raise InstanceError(f"b_W (weight-gradient time) must be > 0, got {b_W}")
            b = b_I + b_W
            if self.b is not None and to_fraction(self.b, "b") != b:
                raise InstanceError(f"b={self.b} contradicts b_I + b_W = {b}")
        else:
            b = Fraction(2) if self.b is None else to_fraction(self.b, "b")
            if b <= 0:
                raise InstanceError(f"b (backward time) must be > 0, got {b}")
        c = to_fraction(self.c, "c")
        if c < 0:
            raise InstanceError(f"c (communication delay) must be >= 0, got {c}")
        unit = lcm(*(x.denominator for x in (f, b, c, b_I, b_W) if x is not None))
        for name, value in (("P", P), ("m", m), ("v", v), ("K", K), ("placement", placement),
                            ("stage_to_rank", s2r), ("f", f), ("b", b), ("b_I", b_I),
                            ("b_W", b_W), ("c", c), ("_unit", unit)):
            object.__setattr__(self, name, value)

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
        """The GPU that holds stage ``s``."""
        return self.stage_to_rank[s]

    def stages_of(self, p: int) -> tuple[int, ...]:
        """The stages GPU ``p`` holds, in increasing order."""
        return tuple(s for s, r in enumerate(self.stage_to_rank) if r == p)

    def duration(self, kind: str) -> Fraction:
        """Duration of an op of ``kind`` in ``F B I W R`` (``R`` costs ``f``)."""
        if kind in ("F", "R"):
            return self.f
        if kind == "B":
            return self.b
        if kind in ("I", "W"):
            value = self.b_I if kind == "I" else self.b_W
            if value is None:
                raise InstanceError(f"op kind {kind} needs split backward durations b_I, b_W")
            return value
        raise InstanceError(f"unknown op kind {kind!r}; ops are F B I W R")

    def with_(self, **changes) -> "Instance":
        """A copy with some fields changed (re-validated)."""
        if "v" in changes or "placement" in changes:
            changes.setdefault("stage_to_rank", None)
        elif "P" in changes and self.placement != "explicit":
            changes.setdefault("stage_to_rank", None)
        base = {k: getattr(self, k) for k in ("P", "m", "K", "v", "placement", "stage_to_rank",
                                              "f", "b", "b_I", "b_W", "c")}
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
        d["f"] = fraction_json(self.f)
        if self.b_I is not None and self.b_W is not None:  # split
            d["b_input"] = fraction_json(self.b_I)
            d["b_weight"] = fraction_json(self.b_W)
        d["b"] = fraction_json(self.b)
        if self.c:
            d["c"] = fraction_json(self.c)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Instance":
        """Build from the CLI.md instance object (``b_input``/``b_weight`` or ``b_I``/``b_W``)."""
        if not isinstance(d, dict):
            raise InstanceError(f"an instance must be a JSON object, got {type(d).__name__}")
        known = {"P", "m", "K", "v", "placement", "stage_to_rank", "f", "b", "b_input",
                 "b_weight", "b_I", "b_W", "c"}
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
        return cls(**kwargs)


def fraction_json(x: Fraction):
    """An exact number for JSON: an int when whole, else the string ``"p/q"``."""
    return int(x) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def parse_K(text) -> Optional[int]:
    """Parse a memory limit: a whole number >= 1, or ``inf``/``None`` for unconstrained."""
    return Instance(P=1, m=1, K=text).K
