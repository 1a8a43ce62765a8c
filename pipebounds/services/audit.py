"""An auditor of published claims about pipeline schedules (REFERENCES.md, docs/claims.md).

Each :class:`Claim` states a published figure of a known schedule, the definition it uses
(``makespan``: the global makespan ``T``, bubble ``T - v m (f + b)``; ``span``: per-rank
span, bubble ``max_p (span_p - busy_p)``; ``memory``: peak live stage activations;
``orders``: a property of the op orders), the grid of instances the source's statement
covers (``stated``), and, where our measurements found the figure to hold only under extra
conditions, those conditions (``holds_if``). :func:`audit` builds every schedule of the grid
with :mod:`schedules.generators`, times it with :func:`schedules.simulate.simulate` (exact
Fractions), and gives the verdict:

* ``holds``: the figure is right on every instance of the grid;
* ``holds_on_range``: right on every instance satisfying ``holds_if`` (the ``range``), wrong
  on some outside it;
* ``false``: wrong on some instance the source's statement covers and our ``holds_if`` does
  not exclude (or no ``holds_if``).

The counterexample is the smallest failing instance (by ``P``, ``m``, ``v``, then total
duration) as an orders document that carries ``claimed`` and ``measured``:
``pipebounds simulate`` reproduces the measured value from it.

A claim about the *steady state* (a bubble that repeats with every microbatch, as opposed to
the warm-up and cool-down) has a ``companion``: the same instance with more microbatches. Its
``measure`` then takes both simulations, and the steady-state bubble per microbatch is the
growth of the per-rank bubble between them (:func:`repeating_bubble`); the counterexample
document carries the companion's orders document under the key ``companion``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from itertools import product
from typing import Callable, Optional

from schedules.generators import generate
from schedules.instance import Instance
from schedules.io import document_from_schedule
from schedules.json_numbers import exact_string, number
from schedules.progress import Progress, instance_weight, progress_for
from schedules.simulate import SimulationResult, simulate

VERDICTS = ("holds", "holds_on_range", "false")


# ----------------------------------------------------------------------------- measures
def global_bubble(r: SimulationResult) -> Fraction:
    """``T - v m (f + b)``: makespan minus one GPU's work."""
    inst = r.schedule.instance
    return r.makespan - inst.v * inst.m * (Fraction(inst.f) + Fraction(inst.b))


def spans(r: SimulationResult) -> list[Fraction]:
    """Per GPU, from its first op's start to its last op's end."""
    return [Fraction(max(e) - min(s), r.unit) for s, e in zip(r.start, r.end)]


def rank_bubble(r: SimulationResult) -> Fraction:
    """``max_p (span_p - busy_p)``: the per-rank bubble the zero-bubble papers report."""
    return max(sp - busy for sp, busy in zip(spans(r), r.busy))


def repeating_bubble(r: SimulationResult, r2: SimulationResult) -> Fraction:
    """Bubble added by each extra microbatch from ``r`` to ``r2`` (same instance, more
    microbatches), largest over the ranks: ``max_p (idle_p(r2) - idle_p(r)) / (m2 - m)`` with
    ``idle_p = span_p - busy_p``. Zero iff (once the steady state has appeared in ``r``) no
    rank idles in the steady state."""
    dm = r2.schedule.instance.m - r.schedule.instance.m
    idle = [[sp - busy for sp, busy in zip(spans(x), x.busy)] for x in (r, r2)]
    return max(b - a for a, b in zip(*idle)) / dm


def warmup_forwards(r: SimulationResult, p: int) -> int:
    """Forwards GPU ``p`` runs before its first backward op (its warm-up plus the first
    forward of the steady state, whose steps are forward then backward)."""
    n = 0
    for op in r.schedule.orders[p]:
        if op.kind in ("B", "I"):
            break
        n += op.kind == "F"
    return n


# ----------------------------------------------------------------------------- claims
@dataclass(frozen=True)
class Claim:
    """``measure(result) -> value``; ``claimed(inst) -> value``; ``compare`` says whether the
    measured value satisfies the claim (default: equal). With ``companion`` (an instance ->
    the larger instance to compare with), ``measure(result, companion_result)``. With
    ``of_instance`` the claim is about the instance itself (a bound against the proven
    optimum), ``measure(inst)`` times no schedule, and the counterexample document carries
    ``generator``'s valid schedule of the failing instance."""

    id: str
    claim: str
    source: str
    definition: str
    generator: str
    stated: str
    grid: Callable[[], list[Instance]]
    measure: Callable[[SimulationResult], object]
    claimed: Callable[[Instance], object]
    compare: Callable[[object, object], bool] = lambda measured, claimed: measured == claimed
    holds_if: Optional[Callable[[Instance], bool]] = None
    holds_if_text: str = ""
    note: str = ""
    companion: Optional[Callable[[Instance], Instance]] = None
    of_instance: bool = False


def _split_grid(Ps, ms_of, durs, v=1, placement="looped"):
    def grid():
        out = []
        for P in Ps:
            for m in ms_of(P):
                for f, bi, bw in durs:
                    out.append(Instance(P=P, m=m, v=v, placement=placement, f=f, b_I=bi, b_W=bw))
        return out
    return grid


def _fused_grid(Ps, ms_of, durs, v=1, placement="looped"):
    def grid():
        return [Instance(P=P, m=m, v=v, placement=placement, f=f, b=b)
                for P in Ps for m in ms_of(P) for f, b in durs]
    return grid


TRIPLES = tuple(product((1, 2, 3), repeat=3))
EQUAL = ((1, 1, 1),)
PAIRS = ((1, 1), (1, 2), (2, 1), (1, 3))


TWOS = tuple(product((1, 2), repeat=3))
V_STATED_2P = "P 2..6, m 2P..3P, f, b_I, b_W in {1,2}"
V_GRID_2P = _split_grid(range(2, 7), lambda P: (2 * P, 3 * P), TWOS, v=2, placement="vshape")
V_STATED_3P = "P 2..8, m = 3P, f, b_I, b_W in {1,2}"
V_GRID_3P = _split_grid(range(2, 9), lambda P: (3 * P,), TWOS, v=2, placement="vshape")


def _v_memory(name: str, label: str, microbatches: Callable[[int], int], formula: str) -> Claim:
    """V-Half / V-Min: peak at most ``2 microbatches(P)`` stage activations."""
    return Claim(f"{name}-memory", f"{label} holds {formula} microbatches of activations "
                 f"(2·({formula}) stage activations)", "Qi et al. (NeurIPS 2024)", "memory",
                 name, V_STATED_3P, V_GRID_3P, lambda r: max(r.peak_memory),
                 lambda i: 2 * microbatches(i.P), compare=lambda a, c: a <= c,
                 holds_if=lambda i: i.f == i.b_I == i.b_W, holds_if_text="f = b_I = b_W",
                 note=f"the building-block {label} of schedules.generators")


