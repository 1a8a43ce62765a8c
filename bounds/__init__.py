"""Lower bounds on the makespan of pipeline schedules (MODEL.md, *What the theory must give*).

:func:`lower_bound` evaluates the best proven bound for one instance exactly (Fractions): the
maximum of :func:`bounds.evaluate.basic_terms` and the terms of :mod:`bounds.single_wave`
(``v = 1``) or :mod:`bounds.multi_wave` (``v >= 2``). Each term is a theorem of docs/theory.md
or docs/theory_multiwave.md, given there also as a sympy expression; proofs_checks verifies
them (sympy is imported only where an expression is built, never by :func:`lower_bound`).
:mod:`bounds.batch` evaluates the same bound over arrays of instances (numpy, exact int64
fractions); :mod:`bounds.theorems` is the one registry of the theorems (id, terms, exact case,
docs section).

>>> from schedules import Instance
>>> lower_bound(Instance(P=4, m=8, K=1, f=1, b=2)).value
Fraction(36, 1)
"""

from .evaluate import LowerBound, lower_bound

__all__ = ["LowerBound", "lower_bound"]
