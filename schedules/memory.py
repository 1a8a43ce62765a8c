"""Memory in bytes (MODEL.md, *Extensions: memory in bytes*): :class:`MemoryModel`.

Per stage ``s``: ``activation[s] = a_s`` bytes stored by the storing op of ``(j,s)`` (``F``, or
``R`` when the pair is recomputed); ``kept_after_input[s] = g_s <= a_s`` bytes of them that stay
from the end of ``I(j,s)`` until the end of ``W(j,s)`` (split form; the other ``a_s - g_s`` are
freed at the end of ``I``; a fused ``B`` frees all ``a_s`` at its end);
``kept_gradient[s] = d_s <= g_s`` bytes of those ``g_s`` that are gradients (default 0): a
recompute of the forward cannot rebuild them, so the backward recompute (an ``R`` between ``I``
and ``W``) keeps them from ``I`` to ``W`` and rebuilds only the other ``g_s - d_s``, unless the
pair also re-runs its input gradient (``RI``, the remat paper's third option), which rebuilds
the ``d_s``. Per GPU ``p``: ``static[p] = M_p`` bytes always present. Per op (kind, and
optionally stage): ``transient[kind]`` bytes held only while an op of that kind runs, a number
or one per stage (``R`` defaults to ``F``'s, ``RI`` to ``I``'s): the op's peak is the memory
resident while it runs plus its transient. ``budget``: the bound on every GPU's memory (None:
only measured, never binding).

Memory of GPU ``p`` at an instant = ``M_p`` + stored bytes of its live pairs + the transient of
the op it runs. Events follow the GPU's op order, so the peak is a property of the orders alone:
the level during the ``i``-th op is ``M_p + stores(ops <= i) - frees(ops < i) + transient(i)``
(intervals half-open: bytes freed at ``t`` and bytes stored at ``t`` do not overlap), and the
GPU's peak is the largest such level (``M_p`` for an empty order).

The activation count ``K`` is the case ``a_s = g_s = 1``, ``M_p = 0``, no transients, budget
``K`` (:meth:`MemoryModel.counting`); transients in activation units are this model with
``a_s = g_s = 1``, budget ``K`` and the transients (``MemoryModel.counting(K, S, transient)``).

This module is the model layer: it imports only the number reader (:mod:`schedules.numbers`) and
the limits.

>>> mm = memory_from_json({"activation": [4, 2], "kept_after_input": [1, 1], "budget": 10})
>>> mm.activation, mm.kept(0), mm.static_of(1), mm.budget
((Fraction(4, 1), Fraction(2, 1)), Fraction(1, 1), Fraction(0, 1), Fraction(10, 1))
>>> mm = memory_from_json({"activation": [4, 2], "transient": {"I": [3, 1]}, "budget": 10})
>>> mm.transient_of("I", 0), mm.transient_of("RI", 1), mm.transient_of("I")
(Fraction(3, 1), Fraction(1, 1), Fraction(3, 1))
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Sequence, Union

from .limits import LimitError
from .numbers import read_fraction
from .errors import InputError

TRANSIENT_KINDS = ("F", "B", "I", "W", "R", "RI")
TRANSIENT_DEFAULTS = {"R": "F", "RI": "I"}
"""A recompute's transient, when not given, is that of the op it re-runs."""


class MemoryModelError(InputError):
    """A memory model field is missing, negative or of the wrong length; the message names it."""


class MemoryLimitError(MemoryModelError, LimitError):
    """A memory model number beyond a limit of :mod:`schedules.limits` (digits)."""


def _bytes(value, name: str) -> Fraction:
    x = read_fraction(value, name, MemoryModelError, MemoryLimitError)
    if x < 0:
        raise MemoryModelError(f"{name} must be >= 0, got {x}")
    return x


def _stage_bytes(value, name: str, n: int) -> tuple[Fraction, ...]:
    """``value`` as one byte count per stage (``n`` of them, as ``memory.activation``)."""
    out = _byte_list(value, name)
    if len(out) != n:
        raise MemoryModelError(f"{name} lists {len(out)} stages, memory.activation {n}")
    return out