def zb_condition(inst: Instance) -> bool:
    """The controllable-memory paper's condition ``W + 2B >= 2F`` and ``W + 2F >= 2B``
    (``B``: input gradient ``b_I``, ``W``: weight gradient ``b_W``)."""
    return inst.b_W + 2 * inst.b_I >= 2 * inst.f and inst.b_W + 2 * inst.f >= 2 * inst.b_I


def _condition_grid(Ps, satisfied: bool, durs=TRIPLES):
    """``v = 2`` vshape, ``m = 3P``, split ``(f, b_I, b_W)`` in ``durs`` that satisfy
    (``satisfied``) or violate :func:`zb_condition`."""
    def grid():
        return [i for i in _split_grid(Ps, lambda P: (3 * P,), durs, v=2, placement="vshape")()
                if zb_condition(i) == satisfied]
    return grid


def _steady(r: SimulationResult, r2: SimulationResult):
    """(steady-state per-rank bubble per microbatch, peak stage activations of both runs)."""
    return repeating_bubble(r, r2), max(max(r.peak_memory), max(r2.peak_memory))


def _plus_p(inst: Instance) -> Instance:
    return inst.with_(m=inst.m + inst.P)


CONDITION_READING = (
    "reading: the paper (and its playground's description: '1/2 memory to create zero bubble "
    "schedule in realistic scenarios (with the necessary condition being W + 2B >= 2F and "
    "W + 2F >= 2B)') means zero bubble in the steady state (no bubble repeating with every "
    "microbatch; V-Half keeps a warm-up/cool-down bubble of about half of 1F1B's) with the "
    "per-rank span definition of its bubble rate (1 - m(F+B+W) / longest stage time); "
    "measured here as the growth of the per-rank bubble from m = 3P to m = 4P, divided by P, "
    "with the peak memory of both runs")


def _v_condition(name: str, label: str, microbatches: Callable[[int], int], formula: str,
                 necessary: bool) -> Claim:
    """The zero-bubble condition, as a sufficient condition (on rows satisfying it) or as a
    necessary one (on rows violating it: no zero steady-state bubble within the memory)."""
    def mem(i: Instance) -> int:
        return 2 * microbatches(i.P)

    if necessary:
        return Claim(
            f"{name}-condition-necessary",
            f"zero steady-state bubble at {label}'s memory ({formula} microbatches = "
            f"2·({formula}) stage activations) needs W + 2B >= 2F and W + 2F >= 2B: rows "
            f"violating it keep a repeating bubble",
            "Qi et al. (NeurIPS 2024); huggingface.co/spaces/sail/pipeline-parallelism-with-"
            "controllable-memory", "span", name,
            "P 3..8, m = 3P vs 4P, f, b_I, b_W in {1,2,3} violating the condition",
            _condition_grid(range(3, 9), False), _steady,
            lambda i: ("> 0", mem(i)), compare=lambda a, c: a[0] > 0 or a[1] > c[1],
            companion=_plus_p,
            note=CONDITION_READING + f"; a counterexample is a schedule of the building-block "
                 f"{label} of schedules.generators with no repeating bubble and peak memory "
                 f"within 2·({formula}) stage activations although the condition fails: the "
                 f"condition is then not necessary (P = 2 is left out: there {formula} "
                 f"microbatches is 1F1B's P)")
    return Claim(
        f"{name}-condition-sufficient",
        f"{label} ({formula} microbatches) has zero steady-state bubble when W + 2B >= 2F "
        f"and W + 2F >= 2B", "Qi et al. (NeurIPS 2024)", "span", name,
        "P 2..8, m = 3P vs 4P, f, b_I, b_W in {1,2,3} satisfying the condition",
        _condition_grid(range(2, 9), True), _steady,
        lambda i: (Fraction(0), mem(i)), compare=lambda a, c: a[0] == 0 and a[1] <= c[1],
        holds_if=lambda i: i.f == i.b_I == i.b_W, holds_if_text="f = b_I = b_W",
        companion=_plus_p,
        note=CONDITION_READING + f"; the paper states the condition as necessary only, so "
             f"this sufficiency reading is a property of the building-block {label} of "
             f"schedules.generators (a greedy block, not the paper's hand-tuned offsets), "
             f"not a published claim")


def _interleaved_grid():
    return [Instance(P=P, m=m, v=v, f=1, b=2) for P in range(2, 6) for v in (2, 3, 4)
            for m in range(P, 3 * P + 1)]


def _zb2p_grid():
    return [Instance(P=P, m=m, v=v, f=1, b_I=1, b_W=1) for P in range(2, 5)
            for v in range(2, 7) for m in (2 * P, 3 * P)]


def first_rank_idle_bound(inst: Instance, K: int) -> Fraction:
    """A lower bound on the idle time inside GPU 0's span, for every schedule of ``inst``
    (``v = 1``, uniform costs, no recompute) with at most ``K`` live activations per GPU:
    ``max(0, P f + (P-1) b_I - min(K, m) f)``.

    Proof. GPU 0's first op starts at ``t0`` and is a forward. Every input-gradient op
    ``I(j,0)`` waits for the chain ``F(j,0..P-1)``, ``I(j,P-1..1)``, and ``F(j,0)`` starts at
    ``t0`` or later, so GPU 0 runs no ``I`` before ``t0 + P f + (P-1) b_I``. Before its first
    ``I`` it can run only forwards (a ``W`` follows its ``I``), and each of them stores an
    activation released by its ``W``, after that ``I``: at most ``min(K, m)`` forwards, busy
    ``min(K, m) f``; GPU 0 idles the rest of that window, which lies inside its span. The
    per-rank bubble ``max_p (span_p - busy_p)`` is therefore at least this bound. (With
    recompute a forward need not store, and the bound does not apply.)"""
    f, bi = Fraction(inst.f), Fraction(inst.b_I)
    return max(Fraction(0), inst.P * f + (inst.P - 1) * bi - min(K, inst.m) * f)


# the V100 transformer block profiled by topal-team/elf (REFERENCES.md), f : b_I : b_W
PROFILED = ((1157, 1330, 1023),)


def _zb2p_bubble_grid():
    return _split_grid(range(2, 7), lambda P: (2 * P, 3 * P), TRIPLES)()


def _zb2p_bound_grid():
    return _split_grid(range(2, 9), lambda P: (2 * P, 3 * P), TRIPLES + PROFILED)()


def _dualpipe_claimed(inst: Instance) -> Fraction:
    # (PP/2 - 1)(F&B + B - 3W) with PP = 2P stages, F&B = f + b (run as F then B here),
    # B = b_I + b_W, W = b_W
    return (inst.P - 1) * (inst.f + inst.b + inst.b - 3 * inst.b_W)


# ------------------------------------------------------------ issue 24: what the systems claim
def transfers(r: SimulationResult) -> int:
    """Point-to-point transfers of one iteration: an activation forward and a gradient back
    across every stage boundary ``s, s+1`` held by two different GPUs, per microbatch."""
    inst = r.schedule.instance
    cross = sum(1 for s in range(inst.S - 1) if inst.gpu(s) != inst.gpu(s + 1))
    return 2 * inst.m * cross


