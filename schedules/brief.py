"""Short reprs of the toolkit's result objects: one line that a person reads at a prompt.

A result's default dataclass repr prints every nested schedule and instance (thousands of
characters); :func:`brief_repr` prints the class name and the fields that answer the question
(numbers exact: ``33``, ``10/3``), and :func:`instance_brief` an instance as its flags.

>>> from fractions import Fraction
>>> brief_repr("SolveResult", status="optimal", makespan=Fraction(10, 3), engine="search")
"SolveResult(status='optimal', makespan=10/3, engine='search')"
"""

from __future__ import annotations

from fractions import Fraction


def _value(x) -> str:
    if isinstance(x, Fraction):
        return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
    if isinstance(x, float):
        return f"{x:.3g}"
    return repr(x)


def brief_repr(name: str, **fields) -> str:
    """``name(k=v, ...)`` with exact numbers."""
    return f"{name}(" + ", ".join(f"{k}={_value(v)}" for k, v in fields.items()) + ")"


def instance_brief(inst) -> str:
    """An instance as its flags: ``P=4 m=8 K=2 v=1 f=1 b=2`` (``b_I``/``b_W`` when split)."""
    K = "inf" if inst.K is None else inst.K
    names = ("f", "b_I", "b_W") if getattr(inst, "split", False) else ("f", "b")
    durs = " ".join(f"{n}={_duration(getattr(inst, n))}" for n in names)
    two = " directions=2" if getattr(inst, "directions", 1) == 2 else ""
    return f"P={inst.P} m={inst.m} K={K} v={inst.v}{two} {durs}"


def _duration(x) -> str:
    return "per-stage" if isinstance(x, tuple) else _value(Fraction(x))
