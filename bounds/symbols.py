"""The model's symbols (MODEL.md) as sympy symbols, shared by every bound.

``P, m, K, v`` are positive integers; ``f, b, b_I, b_W`` positive reals (durations).
"""

import sympy as sp

P, m, K, v = sp.symbols("P m K v", integer=True, positive=True)
f, b, b_I, b_W = sp.symbols("f b b_I b_W", positive=True)

ALL = (P, m, K, v, f, b, b_I, b_W)


def substitutions(inst) -> dict:
    """``{symbol: exact value}`` for an :class:`~schedules.instance.Instance` (K omitted when
    unconstrained; ``b_I, b_W`` only when split)."""
    subs = {P: inst.P, m: inst.m, v: inst.v, f: sp.Rational(inst.f.numerator, inst.f.denominator),
            b: sp.Rational(inst.b.numerator, inst.b.denominator)}
    if inst.K is not None:
        subs[K] = inst.K
    if inst.split:
        subs[b_I] = sp.Rational(inst.b_I.numerator, inst.b_I.denominator)
        subs[b_W] = sp.Rational(inst.b_W.numerator, inst.b_W.denominator)
    return subs