def one_f_one_b_bubble(inst: Instance) -> Fraction:
    """1F1B's global bubble on the same model (its stage holds the ``v`` stages of a GPU:
    durations ``v f, v b``): ``(P-1) v (f + b)``."""
    return (inst.P - 1) * inst.v * (inst.f + inst.b)


def bubble_over_1f1b(r: SimulationResult) -> Fraction:
    return global_bubble(r) / one_f_one_b_bubble(r.schedule.instance)


def _remat_pair(r: SimulationResult) -> tuple:
    """``(adjacent, anywhere)``: optimal makespans of the order's recomputation with every
    recompute right before its backward, and anywhere between its forward and its backward
    (:func:`schedules.remat_optimal.optimal_remat`, proven)."""
    from schedules.remat_optimal import optimal_remat

    K = r.schedule.instance.K
    out = []
    for positions in ("adjacent", "anywhere"):
        res = optimal_remat(r.schedule, K=K, positions=positions, time_limit=20)
        if res.status != "optimal":
            raise AssertionError(f"optimal_remat did not prove {positions} for "
                                 f"{r.schedule.instance}: {res.status}")
        out.append(res.makespan)
    return tuple(out)


def _remat_grid():
    return [Instance(P=P, m=2 * P, K=K, f=1, b=2) for P in (2, 3, 4) for K in (1, 2, 3)]


def _comm_grid():
    return [Instance(P=P, m=m, v=2, placement="vshape", b_I=1, b_W=1)
            for P in range(2, 6) for m in (2 * P, 3 * P)]


def _interleaved_bubble_grid():
    return [Instance(P=P, m=m, v=v, f=1, b=2) for P in (2, 3, 4) for v in (2, 3)
            for m in range(2, 3 * P + 1)]


def _dualpipe_fb_grid():
    return [Instance(P=P, m=m, v=2, placement="vshape", b_I=1, b_W=1, d_FB=d)
            for P in (2, 3, 4) for m in (2 * P, 3 * P)
            for d in (Fraction(3, 2), Fraction(2), Fraction(5, 2), Fraction(3))]


# ------------------------------------------- issue 24: optimality, balance, exactness at K = 1
def proven_optimum(r: SimulationResult) -> Fraction:
    """The optimum of ``r``'s instance, proven: :func:`pipebounds.certify.certify` (a theorem's
    exact case, a checked range, a row of the optima table proven with ``use_theory=False``)
    or ``r``'s own schedule meeting the proven lower bound (a certificate: it is valid and fits
    ``K``, so ``OPT <= makespan = LB <= OPT``). The optimum allows recomputation, so a
    schedule without it that reaches the optimum is optimal among those without it too.
    ``AssertionError`` when none of them knows the optimum (a grid must hold only decided
    instances)."""
    from pipebounds.certify import certify

    cert = certify(r.schedule.instance, schedules=[(r.schedule, r)])
    if cert.optimum is None:
        raise AssertionError(f"no proven optimum for {r.schedule.instance}")
    return cert.optimum


def _zb2p_optimal_grid():
    return [Instance(P=P, m=m, K=2 * P, f=f, b_I=bi, b_W=bw) for P in range(2, 5)
            for m in range(P, 3 * P + 1) for f, bi, bw in TRIPLES]


UNBALANCED = tuple(d for d in TRIPLES if len(set(d)) > 1) + PROFILED
"""The ``(f, b_I, b_W)`` of the balance claims: every unequal triple of ``{1,2,3}`` and the
profiled V100 ratio."""


@lru_cache(maxsize=None)
def _balanced_repeating(name: str, P: int, m: int) -> Fraction:
    """``name``'s steady-state bubble per microbatch (:func:`repeating_bubble`, ``m`` to
    ``m + P``) at ``f = b_I = b_W = 1``."""
    inst = Instance(P=P, m=m, v=2, placement="vshape", f=1, b_I=1, b_W=1)
    return repeating_bubble(simulate(generate(name, inst)),
                            simulate(generate(name, _plus_p(inst))))


def _unbalanced_grid():
    return _split_grid(range(2, 7), lambda P: (3 * P,), UNBALANCED, v=2, placement="vshape")()


BALANCE_READING = (
    "reading: 'degrades' as a bubble that repeats with every microbatch (the steady state "
    "of the building block, as in the condition claims above: the growth of the per-rank "
    "bubble from m = 3P to m = 4P, divided by P) where the same schedule at F = B = W has "
    "none (measured: [at the unbalanced ratio, at F = B = W], the latter 0 for all three); "
    "a warm-up/cool-down bubble that changes with the ratios is not counted")


def _balance(name: str, label: str, degrades: bool) -> Claim:
    """One family's part of "only V-Min degrades when F, B, W are unbalanced"."""
    def measure(r, r2):
        inst = r.schedule.instance
        return repeating_bubble(r, r2), _balanced_repeating(name, inst.P, inst.m)

    if degrades:
        text = (f"only V-Min degrades when F, B, W are unbalanced: {label} has a bubble "
                f"repeating with every microbatch at every unbalanced ratio (none at F = B = W)")
        claimed, compare = "> balanced", (lambda a, c: a[0] > a[1])
    else:
        text = (f"only V-Min degrades when F, B, W are unbalanced: {label} does not (no bubble "
                f"repeating with every microbatch, as at F = B = W)")
        claimed, compare = "= balanced", (lambda a, c: a[0] <= a[1])
    note = BALANCE_READING + (
        "; the claim is three statements, one row per family; here the universal reading "
        "of V-Min's part: the instances (failing) count the ratios where V-Min keeps no "
        "repeating bubble" if degrades else
        "; the V-Half of schedules.generators is a greedy building block, not the paper's "
        "hand-tuned offsets" if name == "v-half" else "; ZB-V as schedules.generators builds it")
    return Claim(f"unbalanced-{name}", text,
                 "Qi et al., Pipeline Parallelism with Controllable Memory (NeurIPS 2024)",
                 "span", name,
                 "P 2..6, m = 3P vs 4P, (f, b_I, b_W) every unequal triple of {1,2,3} and "
                 "1157 : 1330 : 1023 (V100)", _unbalanced_grid, measure, lambda i: claimed,
                 compare=compare, companion=_plus_p, note=note)


def single_slot_bound(inst: Instance) -> Fraction:
    """Theorem T3 (the single-slot bound at ``K = 1``) of ``inst``."""
    from bounds import lower_bound

    return dict(lower_bound(inst).terms)["single_slot"]


