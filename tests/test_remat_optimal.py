"""optimal_remat (schedules/remat_optimal.py): valid, never worse than fit_memory when fit_memory
keeps the order, never below the lower bound, and equal to brute force over every recompute
choice on small random orders (fused and split, with and without backward recomputes)."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest
from hypothesis import assume, given, settings, strategies as st

from bounds import lower_bound
from schedules import Instance, Op, Schedule, simulate
from schedules.generators import GENERATORS, generate
from schedules.remat import RematError, fit_memory
from schedules.remat_optimal import MemorySpec, evaluate, min_span, optimal_remat
from strategies import instances, scaled, schedules_of

MAX_COMBOS = 600


def _options(seq, s, j, backward):
    """Brute force's own reading of the choice space: forward gaps between F and its input
    gradient, backward gaps between I and W (gap g = just before position g)."""
    pos = {(op.kind, op.stage, op.microbatch): i for i, op in enumerate(seq)}
    phi = pos[("F", s, j)]
    beta = pos.get(("B", s, j), pos.get(("I", s, j)))
    fwd = [None] + list(range(phi + 1, beta + 1))
    if backward and ("W", s, j) in pos:
        bwd = [None] + list(range(beta + 1, pos[("W", s, j)] + 1))
    else:
        bwd = [None]
    return fwd, bwd


def brute_force(base: Schedule, K: int, backward: bool, objective: str = "makespan", mem=None):
    """The best objective over every assignment, by insertion and simulation (the per-GPU memory
    filter uses :func:`evaluate`; the simulator re-checks it on the assignments it times)."""
    inst = base.instance.with_(K=K) if mem is None else base.instance
    per_gpu = []
    for p, seq in enumerate(base.orders):
        opts = []
        for op in seq:
            if op.kind == "F":
                fwd, bwd = _options(seq, op.stage, op.microbatch, backward)
                opts.append([(op.stage, op.microbatch, f, b) for f in fwd for b in bwd])
        per_gpu.append(opts)
    total = 1
    for opts in per_gpu:
        for o in opts:
            total *= len(o)
    assume(total <= MAX_COMBOS)
    mem = MemorySpec.count(inst.S, inst.P, K) if mem is None else mem
    # GPUs are independent for memory: keep only the per-GPU assignments that fit
    fitting = []
    for p, opts in enumerate(per_gpu):
        ok = []
        for combo in product(*opts):
            seq = list(base.orders[p])
            inserts = sorted(((g, 0 if g == f else 1, s, j) for s, j, f, b in combo
                              for g in (f, b) if g is not None), reverse=True)
            for g, _, s, j in inserts:
                seq.insert(g, Op(s, "R", j))
            # memory on this GPU alone
            orders = [base.orders[q] if q != p else tuple(seq) for q in range(inst.P)]
            peak = evaluate(Schedule(inst.with_(K=None), tuple(orders)), mem)[1][p]
            if peak <= mem.budget:
                ok.append(tuple(seq))
        fitting.append(ok)
    best = None
    for orders in product(*fitting):
        sched = Schedule(inst, orders)
        res = simulate(sched)
        assert res.valid, res.errors[:2]  # evaluate's memory filter and the simulator agree
        value = min_span(sched) if objective == "span" else res.makespan
        best = value if best is None else min(best, value)
    return best


@st.composite
def small_cases(draw):
    split = draw(st.booleans())
    inst = draw(instances(max_P=3, max_v=2, max_m=4, max_pairs=6, K=None, split=split))
    base = draw(schedules_of(inst))
    if draw(st.booleans()):  # per-stage costs and a communication delay (MODEL.md Extensions)
        per = st.lists(st.integers(1, 3), min_size=inst.S, max_size=inst.S)
        kw = {"b_I": draw(per), "b_W": draw(per)} if split else {"b": draw(per)}
        inst = inst.with_(f=draw(per), c=draw(st.sampled_from([0, Fraction(1, 2), 1])), **kw)
    base = Schedule(inst, tuple(tuple(op for op in seq if op.kind != "R") for seq in base.orders))
    assume(simulate(base).valid)  # dropping R ops may raise the peak, never breaks the order
    K = draw(st.integers(1, max(simulate(base).peak_memory)))
    backward = split and draw(st.booleans())
    return base, K, backward


@settings(max_examples=scaled(20))
@given(small_cases())
def test_equals_brute_force(case):
    base, K, backward = case
    best = brute_force(base, K, backward)
    res = optimal_remat(base, K=K, backward=backward, time_limit=30)
    if best is None:
        assert res.status == "infeasible"
        return
    assert res.status == "optimal", res.stats
    assert res.makespan == best
    sim = simulate(res.schedule)
    assert sim.valid and max(sim.peak_memory) <= K and sim.makespan == res.makespan


@settings(max_examples=scaled(8))
@given(small_cases())
def test_span_equals_brute_force(case):
    base, K, backward = case
    best = brute_force(base, K, backward, objective="span")
    res = optimal_remat(base, K=K, backward=backward, objective="span", time_limit=30)
    if best is None:
        assert res.status == "infeasible"
        return
    assert res.status == "optimal" and res.span == best
    assert res.span <= res.makespan


@settings(max_examples=scaled(15))
@given(small_cases(), st.data())
def test_bytes_equals_brute_force(case, data):
    """Random bytes models (a_s, g_s <= a_s, static, transients, budget) against brute force."""
    from schedules.memory import MemoryModel

    base, _, backward = case
    inst = base.instance
    ints = st.integers(0, 6)
    act = [data.draw(st.integers(1, 6)) for _ in range(inst.S)]
    kept = [data.draw(st.integers(0, a)) for a in act]
    static = [data.draw(ints) for _ in range(inst.P)]
    trans = {k: data.draw(st.integers(0, 3)) for k in ("F", "B", "R")}
    model = MemoryModel(activation=tuple(act), kept_after_input=tuple(kept),
                        static=tuple(static), transient=tuple(trans.items()))
    budget = data.draw(st.integers(0, max(static) + sum(act) + 3))
    inst = inst.with_(memory=model)
    base = base.with_instance(inst)
    S = inst.S
    mem = MemorySpec(tuple(act), tuple(kept), tuple(static),
                     {"F": (trans["F"],) * S, "B": (trans["B"],) * S, "I": (0,) * S,
                      "W": (0,) * S, "R": (trans["R"],) * S, "RI": (0,) * S},
                     budget, 1, True)
    best = brute_force(base, None, backward, mem=mem)
    res = optimal_remat(base, budget_bytes=budget, backward=backward, time_limit=30)
    if best is None:
        assert res.status == "infeasible"
        return
    assert res.status == "optimal" and res.makespan == best
    assert max(res.peak) <= budget
    sim = simulate(res.schedule)
    assert sim.valid and sim.peak_bytes == res.peak


def test_count_model_as_bytes_is_the_count_model():
    from schedules.memory import MemoryModel

    base = generate("1f1b", Instance(P=3, m=5))
    for K in (1, 2):
        a = optimal_remat(base, K=K)
        inst = base.instance.with_(memory=MemoryModel.counting(None, 3))
        b = optimal_remat(base.with_instance(inst), budget_bytes=K)
        assert a.makespan == b.makespan and a.status == b.status == "optimal"


@st.composite
def family_cases(draw):
    # one direction: the bidirectional dualpipe has its own tests (tests/test_dualpipe.py)
    name = draw(st.sampled_from(sorted(n for n, g in GENERATORS.items()
                                       if g.requires.directions == 1)))
    req = GENERATORS[name].requires
    v = req.v_min
    P = draw(st.integers(2, 3))
    m = draw(st.integers(2 * P if name.startswith("dualpipev") else 2, 6))
    split = req.split or draw(st.booleans())
    f, bi, bw = draw(st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 2)]))
    kw = {"b_I": bi, "b_W": bw} if split else {"b": bi + bw}
    inst = Instance(P=P, m=m, v=v, placement=req.placement or "looped", f=f, **kw)
    base = generate(name, inst)
    K = draw(st.integers(1, max(simulate(base).peak_memory)))
    return base, K


@settings(max_examples=scaled(20))
@given(family_cases())
def test_valid_not_worse_than_fit_memory_not_below_bound(case):
    base, K = case
    fitted = fit_memory(base, K)
    keeps_order = tuple(tuple(o for o in seq if o.kind != "R") for seq in fitted.orders) \
        == base.orders
    res = optimal_remat(base, K=K, time_limit=30)
    if not keeps_order and res.status == "infeasible":
        return  # fit_memory had to move W ops: outside the fixed order
    assert res.status == "optimal", res.stats
    sim = simulate(res.schedule)
    assert sim.valid and max(sim.peak_memory) <= K and sim.makespan == res.makespan
    assert res.makespan >= lower_bound(base.instance.with_(K=K)).value
    if keeps_order:
        assert res.makespan <= simulate(fitted).makespan
    # the non-R order is the base order
    assert tuple(tuple(o for o in seq if o.kind != "R") for seq in res.schedule.orders) \
        == base.orders


def test_1f1b_P4_m8_K1():
    """fit_memory gets 39; the order-free optimum is 36 (pipebounds/data/optima.jsonl)."""
    base = generate("1f1b", Instance(P=4, m=8))
    res = optimal_remat(base, K=1)
    assert res.status == "optimal" and res.makespan <= 39
    assert res.makespan >= 36
    assert optimal_remat(base, K=1, positions="adjacent").makespan >= res.makespan


def test_backward_remat_makes_deferred_W_fit():
    """zb-h2 defers W ops; at K = 1 its fixed order cannot fit without freeing after I."""
    base = generate("zb-h2", Instance(P=3, m=4, b_I=1, b_W=1))
    assert optimal_remat(base, K=1).status == "infeasible"
    res = optimal_remat(base, K=1, backward=True)
    assert res.status == "optimal" and res.backward_recomputed
    ms, peak, _ = evaluate(res.schedule, MemorySpec.count(3, 3, 1))
    assert ms == res.makespan and max(peak) <= 1
    sim = simulate(res.schedule)
    assert sim.valid and sim.makespan == res.makespan and max(sim.peak_memory) <= 1


def test_existing_R_ops_are_dropped_and_refitted():
    base = generate("1f1b", Instance(P=3, m=4))
    fitted = fit_memory(base, 1)
    res = optimal_remat(fitted, K=1)
    assert res.dropped == sum(1 for _, op in fitted.ops() if op.kind == "R")
    assert res.makespan == optimal_remat(base, K=1).makespan


def test_errors_are_named():
    base = generate("1f1b", Instance(P=2, m=2))
    with pytest.raises(RematError, match="K"):
        optimal_remat(base)
    with pytest.raises(RematError, match="split"):
        optimal_remat(base, K=1, backward=True)
    with pytest.raises(RematError, match="objective"):
        optimal_remat(base, K=1, objective="sum")
    bad = Schedule(base.instance, (base.orders[0], base.orders[1][::-1]))
    with pytest.raises(RematError, match="not a valid schedule"):
        optimal_remat(bad, K=1)


def test_a_planted_error_is_caught():
    """The independent check catches a schedule whose R ops were put at the wrong place."""
    base = generate("1f1b", Instance(P=2, m=3))
    res = optimal_remat(base, K=1)
    orders = [list(seq) for seq in res.schedule.orders]
    r = next(i for i, op in enumerate(orders[0]) if op.kind == "R")
    orders[0].append(orders[0].pop(r))  # the recompute after its backward
    assert not simulate(Schedule(res.schedule.instance, tuple(map(tuple, orders)))).valid


def test_a_planted_model_error_is_caught(monkeypatch):
    """A model that lets a recompute sit one place after its input gradient (a planted bug) is
    caught by the independent check of the result (the simulator rejects such an order)."""
    import schedules.remat_optimal as ro

    real = ro._choices

    def shifted(pairs, positions, backward):
        return [(k, kind, g + 1) for k, kind, g in real(pairs, positions, backward)]

    monkeypatch.setattr(ro, "_choices", shifted)
    base = generate("1f1b", Instance(P=3, m=4))
    with pytest.raises((AssertionError, RematError)):
        ro.optimal_remat(base, K=1, positions="adjacent")


def test_span_objective_on_a_family():
    base = generate("1f1b", Instance(P=3, m=5, b_I=1, b_W=2, f=[1, 2, 1], c=1))
    res = optimal_remat(base, K=1, objective="span")
    assert res.status == "optimal" and res.span == min_span(res.schedule)
    assert res.span <= res.makespan
    assert res.span <= optimal_remat(base, K=1).makespan
