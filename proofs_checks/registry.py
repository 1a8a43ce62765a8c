"""The registry of theorems and of their machine checks.

:data:`THEOREMS` has one :class:`Theorem` per theorem id of docs/theory.md and
docs/theory_multiwave.md (T0, T1, ..., MW9): its bound function in :mod:`bounds`, its exact case
(a pure condition, or None), its section of the docs. The id is the one ``pipebounds bound``
prints beside each term (:data:`bounds.evaluate.TERM_IDS`); tests/test_registry.py fails when a
theorem of the docs has no entry, no bound or no check.

A check module (listed in :data:`proofs_checks.CHECK_MODULES`) registers its checks with the
:func:`check` decorator, naming the theorems it checks::

    @check("Theorem 1 (fill-drain bound)", theorems=("T1",), kind="symbolic",
           range="all P, m >= 1, f, b > 0")
    def fill_drain_reduces_at_large_K(ctx: Context) -> CheckResult:
        ...

``kind`` is ``symbolic`` (sympy proves an identity or inequality a proof relies on) or
``exhaustive`` (over a declared range of small instances: LB <= OPT from the exact search, and
LB = OPT wherever exactness is claimed). ``range`` may depend on the mode: give a dict
``{"quick": "...", "full": "..."}``. The function receives a :class:`Context` (mode and worker
count) and returns a :class:`CheckResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Optional, Union

MODES = ("quick", "full")


@dataclass(frozen=True)
class Context:
    """How a check runs: ``mode`` is ``quick`` (CI) or ``full``; ``workers`` processes."""

    mode: str = "quick"
    workers: int = 1
    scheduler: Optional[str] = None  # a Dask scheduler address: run the exhaustive checks there


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check.

    ``instances``: how many instances (or symbolic cases) were checked; ``worst_gap``: the
    largest OPT/LB seen (None for symbolic checks); ``ok``: whether every assertion held;
    ``detail``: counterexamples or notes (the first failing instance when not ok).
    """

    instances: int
    ok: bool
    worst_gap: Optional[Fraction] = None
    detail: str = ""


@dataclass(frozen=True)
class Check:
    theorem: str
    kind: str
    ranges: dict
    func: Callable[[Context], CheckResult] = field(repr=False)
    name: str = ""
    theorems: tuple[str, ...] = ()

    def range_for(self, mode: str) -> str:
        return self.ranges.get(mode, self.ranges.get("quick", ""))


CHECKS: list[Check] = []


def check(theorem: str, kind: str, range: Union[str, dict], theorems: tuple[str, ...] = ()):
    """Register the decorated function as the check of ``theorem`` (a title); ``theorems``: the
    ids of :data:`THEOREMS` it checks."""
    if kind not in ("symbolic", "exhaustive"):
        raise ValueError(f"check kind must be symbolic or exhaustive, got {kind!r}")
    unknown = [t for t in theorems if t not in THEOREMS]
    if unknown:
        raise ValueError(f"check {theorem!r} names unknown theorem ids {unknown}")
    ranges = {"quick": range, "full": range} if isinstance(range, str) else dict(range)

    def deco(func: Callable[[Context], CheckResult]):
        CHECKS.append(Check(theorem, kind, ranges, func, f"{func.__module__}.{func.__name__}",
                            tuple(theorems)))
        return func

    return deco


# --------------------------------------------------------------------------- theorems
@dataclass(frozen=True)
class Theorem:
    """One theorem of the docs. ``bound``: the function of :mod:`bounds` evaluating it for an
    instance (None for a lemma without a bound of its own, such as MW0); ``exact``: the pure
    condition under which it is proven equal to the optimum (None: never claimed); ``doc``:
    ``file#section heading`` where it is stated and proven; ``terms``: the names of the
    :func:`bounds.lower_bound` terms that evaluate it."""

    id: str
    title: str
    doc: str
    bound: Optional[Callable] = field(default=None, repr=False)
    exact: Optional[Callable] = field(default=None, repr=False)
    terms: tuple[str, ...] = ()
    lemma: bool = False