def k1_optimum(inst: Instance) -> tuple:
    """``(lower, optimum)`` of a fused ``K = 1`` instance: the best proven lower bound on its
    optimum (:func:`bounds.lower_bound`, T3d included) and the proven optimum, or
    ``"unknown"`` (then ``lower`` exceeds T3: the instance is decided anyway). The optimum
    comes from :func:`pipebounds.certify.certify` with the recorded certificate schedules of
    pipebounds/data/certificates.jsonl. ``AssertionError`` for an undecided instance."""
    from bounds import lower_bound
    from pipebounds.certify import certify
    from pipebounds.certify.certificates import stored_schedules

    lb = lower_bound(inst)
    mine = [s.with_instance(inst) for s, _ in stored_schedules()
            if s.instance.with_(K=inst.K) == inst]
    opt = certify(inst, schedules=mine, lb=lb).optimum
    if opt is None and lb.value == single_slot_bound(inst):
        raise AssertionError(f"T3 = OPT undecided for {inst}")
    return lb.value, "unknown" if opt is None else opt


def _k1_decided(measured: tuple, claimed: Fraction) -> bool:
    """Whether ``claimed`` (T3) is the optimum, from :func:`k1_optimum`'s ``measured``: equal
    to the proven optimum; with the optimum unknown, refuted when the proven lower bound
    exceeds it. ``AssertionError`` when neither decides."""
    lower, opt = measured
    if opt != "unknown":
        return opt == claimed
    if lower > claimed:
        return False
    raise AssertionError(f"undecided: the optimum is unknown and its proven lower bound "
                         f"{lower} does not exceed the claimed {claimed}")


K1_COUNTEREXAMPLE = Instance(P=3, m=24, K=1, f=5, b=8)
"""The smallest known ``f <= b`` instance with T3 < OPT (docs/theory.md A.6)."""


def _k1_grid(f_le_b: bool):
    """Every fused ``v = 1``, ``K = 1`` instance with ``P >= 2`` whose optimum is proven in
    pipebounds/data/optima.jsonl (``use_theory=False``) or by a recorded certificate, and
    :data:`K1_COUNTEREXAMPLE` (T3d proven above T3)."""
    def grid():
        from pipebounds.certify.certificates import stored_schedules
        from pipebounds.certify.optima import independent_rows

        out = {K1_COUNTEREXAMPLE}
        for row in independent_rows():
            if (row.get("status") == "optimal" and row.get("K") == 1 and row.get("v", 1) == 1
                    and row.get("b_input") is None and not row.get("c") and row["P"] >= 2):
                out.add(Instance.from_dict({k: v for k, v in row.items() if k in (
                    "P", "m", "K", "v", "placement", "f", "b")}))
        out |= {s.instance for s, _ in stored_schedules()
                if s.instance.K == 1 and s.instance.v == 1 and not s.instance.split}
        return [i for i in out if not f_le_b or i.f <= i.b]
    return grid


def _k1_claim(f_le_b: bool) -> Claim:
    cond = " with f <= b" if f_le_b else ""
    return Claim(
        "k1-exact-f-le-b" if f_le_b else "k1-exact",
        f"exact results at K = 1: the single-slot bound T3 is the optimum{cond}",
        "Mind Bubbles and Memory (HAL hal-05353232, 2025), REFERENCES.md paper 1", "makespan",
        "1f1b", f"fused, v = 1, K = 1, P >= 2{cond}: every instance with a proven optimum in "
        "the optima table and the recorded certificates (P 2..6, m 2..14, f, b <= 5), and "
        "P=3 m=24 f=5 b=8", _k1_grid(f_le_b), k1_optimum, single_slot_bound,
        compare=_k1_decided, of_instance=True,
        note="measured: [the best proven lower bound on OPT (T3d, docs/theory.md A.6, is "
             "part of it), OPT when proven (table row solved with use_theory=False, or a "
             "recorded schedule reaching a proven bound)]; the claim fails where the proven "
             "lower bound exceeds T3. The counterexample document is a valid K = 1 schedule "
             "of the instance (1F1B fitted to K = 1), not the evidence: the evidence is the "
             "bound. "
             + ("P=3 m=24 f=5 b=8: T3 = 416 < T3d = 417 <= OPT; the branch and bound without "
                "bounds/ (use_theory=False) also proves OPT >= 417 (data/k1_counterexamples."
                "jsonl, docs/evidence.md)" if f_le_b else
                "the smallest counterexample has f > b; with f <= b see k1-exact-f-le-b"))


def _bidirectional_grid(overlap: bool):
    """DualPipe proper (``directions = 2``): even ``P`` 2..8, ``m`` in {2P, 3P}, the duration
    triples in {1, 2}; without ``F&B`` ops, or (``overlap``) with ``d_FB`` in {(f+b)/2,
    3(f+b)/4, f+b}."""
    out = []
    ds = (Fraction(1, 2), Fraction(3, 4), Fraction(1)) if overlap else (None,)
    for P, (f, bi, bw) in product((2, 4, 6, 8), TWOS):
        for m, d in product((2 * P, 3 * P), ds):
            out.append(Instance(P=P, m=m, directions=2, f=f, b_I=bi, b_W=bw,
                                d_FB=None if d is None else d * (f + bi + bw)))
    return out


BIDIRECTIONAL = "P in {2,4,6,8}, m in {2P, 3P}, f, b_I, b_W in {1,2}"


def _bidirectional_claimed(inst: Instance) -> Fraction:
    """DualPipe README: ``(PP/2 - 1)(F&B + B - 3W)``, ``PP = P`` ranks (one stage of each copy
    per rank), ``F&B = d_FB`` (``f + b`` without overlapped ops), ``B = b``, ``W = b_W``."""
    fb = inst.d_FB if inst.d_FB is not None else inst.f + inst.b
    return (Fraction(inst.P, 2) - 1) * (fb + inst.b - 3 * inst.b_W)


def bidirectional_bubbles(r: SimulationResult) -> tuple[Fraction, Fraction]:
    """``(global bubble of the schedule, least global bubble any schedule may have by D1)``:
    ``T - m(f+b)`` and ``LB - m(f+b)`` with ``LB`` the bound of :mod:`bounds.directions`
    (docs/theory.md A.12); where they are equal the schedule is optimal."""
    from bounds import lower_bound

    inst = r.schedule.instance
    work = inst.m * (Fraction(inst.f) + Fraction(inst.b))
    return r.makespan - work, lower_bound(inst).value - work


