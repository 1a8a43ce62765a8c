"""Certification: is the lower bound the optimum of this instance, and why.

The layer above :mod:`bounds` (formulas and what theorems prove) and
:mod:`pipebounds.constructions` / :mod:`pipebounds.search` (schedules and solvers): the only place
that combines them. :func:`certify` answers with a :class:`Certification` whose ``basis`` names
the evidence for the optimum, strongest and cheapest first:

``theorem``
    a theorem's proven exact case (:func:`bounds.lower_bound` flags it: a pure condition);
``checked``
    the instance lies in a range where the bound was confirmed equal to the optimum by exact
    search independent of the bound (:data:`CHECKED_RANGES`; scaling every duration scales every
    makespan, so the range covers every multiple of its duration ratios);
``table``
    a row of pipebounds/data/optima.jsonl proven optimal independently of the theory (``"independent":
    true``) has the same instance (durations up to a common factor; ``K >= v m`` reads as
    unconstrained); the optimum is known even when it exceeds the bound;
``certificate``
    a schedule (a construction of :mod:`pipebounds.constructions`, a known family of
    :mod:`schedules.generators` fitted to ``K`` with :func:`schedules.remat.fit_memory`, or one
    the caller passes) is valid, fits ``K`` and its simulated makespan equals the bound: a valid
    bound met by a feasible schedule. Tried only when ``seconds > 0`` (or for the schedules
    given);
``solver``
    an exact solver proved the optimum (:func:`pipebounds.search.solve`, only with ``solver=True``
    and ``seconds > 0``);

or None (nothing known). Lookups (theorem, checked, table) cost microseconds; certificates and
solver proofs are searches and only run when the caller grants the time.

>>> from schedules import Instance
>>> c = certify(Instance(P=4, m=8, K=1, f=1, b=2))
>>> c.value, c.exact, c.basis
(Fraction(36, 1), True, 'checked')
>>> certify(Instance(P=4, m=8, K=4, f=1, b=2)).basis
'theorem'
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from functools import lru_cache
from fractions import Fraction
from typing import Callable, Iterable, Optional

import bounds
from bounds import LowerBound
from schedules.instance import Instance
from schedules.schedule import Schedule

from .optima import independent_rows

BASES = ("theorem", "checked", "table", "certificate", "solver")
"""The possible ``basis`` values (None: the optimum is not known)."""



@dataclass(frozen=True)
class Certification:
    """What is known about the optimum of one instance.

    ``value``: the lower bound; ``exact``: proven equal to the optimum; ``basis``: the evidence
    for ``optimum`` (one of :data:`BASES`, or None when the optimum is unknown); ``optimum``:
    the optimal makespan when known (it can exceed ``value``: then ``exact`` is False);
    ``schedule``: an optimal schedule when one was built (certificate or solver); ``terms``:
    the bound's terms ``(name, value)``; ``theorem``: the theorem id behind a ``theorem`` basis,
    the checked range's id or the certificate's source in ``detail``.
    """

    value: Fraction
    exact: bool
    basis: Optional[str]
    optimum: Optional[Fraction]
    terms: tuple[tuple[str, Fraction], ...]
    schedule: Optional[Schedule] = None
    detail: str = ""

    @property
    def exact_basis(self) -> Optional[str]:
        """``basis`` when the bound is exact, else None (the ``exact_basis`` of CLI.md)."""
        return self.basis if self.exact else None


# --------------------------------------------------------------------------- checked ranges
@dataclass(frozen=True)
class CheckedRange:
    """A range of instances on which the bound equals the optimum, confirmed by exact search
    independent of the bound: ``check`` names the proofs_checks check that re-confirms it (it
    fails when an instance of the range is missing from pipebounds/data/optima.jsonl or has LB != OPT)."""

    id: str
    theorem: str
    description: str
    contains: Callable[[Instance], bool]
    check: str


def _proportional(durs: tuple, grid) -> bool:
    """``durs`` is a positive multiple of some tuple of grid values (same length)."""
    return any(all(g * durs[0] == t[0] * d_ for g, d_ in zip(t, durs))
               for t in itertools.product(grid, repeat=len(durs)))


SINGLE_SLOT_CHECKED: dict = {"P": 5, "m": 8, "durations": (1, 2, 3, 4, 5)}
"""T3 = OPT, fused ``K = 1``, ``v = 1``: ``P <= 5, m <= 8``, every ratio ``f : b`` of two
durations of the grid (docs/theory.md section 5; 637 rows of pipebounds/data/optima.jsonl)."""

SPLIT_SINGLE_SLOT_CHECKED: dict = {"P": 4, "m": 6, "durations": (1, 2, 3)}
"""T3's split form = OPT, ``K = 1``, ``v = 1``: ``P <= 4, m <= 6``, every ratio
``f : b_I : b_W`` of the grid (docs/theory.md section 6)."""


def single_slot_checked(inst: Instance) -> bool:
    """``inst`` lies in the range where T3 (fused or split form) = OPT was confirmed."""
    if inst.K != 1 or inst.c or inst.v != 1:
        return False
    rng = SPLIT_SINGLE_SLOT_CHECKED if inst.split else SINGLE_SLOT_CHECKED
    if inst.P > rng["P"] or inst.m > rng["m"]:
        return False
    durs = (inst.f, inst.b_I, inst.b_W) if inst.split else (inst.f, inst.b)
    return _proportional(durs, rng["durations"])


CHECKED_RANGES: tuple[CheckedRange, ...] = (
    CheckedRange("T3-checked", "T3",
                 "K = 1, v = 1, fused: P <= 5, m <= 8, f : b with f, b in {1..5}; split: "
                 "P <= 4, m <= 6, f : b_I : b_W with each in {1, 2, 3}",
                 single_slot_checked, "proofs_checks.single_wave.single_slot_table"),
)


def checked_range(inst: Instance) -> Optional[CheckedRange]:
    """The checked range containing ``inst``, or None."""
    for rng in CHECKED_RANGES:
        if rng.contains(inst):
            return rng
    return None


# --------------------------------------------------------------------------- the table
_TABLE: Optional[dict] = None


def table_key(P: int, m: int, K: Optional[int], stage_to_rank: tuple, f: Fraction,
              b: Fraction, b_I: Optional[Fraction], b_W: Optional[Fraction],
              c: Fraction) -> tuple:
    """The instance up to a common factor of its durations (divided by ``f``), with ``K >= v m``
    read as unconstrained (a GPU never holds more than its ``v m`` activations)."""
    v = len(stage_to_rank) // P
    if K is not None and K >= v * m:
        K = None
    return (P, m, K, stage_to_rank, b / f,
            None if b_I is None else b_I / f, None if b_W is None else b_W / f, c / f)


def _key(inst: Instance) -> tuple:
    return table_key(inst.P, inst.m, inst.K, inst.stage_to_rank, inst.f, inst.b, inst.b_I,
                     inst.b_W, inst.c)


def _number(x) -> Fraction:
    if isinstance(x, str) and x.isdigit():
        x = int(x)
    return Fraction(x) if isinstance(x, int) else Fraction(str(x))


@lru_cache(maxsize=None)
def _placement(P: int, v: int, placement: str) -> tuple[int, ...]:
    from schedules.instance import placement_stage_to_rank

    return placement_stage_to_rank(P, v, placement)


def _row_key(row: dict) -> tuple[tuple, Fraction]:
    """:func:`table_key` of a table row and its ``f`` (rows are ``Instance.to_dict()``, read
    without building an Instance: the table loads in milliseconds)."""
    P, m, v = row["P"], row["m"], row.get("v", 1)
    s2r = (tuple(row["stage_to_rank"]) if row.get("stage_to_rank") is not None
           else _placement(P, v, row.get("placement") or "looped"))
    f = _number(row.get("f", 1))
    b_I: Optional[Fraction] = None
    b_W: Optional[Fraction] = None
    if row.get("b_input") is not None:  # split
        b_I, b_W = _number(row["b_input"]), _number(row["b_weight"])
        b = b_I + b_W
    else:
        b = _number(row.get("b", 2))
    K = row.get("K")
    K = None if K in (None, "inf") else int(K)
    return table_key(P, m, K, s2r, f, b, b_I, b_W, _number(row.get("c", 0))), f


def optima_table() -> dict:
    """``{table_key: optimum / f}`` of the rows of pipebounds/data/optima.jsonl proven optimal independently
    of the theory (``"status": "optimal"``, ``"independent": true``; the last line of an
    instance wins). Read once per process."""
    global _TABLE
    if _TABLE is None:
        table: dict = {}
        for row in independent_rows():
            key, f = _row_key(row)
            if row.get("status") == "optimal":
                table[key] = _number(row["opt"]) / f
            else:
                table.pop(key, None)
        _TABLE = table
    return _TABLE


_INT_INDEX: Optional[dict] = None


def int_key(P: int, m: int, K: Optional[int], v: int, vshape: bool, f: int, b: int,
            b_I: int, b_W: int) -> tuple:
    """The table key of a named-placement instance with integer durations and no delay, as
    integers (durations divided by their gcd; ``b_I = b_W = 0`` fused; ``K >= v m`` read as
    unconstrained, 0): hashing it is cheap, for batches (:func:`optimum_by_int_key`)."""
    from math import gcd

    g = gcd(gcd(f, b), gcd(b_I, b_W))
    if K is not None and (K == 0 or K >= v * m):
        K = 0
    return (P, m, K or 0, v, bool(vshape) and v > 1, f // g, b // g, b_I // g, b_W // g), g


def table_sizes() -> set[tuple[int, int]]:
    """The ``(P, m)`` of the instances in pipebounds/data/optima.jsonl (a quick filter before a lookup)."""
    return {(k[0], k[1]) for k in optima_table()}


def optimum_by_int_key(key: tuple, g: int) -> Optional[Fraction]:
    """The table optimum for an :func:`int_key` (``g`` its gcd), or None."""
    global _INT_INDEX
    if _INT_INDEX is None:
        index = {}
        for k, opt in optima_table().items():
            P, m, K, s2r, b, b_I, b_W, c = k
            durs = (Fraction(1), b, b_I or Fraction(0), b_W or Fraction(0))
            if c or len(s2r) % P:
                continue
            v = len(s2r) // P
            named = [pl for pl in ("looped", "vshape") if s2r == _placement(P, v, pl)]
            if not named:
                continue
            from math import lcm

            u = lcm(*(d.denominator for d in durs))
            ints = [int(d * u) for d in durs]
            ik, gi = int_key(P, m, K, v, named[0] == "vshape", *ints)
            index[ik] = opt * u / gi        # the optimum for durations ints / gi (f = u / gi)
        _INT_INDEX = index
    opt = _INT_INDEX.get(key)
    return None if opt is None else opt * g


def table_optimum(inst: Instance) -> Optional[Fraction]:
    """The optimum of ``inst`` from pipebounds/data/optima.jsonl (scaled to its durations), or None."""
    opt = optima_table().get(_key(inst))
    return None if opt is None else opt * inst.f


# --------------------------------------------------------------------------- certificates
NODES_PER_SECOND = 10_000
"""Node budget per second of the ``K = 1`` bounded search (a conservative rate on a loaded
core: docs/theory.md measured about 20,000)."""


def reaches(sched: Schedule, inst: Instance, target: Fraction, result=None) -> bool:
    """``sched`` (for ``inst``'s pipeline) is valid, fits ``inst.K`` and has makespan
    ``target``. ``result``: its :class:`~schedules.simulate.SimulationResult` when the caller
    has simulated it already."""
    from schedules.simulate import simulate

    res = result if result is not None else simulate(sched.with_instance(inst))
    if not res.valid or res.makespan != target or res.peak_memory is None:
        return False
    return inst.K is None or max(res.peak_memory) <= inst.K


def _candidates(inst: Instance, deadline: float) -> Iterable[tuple[Schedule, str]]:
    """Schedules to try as certificates, cheapest first: the construction of the exact cases
    (:func:`pipebounds.constructions.optimal_schedule`; at ``K = 1`` the bounded search with a
    node budget from the time left), then every known family fitted to ``K``."""
    from pipebounds.constructions import optimal_schedule
    from pipebounds.constructions.single_wave import single_slot_schedule
    from schedules.generators import GENERATORS, generate
    from schedules.remat import fit_memory

    if inst.v == 1 and inst.K == 1 and not inst.split and not inst.c:
        # the bounded search runs about NODES_PER_SECOND nodes a second: a budget from the
        # time left, at most its default 2000 P m; the list family only with time to spare
        left = max(0.0, deadline - time.monotonic())
        nodes = max(1, min(int(left * NODES_PER_SECOND), 2000 * inst.P * inst.m))
        sched = single_slot_schedule(inst, nodes=nodes, quick=left < 10)
    else:
        sched = optimal_schedule(inst)
    if sched is not None:
        yield sched, sched.source or "construction"
    for name in GENERATORS:
        if time.monotonic() > deadline:
            return
        try:
            base = generate(name, inst.with_(K=None))
        except ValueError:
            continue
        yield (fit_memory(base.with_instance(inst), inst.K) if inst.K is not None else base), name


def certificate(inst: Instance, target: Fraction, seconds: float,
                schedules: Iterable = ()) -> Optional[tuple[Schedule, str]]:
    """A schedule reaching ``target`` (the bound) within ``seconds``: the given ``schedules``
    (each a Schedule or ``(Schedule, SimulationResult)``), then :func:`_candidates`."""
    for item in schedules:
        sched, res = item if isinstance(item, tuple) else (item, None)
        if reaches(sched, inst, target, res):
            return sched, sched.source or "given schedule"
    if seconds <= 0:
        return None
    deadline = time.monotonic() + seconds
    for sched, source in _candidates(inst, deadline):
        if reaches(sched, inst, target):
            return sched, source
        if time.monotonic() > deadline:
            break
    return None


# --------------------------------------------------------------------------- certify
def certify(inst: Instance, seconds: float = 0, schedules: Iterable = (), table: bool = True,
            solver: bool = False, lb: Optional[LowerBound] = None) -> Certification:
    """Is the lower bound of ``inst`` its optimum, and why (module docstring).

    ``seconds``: time it may spend on certificates (and the solver); 0 (the default) uses the
    lookups only and never searches. ``schedules``: schedules the caller already has (each a
    Schedule or ``(Schedule, SimulationResult)``), tried as certificates at no search cost.
    ``table``: use pipebounds/data/optima.jsonl (a check of the table itself passes False). ``solver``:
    after the certificates, run the exact solver for the time left. ``lb``: the bound when the
    caller has computed it.
    """
    lb = lb if lb is not None else bounds.lower_bound(inst)
    value = lb.value

    def answer(basis, optimum, schedule=None, detail=""):
        return Certification(value, optimum == value, basis, optimum, lb.terms, schedule,
                             detail)

    if lb.exact:
        return answer("theorem", value, detail=lb.theorem or "")
    # the checked ranges and the table hold uniform instances without delay or byte budget only
    standard = inst.uniform and not inst.c and inst.memory is None
    if standard:
        rng = checked_range(inst)
        if rng is not None:
            return answer("checked", value, detail=rng.id)
    known = table_optimum(inst) if table and standard else None
    if known is not None:  # the optimum: no schedule can reach a bound below it
        return answer("table", known, detail="optima.jsonl")
    start = time.monotonic()
    found = certificate(inst, value, seconds, schedules)
    if found is not None:
        return answer("certificate", value, found[0], found[1])
    left = seconds - (time.monotonic() - start)
    if solver and left > 0:
        from pipebounds.search import solve

        res = solve(inst, time_limit=left)
        if res.status == "optimal" and res.makespan is not None:
            return answer("solver", res.makespan, res.schedule, res.engine)
    return Certification(value, False, None, None, lb.terms)


__all__ = ["BASES", "CHECKED_RANGES", "CheckedRange", "Certification", "certificate", "certify",
           "checked_range", "optima_table", "reaches", "single_slot_checked", "table_key",
           "table_optimum", "SINGLE_SLOT_CHECKED", "SPLIT_SINGLE_SLOT_CHECKED"]
