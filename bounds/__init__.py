"""Lower bounds on the makespan of pipeline schedules (MODEL.md, *What the theory must give*).

:func:`lower_bound` evaluates the best proven bound for one instance exactly; see
docs/theory.md for the theorems and proofs_checks for their machine checks.
"""

from .evaluate import LowerBound, lower_bound

__all__ = ["LowerBound", "lower_bound"]