def _at_most(values: Sequence[Fraction], limits: Sequence[Fraction], name: str,
             limit_text) -> None:
    """Refuse ``values[s] > limits[s]``, naming ``name[s]`` and ``limit_text(s, limits[s])``."""
    for s, (x, y) in enumerate(zip(values, limits)):
        if x > y:
            raise MemoryModelError(f"{name}[{s}] = {x} exceeds {limit_text(s, y)}")


def _byte_list(values, name: str) -> tuple[Fraction, ...]:
    if not isinstance(values, (list, tuple)):
        raise MemoryModelError(f"{name} must be a list of byte counts, got {values!r}")
    return tuple(_bytes(x, f"{name}[{k}]") for k, x in enumerate(values))


@dataclass(frozen=True)
class MemoryModel:
    """Bytes per stage and per GPU (see the module docstring); exact Fractions throughout.

    ``activation``: ``a_s``, one per stage. ``kept_after_input``: ``g_s`` (None: ``g_s = a_s``,
    everything kept until ``W``). ``static``: ``M_p``, one per GPU (None: all 0).
    ``transient``: ``((kind, bytes), ...)`` for kinds in ``F B I W R RI``, bytes a number or a
    tuple of one per stage (absent kinds 0; ``R`` defaults to ``F``, ``RI`` to ``I``).
    ``budget``: the per-GPU bound (None: unconstrained). ``kept_gradient``: ``d_s`` (None: all
    0), the gradient part of ``g_s`` (module docstring).
    """

    activation: tuple[Fraction, ...]
    kept_after_input: Optional[tuple[Fraction, ...]] = None
    static: Optional[tuple[Fraction, ...]] = None
    transient: tuple[tuple[str, Union[Fraction, tuple[Fraction, ...]]], ...] = ()
    budget: Optional[Fraction] = None
    kept_gradient: Optional[tuple[Fraction, ...]] = None

    def __post_init__(self) -> None:
        a = _byte_list(self.activation, "memory.activation")
        if not a:
            raise MemoryModelError("memory.activation must list one byte count per stage")
        g = None
        if self.kept_after_input is not None:
            g = _stage_bytes(self.kept_after_input, "memory.kept_after_input", len(a))
            _at_most(g, a, "memory.kept_after_input",
                     lambda s, y: f"memory.activation[{s}] = {y} (g_s <= a_s)")
        static = None if self.static is None else _byte_list(self.static, "memory.static")
        items = self.transient.items() if isinstance(self.transient, dict) else self.transient
        trans = {}
        for item in items:
            try:
                kind, value = item
            except (TypeError, ValueError):
                raise MemoryModelError("memory.transient must map op kinds to bytes") from None
            if kind not in TRANSIENT_KINDS:
                raise MemoryModelError(f"memory.transient names op kind {kind!r}; ops are "
                                       f"F B I W R RI")
            if isinstance(value, (list, tuple)):
                per = _stage_bytes(value, f"memory.transient.{kind}", len(a))
                trans[kind] = per[0] if len(set(per)) == 1 else per
            else:
                trans[kind] = _bytes(value, f"memory.transient.{kind}")
        d = None
        if self.kept_gradient is not None:
            d = _stage_bytes(self.kept_gradient, "memory.kept_gradient", len(a))
            _at_most(d, g if g is not None else a, "memory.kept_gradient",
                     lambda s, y: f"the kept bytes g_{s} = {y} (d_s <= g_s)")
            if not any(d):
                d = None
        budget = None if self.budget is None else _bytes(self.budget, "memory.budget")
        object.__setattr__(self, "activation", a)
        object.__setattr__(self, "kept_after_input", g)
        object.__setattr__(self, "static", static)
        object.__setattr__(self, "transient", tuple(sorted(trans.items())))
        object.__setattr__(self, "budget", budget)
        object.__setattr__(self, "kept_gradient", d)

    # ---------------------------------------------------------------- queries
    @classmethod
    def counting(cls, K: Optional[int], S: int, transient=()) -> "MemoryModel":
        """The activation count as bytes: ``a_s = g_s = 1``, no static, budget K; ``transient``
        (default none) in activation units."""
        return cls(activation=(Fraction(1),) * S, transient=transient,
                   budget=None if K is None else Fraction(K))

    def stored(self, s: int) -> Fraction:
        """``a_s``: bytes the storing op of ``(j,s)`` adds."""
        return self.activation[s]

    def kept(self, s: int) -> Fraction:
        """``g_s``: bytes of ``(j,s)`` that stay from the end of ``I`` to the end of ``W``."""
        return self.activation[s] if self.kept_after_input is None else self.kept_after_input[s]

    def gradient(self, s: int) -> Fraction:
        """``d_s``: bytes of ``g_s`` that a backward ``R`` cannot rebuild (an ``RI`` can)."""
        return Fraction(0) if self.kept_gradient is None else self.kept_gradient[s]

    def static_of(self, p: int) -> Fraction:
        """``M_p``: GPU ``p``'s static bytes."""
        return Fraction(0) if self.static is None else self.static[p]

    def transient_of(self, kind: str, s: Optional[int] = None) -> Fraction:
        """Bytes held only while an op of ``kind`` runs on stage ``s`` (``R`` defaults to
        ``F``'s, ``RI`` to ``I``'s); ``s=None``: the largest over the stages."""
        d = dict(self.transient)
        if kind not in d and kind in TRANSIENT_DEFAULTS:
            kind = TRANSIENT_DEFAULTS[kind]
        x = d.get(kind, Fraction(0))
        if isinstance(x, tuple):
            return max(x) if s is None else x[s]
        return x

    @property
    def per_stage_transient(self) -> bool:
        """Whether some transient is given per stage."""
        return any(isinstance(x, tuple) for _, x in self.transient)

    def check_shape(self, S: int, P: int) -> None:
        """Raise MemoryModelError unless the lists fit ``S`` stages and ``P`` GPUs."""
        if len(self.activation) != S:
            raise MemoryModelError(f"memory.activation lists {len(self.activation)} stages, "
                                   f"the instance has S={S}")
        if self.static is not None and len(self.static) != P:
            raise MemoryModelError(f"memory.static lists {len(self.static)} GPUs, the instance "
                                   f"has P={P}")

    @property
    def unit(self) -> int:
        """Least common denominator of every byte count (levels are integers in ``1/unit``)."""
        from math import lcm

        xs = list(self.activation) + list(self.kept_after_input or ()) + list(self.static or ())
        xs += list(self.kept_gradient or ())
        for _, x in self.transient:
            xs += list(x) if isinstance(x, tuple) else [x]
        xs += [self.budget] if self.budget is not None else []
        return lcm(*(x.denominator for x in xs))

    def to_json(self) -> dict:
        """The ``memory`` object of an orders document (CLI.md)."""
        out: dict = {"activation": [_num(x) for x in self.activation]}
        if self.kept_after_input is not None:
            out["kept_after_input"] = [_num(x) for x in self.kept_after_input]
        if self.static is not None:
            out["static"] = [_num(x) for x in self.static]
        if self.kept_gradient is not None:
            out["kept_gradient"] = [_num(x) for x in self.kept_gradient]
        if self.transient:
            out["transient"] = {k: [_num(y) for y in x] if isinstance(x, tuple) else _num(x)
                                for k, x in self.transient}
        out["budget"] = None if self.budget is None else _num(self.budget)
        return out


