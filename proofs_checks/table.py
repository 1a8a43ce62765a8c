"""The table of optima (pipebounds/data/optima.jsonl) as evidence for the checks, and the check that
every bound holds on every row of it (:func:`table_rows`).

Only rows proven optimal *independently of the theory* count (``"status": "optimal"`` and
``"independent": true``: the engine ran with ``use_theory=False``, so no bound of :mod:`bounds`
took part in the proof); a malformed row raises instead of being skipped.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, cast

from schedules import Instance

from pipebounds.certify.optima import independent_rows

from .registry import CheckResult, Context, check



def optima_rows(pred: Callable[[Instance], bool]) -> list[tuple[Instance, Fraction]]:
    """``(instance, opt)`` for the rows of pipebounds/data/optima.jsonl proven optimal independently of the
    theory (``"independent": true``) that satisfy ``pred``."""
    # only optima proven without the theory's bound count as evidence for it
    return [(inst, opt) for inst, opt, status in table_rows_all()
            if status == "optimal" and pred(inst)]


@check("Every bound on every table row (LB <= OPT; exact flags hold)",
       theorems=("T0", "T1", "T2", "T3", "S1", "S2", "S3", "S4", "MW1", "MW5", "MW6", "MW7", "MW8",
                 "MW8d", "MW9"),
       kind="exhaustive",
       range="every independent row of pipebounds/data/optima.jsonl (single and multi wave, fused and "
             "split, every K)")
def table_rows(ctx: Context) -> CheckResult:
    """No solving: every row of pipebounds/data/optima.jsonl proven optimal without the theory must have
    ``lower_bound <= OPT``, and ``OPT == lower_bound`` wherever exactness is claimed without
    the table (:func:`pipebounds.certify.certify` with ``table=False``: by theorem or checked
    range; certificates are schedules reaching the bound, exact by construction once the bound
    is valid); every row not closed must have ``lower_bound <=`` its incumbent. Reports how
    many rows are flagged exact and are exact."""
    from pipebounds.certify import certify

    fails, n, flagged, tight, worst = [], 0, 0, 0, Fraction(1)
    for inst, opt, status in table_rows_all():
        lb = certify(inst, table=False)
        n += 1
        if lb.value > opt:
            fails.append(f"LB {lb.value} > {'OPT' if status == 'optimal' else 'incumbent'} "
                         f"{opt}: {inst.to_dict()}")
        if status != "optimal":
            continue
        worst = max(worst, opt / lb.value)
        tight += lb.value == opt
        flagged += lb.exact
        if lb.exact and lb.value != opt:
            fails.append(f"claimed exact but LB {lb.value} != OPT {opt}: {inst.to_dict()}")
        for name, value in _terms_claimed_exact(inst):  # each term's own exact claim
            if value != opt:
                fails.append(f"term {name} claimed exact but {value} != OPT {opt}: "
                             f"{inst.to_dict()}")
    detail = (fails[0] if fails else
              f"{n} rows; LB = OPT on {tight} of the closed ones, {flagged} flagged exact "
              f"(all hold)")
    return CheckResult(n, bool(n) and not fails, worst, detail)


def _terms_claimed_exact(inst: Instance) -> list[tuple[str, Fraction]]:
    """The terms of :func:`bounds.lower_bound` whose own theorem claims them equal to the
    optimum of ``inst`` (uniform durations, no delay, no byte budget), with their values: a
    term can be claimed exact without being the maximum (T3 where T3d is larger), and the
    claim must hold all the same."""
    from bounds.evaluate import basic_terms, scaled
    from bounds.multi_wave import terms as multi_wave_terms
    from bounds.multi_wave import v1_terms
    from bounds.single_wave import terms as single_wave_terms

    if not inst.uniform or inst.c or inst.memory is not None:
        return []
    view = cast(Instance, scaled(inst))
    raw = basic_terms(view) + (single_wave_terms(view) + v1_terms(view) if inst.v == 1 else
                               multi_wave_terms(view))
    return [(n, Fraction(x) / inst.unit) for n, x, ex in raw if ex]


def table_rows_all() -> list[tuple[Instance, Fraction, str]]:
    """``(instance, opt or incumbent, status)`` for every independent row with a makespan."""
    return [(Instance.from_dict(row), Fraction(str(row["opt"])), row["status"])
            for row in independent_rows()]