def _theorems() -> dict[str, Theorem]:
    from bounds import evaluate as ev
    from bounds import heterogeneous as het
    from bounds import multi_wave as mw
    from bounds import single_wave as sw

    T, M = "docs/theory.md#", "docs/theory_multiwave.md#"
    H = "A.9 Per-stage costs and communication (H1–H3)"

    def t0(inst):
        return max(x for _, x, _ in ev.basic_terms(inst))

    def mw8(inst):
        vals = [x for x in (mw.forced_remat_value(inst), mw.vshape_forced_remat_value(inst))
                if x is not None]
        return max(vals) if vals else None

    entries = [
        Theorem("T0", "work and chain", T + "A.3 Theorem 0 (work and chain)", t0,
                lambda i: i.m == 1 and i.v == 1 and not i.c, ("work", "critical_path")),
        Theorem("T1", "fill-drain", T + "A.4 Theorem 1 (fill-drain) and 1F1B",
                sw.fill_drain_value,
                lambda i: sw.nonbinding_memory(i) or sw.single_group_exact(i), ("fill_drain",)),
        Theorem("T2", "memory-time", T + "A.5 Theorem 2 (memory-time, any `K`)",
                sw.memory_time_value, None, ("memory_time",)),
        Theorem("T3", "single slot (fused and split forms)",
                T + "A.6 Theorem 3 (single slot, `K = 1`)", sw.single_slot_value,
                sw.single_slot_exact, ("single_slot",)),
        Theorem("T3d", "coupled single slot (adjacent GPUs through the first hold)",
                T + "A.6 Theorem 3 (single slot, `K = 1`)", sw.coupled_slot_value, None,
                ("single_slot_coupled",)),
        Theorem("S1", "split drain", T + "A.7 Split backward (`I` + `W`)", sw.split_drain_value,
                None, ("split_drain",)),
        Theorem("S2", "split first input-gradient", T + "A.7 Split backward (`I` + `W`)",
                sw.split_first_input_value, None, ("split_first_input",)),
        Theorem("S3", "split memory-time", T + "A.7 Split backward (`I` + `W`)",
                sw.split_memory_time_value, None, ("split_memory_time",)),
        Theorem("MW0", "time reversal (lemma)", M + "B.2 MW0 (time reversal)", lemma=True),
        Theorem("MW1", "GPU subset", M + "B.3 MW1 and its closed-form sets", mw.gpu_subset_value, None,
                ("mw_gpu_subset",)),
        Theorem("MW2", "fill-drain", M + "B.3 MW1 and its closed-form sets", mw.fill_drain_value, None,
                ("mw_fill_drain",)),
        Theorem("MW3", "last stage", M + "B.3 MW1 and its closed-form sets", mw.last_stage_value, None,
                ("mw_last_stage",)),
        Theorem("MW4", "vshape adjacent pair", M + "B.3 MW1 and its closed-form sets",
                mw.vshape_pair_value, None, ("mw_vshape_pair",)),
        Theorem("MW5", "looped optimum", M + "B.4 MW5 (looped optimum)",
                mw.looped_opt_value, lambda i: mw.exact_case(i) == "looped", ("mw_looped_opt",)),
        Theorem("MW6", "vshape optimum (v = 2)", M + "B.5 MW6 (vshape, `v = 2`)",
                mw.vshape_opt_value, lambda i: mw.exact_case(i) == "vshape", ("mw_vshape_opt",)),
        Theorem("MW7", "memory slots", M + "B.6 Memory",
                mw.memory_slots_value, None, ("mw_memory_slots",)),
        Theorem("MW8", "forced recomputation", M + "B.6 Memory", mw8,
                None, ("mw_forced_remat", "mw_vshape_forced_remat")),
        Theorem("MW8d", "one microbatch at K = 1 (exact)",
                M + "B.6 Memory", mw.gpu_subset_value,
                mw.single_microbatch_exact, ("mw_gpu_subset",)),
        Theorem("H1", "per-GPU work, per-stage costs", T + H, het.work, None, ("hetero_work",)),
        Theorem("H2", "chain with delays", T + H, het.chain, het.chain_exact, ("hetero_chain",)),
        Theorem("H3", "fill-drain per GPU, per-stage costs", T + H,
                lambda i: max(x for _, x in het.fill_drain(i)), None,
                ("hetero_fill_drain", "hetero_fill_drain_input")),
        Theorem("T3b", "T3 exact for P <= 2 (construction)",
                T + "A.6 Theorem 3 (single slot, `K = 1`)", sw.single_slot_value,
                lambda i: i.v == 1 and i.K == 1 and i.P <= 2, lemma=True),
        Theorem("T3c", "one activation suffices for m <= 2 + b/f (construction)",
                T + "A.4 Theorem 1 (fill-drain) and 1F1B", sw.fill_drain_value,
                sw.single_group_exact, lemma=True),
        Theorem("MW6a", "vshape periodic construction (f = b)", M + "B.5 MW6 (vshape, `v = 2`)",
                mw.vshape_opt_value, None, lemma=True),
        Theorem("MW6b", "vshape m <= P construction", M + "B.5 MW6 (vshape, `v = 2`)",
                mw.vshape_pair_value, None, lemma=True),
        Theorem("MW8a", "forced recomputation, K < v", M + "B.6 Memory", mw.forced_remat_value,
                None, lemma=True),
        Theorem("MW8b", "forced recomputation, vshape K = 1", M + "B.6 Memory",
                mw.vshape_forced_remat_value, None, lemma=True),
        Theorem("MW8c", "MW1 with the forced-recomputation chains (K = 1)", M + "B.6 Memory",
                mw.gpu_subset_value, None, lemma=True),
        Theorem("MW9", "single slot per GPU", M + "B.6 Memory",
                mw.single_slot_value, None, ("mw_single_slot",)),
    ]
    return {t.id: t for t in entries}


THEOREMS: dict[str, Theorem] = _theorems()
"""Theorem id -> :class:`Theorem`, one entry per theorem of the docs."""


def checks_of(theorem_id: str) -> list[Check]:
    """The registered checks that name ``theorem_id`` (load the check modules first:
    :func:`proofs_checks.load_checks`)."""
    return [c for c in CHECKS if theorem_id in c.theorems]