CLAIMS: tuple[Claim, ...] = (
    Claim("1f1b-bubble", "1F1B bubble fraction (P-1)/(m+P-1) on every GPU",
          "sail-sg/zero-bubble-pipeline-parallelism README; Megatron (Narayanan et al. 2021)",
          "makespan", "1f1b", "P 2..8, m 1..16, (f,b) in (1,1) (1,2) (2,1) (1,3)",
          _fused_grid(range(2, 9), lambda P: range(1, 17), PAIRS),
          lambda r: max(r.bubble_ratio),
          lambda i: Fraction(i.P - 1, i.m + i.P - 1)),
    Claim("1f1b-memory", "1F1B holds P activations on the first GPU",
          "sail-sg/zero-bubble-pipeline-parallelism README; Megatron",
          "memory", "1f1b", "P 2..8, m 1..16, f=1 b=2",
          _fused_grid(range(2, 9), lambda P: range(1, 17), ((1, 2),)),
          lambda r: r.peak_memory[0], lambda i: i.P,
          holds_if=lambda i: i.m >= i.P, holds_if_text="m >= P (else min(P, m) = m)"),
    Claim("zb-h1-bubble", "ZB-H1 bubble (P-1)(F+B-W) (B: input gradient, W: weight gradient)",
          "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024); sail-sg README",
          "makespan", "zb-h1", "P 2..5, m P..2P, f, b_I, b_W in {1,2,3}",
          _split_grid(range(2, 6), lambda P: range(P, 2 * P + 1), TRIPLES),
          global_bubble, lambda i: (i.P - 1) * (i.f + i.b_I - i.b_W),
          holds_if=lambda i: i.b_W <= min(i.f, i.b_I),
          holds_if_text="m >= P and b_W <= min(f, b_I) (for b_I < b_W, S1 at K = P proves every "
                        "schedule's bubble >= (P-1) f)"),
    Claim("zb-h1-memory", "ZB-H1 holds 1F1B's memory: P activations",
          "Qi et al. (ICLR 2024)", "memory", "zb-h1", "P 2..5, m P..2P, f, b_I, b_W in {1,2,3}",
          _split_grid(range(2, 6), lambda P: range(P, 2 * P + 1), TRIPLES),
          lambda r: max(r.peak_memory), lambda i: i.P,
          compare=lambda a, c: a <= c),
    Claim("zb-h2-bubble", "ZB-H2 bubble (P-1)(F+B-2W), zero when F=B=W",
          "Qi et al. (ICLR 2024); sail-sg README", "span", "zb-h2",
          "P 2..5, m 2P..3P, f, b_I, b_W in {1,2,3}",
          _split_grid(range(2, 6), lambda P: (2 * P, 3 * P), TRIPLES),
          rank_bubble, lambda i: max(Fraction(0), (i.P - 1) * (i.f + i.b_I - 2 * i.b_W)),
          holds_if=lambda i: i.f == i.b_I == i.b_W, holds_if_text="m >= 2P and f = b_I = b_W",
          note="the list-scheduled ZB-H2 of schedules.generators"),
    Claim("zb-h2-memory", "ZB-H2 holds at most 2P-1 activations",
          "Qi et al. (ICLR 2024)", "memory", "zb-h2", "P 2..5, m 2P..3P, f, b_I, b_W in {1,2,3}",
          _split_grid(range(2, 6), lambda P: (2 * P, 3 * P), TRIPLES),
          lambda r: max(r.peak_memory), lambda i: 2 * i.P - 1, compare=lambda a, c: a <= c),
    Claim("zbv", "ZB-V: zero bubble at F=B=W, m >= 2P, with 1F1B's memory (2P stage "
          "activations = P microbatches)",
          "Qi et al., Pipeline Parallelism with Controllable Memory (NeurIPS 2024)", "span",
          "zbv", V_STATED_2P, V_GRID_2P,
          lambda r: (rank_bubble(r), max(r.peak_memory)),
          lambda i: (Fraction(0), 2 * i.P),
          compare=lambda a, c: a[0] == c[0] and a[1] <= c[1],
          holds_if=lambda i: i.f == i.b_I == i.b_W, holds_if_text="f = b_I = b_W, m >= 2P"),
    _v_memory("v-half", "V-Half", lambda P: (P + 2) // 2, "(P+2)//2"),
    _v_memory("v-min", "V-Min", lambda P: (P + 4) // 3, "(P+4)//3"),
    _v_condition("v-half", "V-Half", lambda P: (P + 2) // 2, "(P+2)//2", necessary=False),
    _v_condition("v-half", "V-Half", lambda P: (P + 2) // 2, "(P+2)//2", necessary=True),
    _v_condition("v-min", "V-Min", lambda P: (P + 4) // 3, "(P+4)//3", necessary=False),
    _v_condition("v-min", "V-Min", lambda P: (P + 4) // 3, "(P+4)//3", necessary=True),
    Claim("dualpipev-bubble", "DualPipe(V) bubble (PP/2-1)(F&B+B-3W), PP = 2P stages",
          "deepseek-ai/DualPipe README", "span", "dualpipev",
          V_STATED_2P, V_GRID_2P,
          rank_bubble, _dualpipe_claimed, compare=lambda a, c: a <= c,
          note="overlapped F&B chunks run as F then B (no overlap in this model); the claim is "
               "read as an upper bound on the per-rank bubble"),
    Claim("dualpipev-memory", "DualPipe(V) holds PP+1 activations (PP = 2P stages)",
          "deepseek-ai/DualPipe README", "memory", "dualpipev",
          V_STATED_2P, V_GRID_2P,
          lambda r: max(r.peak_memory), lambda i: 2 * i.P + 1, compare=lambda a, c: a <= c),
    Claim("megatron-warmup", "Megatron interleaved warm-up: rank r runs 2(P-r-1)+(v-1)P "
          "forwards before its first backward",
          "NVIDIA/Megatron-LM issues 169 and 675", "orders", "interleaved",
          "P 2..5, v 2..4, m P..3P, f=1 b=2",
          _interleaved_grid,
          lambda r: tuple(warmup_forwards(r, p) for p in range(r.schedule.instance.P)),
          # warm-up forwards, then the steady state's first forward, precede the first backward
          lambda i: tuple(min(i.v * i.m, 2 * (i.P - r - 1) + (i.v - 1) * i.P + 1)
                          for r in range(i.P)),
          holds_if=lambda i: i.m % i.P == 0, holds_if_text="P divides m",
          note="the interleaved generator follows torch's rule (v-1)g + 2(P-1-r), g the first "
               "round's size"),
    Claim("zb-2p-zero-bubble", "ZB-2p (memory limit 2P activations) has zero bubble "
          "(bubble rate 0 assuming F = B = W)",
          "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024); sail-sg README (ZB2P)",
          "span", "zb-2p", "P 2..6, m 2P..3P, f, b_I, b_W in {1,2,3}", _zb2p_bubble_grid,
          lambda r: (rank_bubble(r), max(r.peak_memory)),
          lambda i: (Fraction(0), 2 * i.P),
          compare=lambda a, c: a[0] == c[0] and a[1] <= c[1],
          holds_if=lambda i: i.f == i.b_I == i.b_W, holds_if_text="f = b_I = b_W",
          note="the zb-2p generator re-implements the paper's scheduling heuristic (the "
               "repository's zb scheduler, 8 flag combinations, best longest per-rank span) "
               "without the ILP refinement of the paper; the bubble is the paper's: longest "
               "per-rank span minus m(F+B+W) (its 'cost'), so the global makespan, whose "
               "bubble is at least (P-1)f for every schedule, is not the definition to refute "
               "it with"),
    Claim("zb-2p-every-schedule", "zero bubble is possible at ZB-2p's memory (2P activations "
          "per GPU) for realistic F, B, W (ZB-2p's 'almost zero bubble')",
          "Qi et al. (ICLR 2024); sail-sg README (ZB2P)", "span", "zb-2p",
          "P 2..8, m 2P..3P, f, b_I, b_W in {1,2,3} and 1157 : 1330 : 1023 (V100, REFERENCES.md)",
          _zb2p_bound_grid,
          lambda r: (rank_bubble(r), first_rank_idle_bound(r.schedule.instance,
                                                           2 * r.schedule.instance.P)),
          lambda i: ("0 possible", "0"), compare=lambda a, c: a[1] == 0,
          note="proof-based, for every schedule without recompute and at most 2P live "
               "activations per GPU, not only the zb-2p generator: measured is [zb-2p's "
               "per-rank bubble, the proven lower bound P f + (P-1) b_I - min(2P, m) f on "
               "every such schedule's per-rank bubble (pipebounds.services.audit.first_rank_idle_bound)]"
               "; the claim fails wherever the bound is positive, i.e. (P-1) b_I > P f for "
               "m >= 2P: never at F = B = W (the README's assumption), but for the profiled "
               "V100 ratio from P = 8 on. The bound is an absolute idle time, so the bubble "
               "rate still tends to 0 as m grows ('almost zero' in that sense stands)"),
    Claim("interleaved-zb-bubble", "torch's ScheduleInterleavedZeroBubble implements ZB1P: "
          "per-rank bubble (P-1)(F+B-W) at any number of local stages",
          "torch.distributed.pipelining docstring; pytorch/pytorch PRs 130210 and 130752",
          "span", "interleaved-zb", "P 2..4, v 2..6, m in {2P, 3P}, f = b_I = b_W = 1",
          _zb2p_grid, rank_bubble, lambda i: (i.P - 1) * (i.f + i.b_I - i.b_W)),
    Claim("interleaved-zb-zero-bubble", "torch's interleaved zero-bubble schedule "
          "(ScheduleInterleavedZeroBubble) has zero bubble at F=B=W",
          "pytorch/pytorch PRs 130210 and 130752", "span", "interleaved-zb",
          "P 2..4, v 2..6, m in {2P, 3P}, f = b_I = b_W = 1", _zb2p_grid,
          rank_bubble, lambda i: Fraction(0),
          note="our interleaved-zb follows torch's ScheduleInterleavedZeroBubble, which its "
               "docstring calls ZB1P; the ZB2P orders of PR 130210 are not reproduced here"),

    Claim("zbv-comm-volume", "ZB-V moves 2x the point-to-point volume of 1F1B",
          "Qi et al., Pipeline Parallelism with Controllable Memory (NeurIPS 2024)", "orders",
          "zbv", "P 2..5, m in {2P, 3P}, f = b_I = b_W = 1", _comm_grid, transfers,
          lambda i: 2 * (2 * i.m * (i.P - 1)),
          note="counted as transfers (an activation or a gradient across a stage boundary "
               "held by two GPUs, per microbatch); each carries the same hidden-state size as "
               "1F1B's, so the count is the volume"),
    Claim("v-half-comm-volume", "V-Half moves 2x the point-to-point volume of 1F1B",
          "Qi et al. (NeurIPS 2024)", "orders", "v-half",
          "P 2..5, m in {2P, 3P}, f = b_I = b_W = 1", _comm_grid, transfers,
          lambda i: 2 * (2 * i.m * (i.P - 1)), note="as zbv-comm-volume"),
    Claim("v-min-comm-volume", "V-Min moves 2x the point-to-point volume of 1F1B",
          "Qi et al. (NeurIPS 2024)", "orders", "v-min",
          "P 2..5, m in {2P, 3P}, f = b_I = b_W = 1", _comm_grid, transfers,
          lambda i: 2 * (2 * i.m * (i.P - 1)), note="as zbv-comm-volume"),
    Claim("interleaved-bubble-over-v", "Megatron interleaved: the bubble fraction is divided "
          "by v, (1/v)(P-1)/m of the ideal time",
          "Narayanan et al. 2021 (Megatron-LM, SC21), section 2.2", "makespan", "interleaved",
          "P 2..4, v 2..3, m 2..3P, f=1 b=2", _interleaved_bubble_grid,
          lambda r: global_bubble(r) / (r.schedule.instance.v * r.schedule.instance.m
                                        * (r.schedule.instance.f + r.schedule.instance.b)),
          lambda i: Fraction(i.P - 1, i.v * i.m),
          holds_if=lambda i: i.m >= i.P, holds_if_text="m >= P (uneven rounds: m < P is worse)"),
    Claim("v-half-bubble-half", "V-Half's bubble is half of 1F1B's (B/2)",
          "Qi et al. (NeurIPS 2024)", "makespan", "v-half", V_STATED_3P, V_GRID_3P,
          bubble_over_1f1b, lambda i: Fraction(1, 2),
          note="1F1B's bubble on the same model: its stage holds a GPU's two stages, "
               "(P-1)·2(f+b) (one_f_one_b_bubble)"),
    Claim("v-min-bubble-two-thirds", "V-Min's bubble is 2/3 of 1F1B's (2B/3)",
          "Qi et al. (NeurIPS 2024)", "makespan", "v-min", V_STATED_3P, V_GRID_3P,
          bubble_over_1f1b, lambda i: Fraction(2, 3),
          note="as v-half-bubble-half"),
    Claim("zb1p-full-backward", "ZB1P bubble (PP-1)(F+B-2W), B the full backward "
          "(the DeepSeek-V3 report's table, DeepSeek-V3 issue 724)",
          "DeepSeek-V3 technical report, table 2; deepseek-ai/DeepSeek-V3 issue 724",
          "makespan", "zb-h1", "P 2..5, m P..2P, f, b_I, b_W in {1,2,3}",
          _split_grid(range(2, 6), lambda P: range(P, 2 * P + 1), TRIPLES),
          global_bubble, lambda i: (i.P - 1) * (i.f + i.b - 2 * i.b_W),
          holds_if=lambda i: i.b_W <= min(i.f, i.b_I),
          holds_if_text="b_W <= min(f, b_I), as zb-h1-bubble: with B = b_I + b_W it is the "
                        "same formula as the zero-bubble paper's (P-1)(F+B-W), B = b_I"),
    Claim("zb1p-input-gradient", "ZB1P bubble (PP-1)(F+B-2W) read with B the input gradient "
          "(the zero-bubble paper's notation)",
          "deepseek-ai/DeepSeek-V3 issue 724 (the two formulas side by side)", "makespan",
          "zb-h1", "P 2..5, m P..2P, f, b_I, b_W in {1,2,3}",
          _split_grid(range(2, 6), lambda P: range(P, 2 * P + 1), TRIPLES),
          global_bubble, lambda i: (i.P - 1) * (i.f + i.b_I - 2 * i.b_W),
          note="the notation mix-up the issue asks about: in this reading the formula is off "
               "by (P-1) W"),
    Claim("dualpipev-fb-bubble", "DualPipe(V) with overlapped F&B chunks: per-rank bubble at "
          "most (PP/2-1)(F&B+B-3W), PP = 2P stages",
          "deepseek-ai/DualPipe README; DeepSeek-V3 technical report, table 2", "span",
          "dualpipev-fb", "P 2..4, m in {2P, 3P}, f = b_I = b_W = 1, d_FB in {3/2, 2, 5/2, 3}",
          _dualpipe_fb_grid, rank_bubble,
          lambda i: (i.P - 1) * (i.d_FB + i.b - 3 * i.b_W), compare=lambda a, c: a <= c,
          note="F&B ops (MODEL.md third round) of duration d_FB; torch's ScheduleDualPipeV "
               "order (dualpipev-fb)"),
    Claim("dualpipe-bubble", "bidirectional DualPipe: per-rank bubble at most "
          "(PP/2-1)(F&B+B-3W), PP = P ranks",
          "deepseek-ai/DualPipe README; DeepSeek-V3 technical report", "span", "dualpipe",
          BIDIRECTIONAL + ", no F&B ops (F&B = f+b)", lambda: _bidirectional_grid(False),
          rank_bubble, _bidirectional_claimed, compare=lambda a, c: a <= c,
          note="two copies, microbatches from both ends (MODEL.md, Directions); the claim is "
               "read as an upper bound on the per-rank bubble, as for DualPipeV"),
    Claim("dualpipe-fb-bubble", "bidirectional DualPipe with overlapped F&B chunks: per-rank "
          "bubble at most (PP/2-1)(F&B+B-3W), PP = P ranks",
          "deepseek-ai/DualPipe README; DeepSeek-V3 technical report", "span", "dualpipe",
          BIDIRECTIONAL + ", d_FB in {1/2, 3/4, 1} (f+b)", lambda: _bidirectional_grid(True),
          rank_bubble, _bidirectional_claimed, compare=lambda a, c: a <= c,
          note="F&B ops of duration d_FB (MODEL.md third round): an F&B op waits for the inputs "
               "of both its parts, so a short d_FB leaves the steps waiting, as for DualPipeV "
               "(dualpipev-fb-bubble)"),
    Claim("dualpipe-memory", "bidirectional DualPipe holds PP+1 activations per GPU "
          "(PP = P ranks), parameters 2x",
          "deepseek-ai/DualPipe README", "memory", "dualpipe",
          BIDIRECTIONAL + ", d_FB in {none, 1/2, 3/4, 1} (f+b)",
          lambda: _bidirectional_grid(False) + _bidirectional_grid(True),
          lambda r: max(r.peak_memory), lambda i: i.P + 1,
          note="peak live stage activations of both copies on the busiest GPU (without F&B ops "
               "every GPU holds exactly P+1, tests/test_dualpipe.py); a GPU holds the "
               "parameters of two stages, one per copy (MODEL.md, Directions)"),
    Claim("dualpipe-global-bubble", "bidirectional DualPipe's bubble is (PP/2-1)(F&B+B-3W), read "
          "as the global makespan minus one GPU's work",
          "deepseek-ai/DualPipe README (the bubble column)", "makespan", "dualpipe",
          BIDIRECTIONAL + ", no F&B ops (F&B = f+b)", lambda: _bidirectional_grid(False),
          bidirectional_bubbles, _bidirectional_claimed, compare=lambda a, c: a[0] == c,
          note="measured: (global bubble of the dualpipe schedule, the least global bubble any "
               "bidirectional schedule may have, from theorem D1, docs/theory.md A.12); at "
               "f = b_I = b_W the two are equal, (P/2-1) f: the dualpipe schedule is optimal "
               "there and the formula, (P/2-1)(f+2b-3b_W), is twice its bubble"),
    Claim("remat-adjacent-optimal", "rematerialization with each recompute right before its "
          "backward is optimal (the remat paper's ILP places them there)",
          "the rematerialization paper (REFERENCES.md, paper 2), its ILP and code", "makespan",
          "1f1b", "P 2..4, m = 2P, K 1..3, f=1 b=2", _remat_grid, _remat_pair, lambda i: "equal",
          compare=lambda a, c: a[0] == a[1],
          note="measured: (optimal makespan with adjacent recomputes, with recomputes anywhere "
               "between F and the backward), both proven by optimal_remat on 1F1B's order fitted "
               "to K; the paper's ILP also stops at a 3 % gap, our values are proven optima"),
    Claim("remat-recompute-in-bubbles", "recomputing in the pipeline's bubbles (anywhere "
          "before the backward) shortens the iteration against recomputing right before it",
          "Mario (Liu et al., PPoPP 2025: recompute overlapped in the bubbles)", "makespan",
          "1f1b", "P 2..4, m = 2P, K 1..3, f=1 b=2", _remat_grid, _remat_pair,
          lambda i: "shorter", compare=lambda a, c: a[1] < a[0],
          note="measured as remat-adjacent-optimal; on 1F1B's fixed order the bubbles give "
               "nothing: a recompute placed earlier holds its activation longer"),
    Claim("zb-2p-optimal", "the zero-bubble paper's scheduler 'automatically finds an optimal "
          "schedule' for a memory limit: ZB-2p's makespan at 2P activations is the optimum",
          "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), section 3; "
          "sail-sg/zero-bubble-pipeline-parallelism (its runtime runs the greedy heuristic)",
          "makespan", "zb-2p", "P 2..4, m P..3P, K = 2P, f, b_I, b_W in {1,2,3}",
          _zb2p_optimal_grid, lambda r: (r.makespan, proven_optimum(r)),
          lambda i: "optimal", compare=lambda a, c: a[0] == a[1],
          note="measured: [ZB-2p's makespan, the proven optimum at K = 2P (remat allowed)]: "
               "the theory's lower bound met by ZB-2p's own schedule on every instance (with "
               "MW11 at v = 1; before it, 14 instances at b_I = 3 f needed a row of the optima "
               "table solved with use_theory=False); the paper's cost is the longest per-rank span, "
               "read here as the global makespan, the project's objective"),
    _balance("zbv", "ZB-V", degrades=False),
    _balance("v-half", "V-Half", degrades=False),
    _balance("v-min", "V-Min", degrades=True),
    _k1_claim(f_le_b=False),
    _k1_claim(f_le_b=True),
)


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str
    range: str
    instances: int
    failures: int
    counterexample: Optional[dict] = field(default=None, compare=False)

    def __repr__(self) -> str:
        from schedules.brief import brief_repr

        return brief_repr("Verdict", claim=self.claim.id, verdict=self.verdict,
                          instances=self.instances, failures=self.failures)

def _size(inst: Instance):
    return (inst.P, inst.m, inst.v, inst.f + inst.b, inst.f, inst.b_I or 0)


def json_value(x):
    """A claimed or measured value as JSON: a number (an int when whole), a list of them; see
    :func:`exact_value` for its exact string (docs/CLI.md, JSON numbers)."""
    if isinstance(x, Fraction):
        return number(x)
    if isinstance(x, (tuple, list)):
        return [json_value(y) for y in x]
    return x


def exact_value(x):
    """The exact string of a claimed or measured value (a list of them for a list); values that
    are not numbers (an order property) are returned as they are."""
    if isinstance(x, (Fraction, int)) and not isinstance(x, bool):
        return exact_string(x)
    if isinstance(x, (tuple, list)):
        return [exact_value(y) for y in x]
    return x


def show_value(x) -> str:
    """A claimed or measured value for people: ``7/2``, or ``(0, 1, 2)`` for a list."""
    if isinstance(x, (tuple, list)):
        return "(" + ", ".join(show_value(y) for y in x) + ")"
    return exact_string(x) if isinstance(x, (Fraction, int)) and not isinstance(x, bool) else str(x)


def _runs(claim: Claim, inst: Instance) -> list[SimulationResult]:
    """The claim's generator on ``inst`` (and on its companion), simulated; each valid."""
    runs = [simulate(generate(claim.generator, inst))]
    if claim.companion is not None:
        runs.append(simulate(generate(claim.generator, claim.companion(inst))))
    for r in runs:
        if not r.valid:
            raise AssertionError(f"{claim.generator} generated an invalid schedule for "
                                 f"{r.schedule.instance}")
    return runs


def evaluate(claim: Claim, tick=None) -> Verdict:
    """Run ``claim`` over its grid (see the module docstring for the verdicts); ``tick(w)`` is
    called after each instance with its weight (:func:`schedules.progress.instance_weight`)."""
    fails = []
    n = 0
    for inst in sorted(claim.grid(), key=_size):
        if tick is not None:
            tick(instance_weight(inst) * (2 if claim.companion is not None else 1))
        n += 1
        if claim.of_instance:
            runs: list[SimulationResult] = []
            measured = claim.measure(inst)
        else:
            runs = _runs(claim, inst)
            measured = claim.measure(*runs)
        claimed = claim.claimed(inst)
        if not claim.compare(measured, claimed):
            fails.append((inst, runs, measured, claimed))
    if not fails:
        return Verdict(claim, "holds", claim.stated, n, 0)
    inside = [x for x in fails if claim.holds_if is None or claim.holds_if(x[0])]
    verdict = "false" if inside else "holds_on_range"
    rng = claim.stated if inside else f"{claim.holds_if_text} (within {claim.stated})"
    inst, runs, measured, claimed = (inside or fails)[0]
    if not runs:  # a claim about the instance: its document carries a valid schedule of it
        runs = _runs(claim, inst)
    doc = document_from_schedule(runs[0].schedule, source=claim.generator, claim=claim.id,
                                 definition=claim.definition, claimed=json_value(claimed),
                                 claimed_exact=exact_value(claimed),
                                 measured=json_value(measured),
                                 measured_exact=exact_value(measured))
    if len(runs) > 1:
        doc["companion"] = document_from_schedule(runs[1].schedule, source=claim.generator)
    return Verdict(claim, verdict, rng, n, len(fails), doc)


def audit(select: Optional[str] = None, progress: Progress = None) -> list[Verdict]:
    """Every claim of :data:`CLAIMS` (those whose id contains ``select``). ``progress``
    (:mod:`schedules.progress`): the instances of every claim's grid, each weighted by its size
    (twice for a steady-state claim, which times a companion too)."""
    chosen = [c for c in CLAIMS if not select or select in c.id]
    total = sum(instance_weight(i) * (2 if c.companion is not None else 1)
                for c in chosen for i in c.grid())
    bar = progress_for(progress, total, "audit")
    try:
        out = []
        for c in chosen:
            bar.set_postfix_str(c.id)
            out.append(evaluate(c, tick=bar.update))
        return out
    finally:
        bar.close()


def remeasure(claim_id: str, doc: dict):
    """The measured value of claim ``claim_id`` on the schedule of an orders document (and on
    its ``companion`` document for a steady-state claim)."""
    from schedules.io import schedule_from_document

    claim = next(c for c in CLAIMS if c.id == claim_id)
    runs = [simulate(schedule_from_document(doc))]
    if claim.companion is not None:
        runs.append(simulate(schedule_from_document(doc["companion"])))
    inst = runs[0].schedule.instance
    measured = claim.measure(inst) if claim.of_instance else claim.measure(*runs)
    return measured, claim.claimed(inst), claim.compare


def verdict_json(v: Verdict) -> dict:
    return {"claim": v.claim.claim, "id": v.claim.id, "source": v.claim.source,
            "definition": v.claim.definition, "schedule": v.claim.generator,
            "verdict": v.verdict, "range": v.range, "instances": v.instances,
            "failures": v.failures, "note": v.claim.note,
            "counterexample": v.counterexample}


def markdown(verdicts: list[Verdict]) -> str:
    """docs/claims.md."""
    lines = ["# Published claims, audited", "",
             "Generated by `pipebounds audit --markdown > docs/claims.md` (pipebounds/services/audit.py). "
             "Each claim is checked under its own definition (`makespan`: global makespan "
             "`T`, bubble `T - v m (f+b)`; `span`: per-rank bubble `max_p (span_p - busy_p)`; "
             "`memory`: peak live stage activations; `orders`: a property of the op orders) on "
             "the exact grid stated, with the schedules of `schedules.generators` timed "
             "exactly by `simulate`. Verdicts: `holds` (on the whole grid), `holds_on_range` "
             "(on the range given, wrong outside it), `false` (wrong where the source's "
             "statement applies). The smallest counterexample is printed by "
             "`pipebounds audit --json` as an orders document (`claimed`, `measured` keys) "
             "that `pipebounds simulate` reproduces.", "",
             "| claim | source | definition | schedule | verdict | range | instances (failing) | smallest counterexample |",  # noqa: E501
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for v in verdicts:
        ce = ""
        if v.counterexample:
            d = v.counterexample
            dur = d["durations"]
            two = " directions=2" if d.get("directions") == 2 else ""
            ce = (f"P={d['P']} m={d['m']} v={d.get('v', 1)}{two} "
                  + " ".join(f"{k}={dur[k]}" for k in ("F", "B", "I", "W") if k in dur)
                  + f": claimed {show_value(d['claimed_exact'])}, "
                  f"measured {show_value(d['measured_exact'])}")
        lines.append(f"| {v.claim.claim} | {v.claim.source} | {v.claim.definition} | "
                     f"`{v.claim.generator}` | **{v.verdict}** | {v.range} | "
                     f"{v.instances} ({v.failures}) | {ce} |")
    notes = [v for v in verdicts if v.claim.note]
    if notes:
        lines += ["", "Notes:", ""]
        lines += [f"* `{v.claim.id}`: {v.claim.note}." for v in notes]
    return "\n".join(lines) + "\n"