def _num(x: Fraction):
    return int(x) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


MEMORY_KEYS = ("activation", "kept_after_input", "kept_gradient", "static", "transient", "budget")


def memory_from_json(obj) -> MemoryModel:
    """Read the ``memory`` object of an orders document (CLI.md; ``activation`` and ``budget``
    required, ``budget`` may be null for measuring only)."""
    if not isinstance(obj, dict):
        raise MemoryModelError("'memory' must be an object such as "
                               "{\"activation\": [1, 1], \"budget\": 4}")
    unknown = sorted(set(obj) - set(MEMORY_KEYS))
    if unknown:
        raise MemoryModelError(f"unknown key(s) {unknown} in 'memory'; keys are "
                               f"{', '.join(MEMORY_KEYS)}")
    for key in ("activation", "budget"):
        if key not in obj:
            raise MemoryModelError(f"'memory' is missing {key!r}")
    trans = obj.get("transient") or {}
    if not isinstance(trans, dict):
        raise MemoryModelError("memory.transient must be an object such as {\"F\": 16}")
    return MemoryModel(activation=obj["activation"], kept_after_input=obj.get("kept_after_input"),
                       static=obj.get("static"), transient=tuple(trans.items()),
                       budget=obj.get("budget"), kept_gradient=obj.get("kept_gradient"))
