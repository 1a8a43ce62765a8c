"""The model's symbols (MODEL.md) as sympy symbols, shared by every bound.

``P, m, K, v`` are positive integers; ``f, b, b_I, b_W`` positive reals (durations); ``p``
the index of the GPU a per-GPU bound is stated for (``0 <= p <= P-1``), ``x`` a number of
activations (kept by a GPU in T3, recomputed in MW7). Only the symbolic side imports this
module (the ``*_expr`` functions, proofs_checks, notebooks): the exact evaluation never loads
sympy.
"""

import sympy as sp

P, m, K, v = sp.symbols("P m K v", integer=True, positive=True)
f, b, b_I, b_W = sp.symbols("f b b_I b_W", positive=True)

p, x = sp.symbols("p x", integer=True, nonnegative=True)

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


def exact_lambdify(expr, args):
    """``expr`` as a Python function evaluated in exact arithmetic: pass Fractions (or ints) and
    get a Fraction. sympy's lambdify with ``floor``/``ceiling``/``Min``/``Max`` mapped to
    Python's and rational constants printed as ``Fraction(p, q)`` (the default printer writes
    ``1/2``, which Python evaluates to a float)."""
    import math
    from fractions import Fraction

    from sympy.printing.pycode import PythonCodePrinter

    class _FractionPrinter(PythonCodePrinter):
        def _print_Rational(self, e):
            return f"Fraction({e.p}, {e.q})"

        _print_Half = _print_Rational

    return sp.lambdify(args, expr, printer=_FractionPrinter, modules=[
        {"floor": math.floor, "ceiling": math.ceil, "Fraction": Fraction, "math": math}, "math"])
