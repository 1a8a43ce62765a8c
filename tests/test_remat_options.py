"""The remat paper's three recompute options and per-op transients in optimal_remat, against an
independent brute force (docs/remat.md, *The option set*).

The brute force knows nothing of the CP-SAT model: for every pair it enumerates its own reading
of the options (option 1: one ``R`` in a gap between ``F`` and the input gradient; option 2: one
``R`` in a gap between ``I`` and ``W``; option 3: ``R`` then ``RI`` back to back there), every
order of the items that share a gap, builds the orders by insertion and keeps the best one the
project's simulator finds valid within the budget.
"""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import permutations, product

import pytest

from bounds import lower_bound
from schedules import Instance, Op, Schedule, simulate
from schedules.memory import MemoryModel
from schedules.remat import RematError
from schedules.remat_optimal import optimal_remat
from strategies import random_schedule

MAX_COMBOS = 250
"""Largest number of per-GPU assignments (times gap orders) the brute force tries per GPU."""


def _pair_options(seq, s, j, options, positions):
    """Every choice of one pair: ``(forward gap or None, (option, gap) or None)``."""
    pos = {(op.kind, op.stage, op.microbatch): i for i, op in enumerate(seq)}
    phi = pos[("F", s, j)]
    beta = pos.get(("B", s, j), pos.get(("I", s, j)))
    fwd = [None]
    if 1 in options:
        fwd += [beta] if positions == "adjacent" else list(range(phi + 1, beta + 1))
    bwd = [None]
    if ("W", s, j) in pos:
        rho = pos[("W", s, j)]
        gaps = [rho] if positions == "adjacent" else list(range(beta + 1, rho + 1))
        bwd += [(o, h) for o in (2, 3) if o in options for h in gaps]
    return [(f, b) for f in fwd for b in bwd]


def _gpu_variants(seq, options, positions):
    """Every order of one GPU: an assignment of choices to its pairs, and every order of the
    items inside each gap (option 3 is the block ``R, RI``)."""
    pairs = [(op.stage, op.microbatch) for op in seq if op.kind == "F"]
    per = [_pair_options(seq, s, j, options, positions) for s, j in pairs]
    for combo in product(*per):
        gaps: dict[int, list] = {}
        for (s, j), (f, b) in zip(pairs, combo):
            if f is not None:
                gaps.setdefault(f, []).append((Op(s, "R", j),))
            if b is not None:
                o, h = b
                gaps.setdefault(h, []).append(
                    (Op(s, "R", j),) if o == 2 else (Op(s, "R", j), Op(s, "RI", j)))
        keys = sorted(gaps)
        for perm in product(*(permutations(gaps[g]) for g in keys)):
            inserted = dict(zip(keys, perm))
            out = []
            for i, op in enumerate(seq):
                for block in inserted.get(i, ()):
                    out.extend(block)
                out.append(op)
            yield tuple(out)


def brute_force(base: Schedule, limit, options, positions, cap: int = MAX_COMBOS):
    """The least makespan over every choice (None: no choice fits). ``limit``: ``("K", K)`` or
    ``("bytes", budget)``. GPUs are independent for memory, so each GPU's variants are
    filtered first (by the simulator's peak of that GPU) and only its subsequence-minimal
    fitting variants kept (removing ops from one GPU's order never delays an ASAP op: the
    precedence graph loses nodes and edges only), then all combinations are timed."""
    kind, value = limit
    inst = base.instance
    measure = inst.with_(K=None, memory=None if inst.memory is None
                         else MemoryModel(**{**_fields(inst.memory), "budget": None}))
    fitting = []
    for p, seq in enumerate(base.orders):
        ok = []
        for n, variant in enumerate(_gpu_variants(seq, options, positions)):
            if n >= cap:
                return "too many"
            orders = tuple(variant if q == p else base.orders[q] for q in range(inst.P))
            res = simulate(Schedule(measure, orders))
            if not res.valid:   # e.g. a deadlock is a fact of the orders, not the memory
                continue
            peak = res.peak_memory[p] if kind == "K" else res.peak_bytes[p]
            if peak <= value:
                ok.append(variant)
        fitting.append([x for x in ok if not any(y != x and _subsequence(y, x) for y in ok)])
    total = 1
    for ok in fitting:
        total *= len(ok)
    if total > 4 * cap:
        return "too many"
    limited = inst.with_(K=value, memory=None) if kind == "K" else inst
    best = None
    for orders in product(*fitting):
        res = simulate(Schedule(limited, orders))
        assert res.valid, res.errors[:2]  # the per-GPU filter and the whole check agree
        best = res.makespan if best is None else min(best, res.makespan)
    return best


def _subsequence(short, long) -> bool:
    """Whether ``short`` is ``long`` with some ops left out."""
    it = iter(long)
    return len(short) < len(long) and all(op in it for op in short)


def _fields(mm: MemoryModel) -> dict:
    return {"activation": mm.activation, "kept_after_input": mm.kept_after_input,
            "kept_gradient": mm.kept_gradient, "static": mm.static,
            "transient": mm.transient, "budget": mm.budget}


OPTION_SETS = ((1,), (1, 2), (1, 3), (1, 2, 3), (2, 3), (3,))


def random_case(rng: random.Random):
    """A small split instance with a random valid order, memory limit and option set."""
    P = rng.choice((1, 2, 2))
    m = rng.choice((1, 2, 2, 3)) if P == 2 else rng.choice((2, 3))
    S = P
    per = lambda lo, hi: [rng.randint(lo, hi) for _ in range(S)]  # noqa: E731
    inst = Instance(P=P, m=m, f=per(1, 3), b_I=per(1, 3), b_W=per(1, 2),
                    c=rng.choice((0, 0, 1)))
    if rng.random() < 0.3:  # a family that defers W ops (room for options 2 and 3)
        from schedules.generators import generate

        base = generate(rng.choice(("zb-h1", "zb-h2")), inst)
    else:
        base = random_schedule(inst, lambda n: rng.randrange(n))
    base = Schedule(inst, tuple(tuple(op for op in seq if op.kind != "R") for seq in base.orders))
    options = rng.choice(OPTION_SETS)
    positions = rng.choice(("anywhere", "adjacent"))
    if rng.random() < 0.3:  # the activation count
        peak = max(simulate(base).peak_memory)
        return base, ("K", rng.randint(1, peak)), options, positions
    a = per(2, 6)
    g = [rng.randint(1, x) for x in a]
    d = [rng.randint(0, x) for x in g]
    trans = {}
    for kind in rng.sample(("F", "B", "I", "W", "R", "RI"), rng.randint(0, 3)):
        trans[kind] = per(0, 3) if rng.random() < 0.5 else rng.randint(0, 3)
    mm = MemoryModel(activation=a, kept_after_input=g, kept_gradient=d,
                     static=[rng.randint(0, 2) for _ in range(P)], transient=trans)
    inst = inst.with_(memory=mm)
    base = base.with_instance(inst)
    top = max(simulate(base).peak_bytes)
    return base, ("bytes", rng.randint(max(1, 2 * int(top) // 3), int(top))), options, positions


def _solve(base, limit, options, positions):
    kind, value = limit
    if kind == "K":
        return optimal_remat(base, K=value, options=options, positions=positions, time_limit=30)
    return optimal_remat(base, budget_bytes=value, options=options, positions=positions,
                         time_limit=30)


def test_equals_brute_force_on_random_small_cases():
    """>= 100 random small cases (P <= 2, m <= 3, per-stage costs, c, count and bytes models
    with d_s and per-stage transients, every option set): optimal_remat equals brute force,
    proves it, and its schedule is valid within the limit."""
    rng = random.Random(20261202)
    compared = infeasible = third = 0
    tries = 0
    while compared < 110:
        tries += 1
        assert tries < 1000
        base, limit, options, positions = random_case(rng)
        best = brute_force(base, limit, options, positions)
        if best == "too many":
            continue
        res = _solve(base, limit, options, positions)
        compared += 1
        if best is None:
            assert res.status == "infeasible", (limit, options, res)
            infeasible += 1
            continue
        assert res.status == "optimal", res.stats
        assert res.makespan == best, (limit, options, positions, res.makespan, best)
        sim = simulate(res.schedule)
        assert sim.valid and sim.makespan == best
        third += bool(res.input_recomputed)
        assert all(op.kind == "RI" for op in res.input_recomputed)
        assert (not res.input_recomputed) or 3 in options
    assert infeasible < compared and third > 0  # the sample holds both kinds and option 3


def third_option_example():
    """The docs/remat.md example: ZB-H2 ``P = 2, m = 3``, ``f = b_I = b_W = 1``, ``a_s = g_s = 2``
    bytes of which ``d_s = 1`` are gradients, budget 4 bytes."""
    from schedules.generators import generate

    mm = MemoryModel(activation=[2, 2], kept_after_input=[2, 2], kept_gradient=[1, 1])
    return generate("zb-h2", Instance(P=2, m=3, f=1, b_I=1, b_W=1, memory=mm))


def test_third_option_beats_the_first_two_on_the_docs_example():
    base = third_option_example()
    got = {o: optimal_remat(base, budget_bytes=4, options=o) for o in ((1,), (1, 2), (1, 2, 3))}
    assert got[(1,)].status == "infeasible"
    assert (got[(1, 2)].status, got[(1, 2)].makespan) == ("optimal", 13)
    assert (got[(1, 2, 3)].status, got[(1, 2, 3)].makespan) == ("optimal", 12)
    assert [str(op) for op in got[(1, 2, 3)].input_recomputed] == ["1RI1"]
    for o in ((1, 2), (1, 2, 3)):  # the same gap, adjacent positions, against brute force
        adj = optimal_remat(base, budget_bytes=4, options=o, positions="adjacent")
        assert brute_force(base, ("bytes", 4), o, "adjacent", cap=5000) == adj.makespan


def test_default_options_unchanged():
    """No options given: option 1 only, the result of the older signature; backward=True is
    options (1, 2)."""
    from schedules.generators import generate

    base = generate("zb-h1", Instance(P=3, m=4, f=1, b_I=1, b_W=1))
    a = optimal_remat(base, K=2, backward=True)
    b = optimal_remat(base, K=2, options=(1, 2))
    assert (a.status, a.makespan, a.schedule.orders) == (b.status, b.makespan, b.schedule.orders)
    assert a.options == (1, 2) and optimal_remat(base, K=3).options == (1,)
    with pytest.raises(RematError):
        optimal_remat(base, K=2, options=(4,))


def test_planted_gap_order_error_is_caught(monkeypatch):
    """A model that drops the in-gap transient constraints (a planted bug) returns schedules
    above the budget or below brute force on some case; the brute force or the independent
    check catches it."""
    import schedules.remat_optimal as ro

    monkeypatch.setattr(ro, "_residual", lambda mem, pr, kind: 0)
    rng = random.Random(7)
    caught = 0
    for _ in range(200):
        base, limit, options, positions = random_case(rng)
        if limit[0] != "bytes" or not base.instance.memory.transient:
            continue
        best = brute_force(base, limit, options, positions)
        if best == "too many":
            continue
        try:
            res = _solve(base, limit, options, positions)
        except AssertionError:
            caught += 1
            continue
        if (res.makespan if res.status != "infeasible" else None) != best:
            caught += 1
        if caught:
            break
    assert caught


def _bound_violations(bound, seed: int, cases: int = 12) -> int:
    """How many of ``cases`` random small cases (count model ``K`` and byte budgets) have
    ``bound(instance)`` above the brute-force optimum over all three options."""
    rng = random.Random(seed)
    checked = bad = 0
    while checked < cases:
        base, limit, _, _ = random_case(rng)
        best = brute_force(base, limit, (1, 2, 3), "anywhere")
        if best in (None, "too many"):
            continue
        inst = (base.instance.with_(K=limit[1], memory=None) if limit[0] == "K" else
                base.instance.with_(memory=MemoryModel(**{**_fields(base.instance.memory),
                                                          "budget": limit[1]})))
        bad += bound(inst) > best
        checked += 1
    return bad


def _full_model_bound(inst) -> Fraction:
    return Fraction(lower_bound(inst, backward_remat=True).value)


@pytest.mark.parametrize("seed", range(3))
def test_backward_remat_bound_covers_the_third_option(seed):
    """bounds.lower_bound(inst, backward_remat=True) is never above the brute-force optimum of
    orders with all three options (an RI only adds work: docs/theory.md A.11, lemma RI)."""
    assert _bound_violations(_full_model_bound, seed) == 0


def test_a_planted_bound_error_is_caught():
    """The same check finds a bound one unit too high."""
    assert _bound_violations(lambda inst: _full_model_bound(inst) + 1, 0) > 0


def test_third_option_with_transients_equals_brute_force():
    """Orders that defer W ops (ZB-H1, ZB-H2, P = 2), all three options, bytes with d_s and
    per-stage transients of R, RI and I (the in-gap order matters): equal to brute force."""
    from schedules.generators import generate

    rng = random.Random(3)
    compared = chosen = 0
    while compared < 20:
        m = rng.choice((2, 3))
        a = [rng.randint(2, 5) for _ in range(2)]
        g = [rng.randint(1, x) for x in a]
        d = [rng.randint(0, x) for x in g]
        trans = {k: [rng.randint(0, 3) for _ in range(2)] for k in ("R", "RI", "I")}
        mm = MemoryModel(activation=a, kept_after_input=g, kept_gradient=d, transient=trans)
        inst = Instance(P=2, m=m, f=rng.randint(1, 2), b_I=rng.randint(1, 2),
                        b_W=rng.randint(1, 2), memory=mm)
        base = generate(rng.choice(("zb-h1", "zb-h2")), inst)
        top = int(max(simulate(base).peak_bytes))
        budget = rng.randint(top // 2, top)
        positions = rng.choice(("anywhere", "adjacent"))
        best = brute_force(base, ("bytes", budget), (1, 2, 3), positions, cap=800)
        if best == "too many":
            continue
        res = optimal_remat(base, budget_bytes=budget, options=(1, 2, 3), positions=positions)
        compared += 1
        if best is None:
            assert res.status == "infeasible"
            continue
        assert res.status == "optimal" and res.makespan == best, (res, best)
        chosen += bool(res.input_recomputed)
    assert chosen >= 2


def _one_pair(order, **memory):
    mm = MemoryModel(activation=[4], kept_after_input=[3], kept_gradient=[2], **memory)
    inst = Instance(P=1, m=1, f=1, b_I=2, b_W=1, memory=mm)
    return simulate(Schedule.from_strings(inst, {0: order}))


def test_the_three_options_hold_what_the_model_says():
    """Hand-checked bytes (a = 4, g = 3, d = 2; f = 1, b_I = 2, b_W = 1; RI transient 5):
    keep: 4 until I ends (t = 3), then g = 3 until W ends; option 2: I frees a - d = 2, R
    stores g - d = 1; option 3: I frees all 4, R stores 1, RI stores d = 2 (+ its transient)."""
    keep = _one_pair(["0F0", "0I0", "0W0"], transient={"RI": 5})
    assert keep.makespan == 4 and keep.memory_profile_bytes(0) == [(0, 4), (3, 3), (4, 0)]
    two = _one_pair(["0F0", "0I0", "0R0", "0W0"], transient={"RI": 5})
    assert two.makespan == 5 and two.memory_profile_bytes(0) == [(0, 4), (3, 3), (5, 0)]
    three = _one_pair(["0F0", "0I0", "0R0", "0RI0", "0W0"], transient={"RI": [5]})
    assert three.makespan == 7 and three.peak_bytes == [8]
    assert three.memory_profile_bytes(0) == [(0, 4), (3, 1), (4, 8), (6, 3), (7, 0)]
    assert not _one_pair(["0F0", "0I0", "0R0", "0RI0", "0W0"], transient={"RI": 5},
                         budget=7).valid


@pytest.mark.parametrize("order, words", [
    (["0F0", "0I0", "0RI0", "0W0"], "has no backward recompute"),
    (["0F0", "0I0", "0R0", "0W0", "0RI0"], "after 0W0"),
    (["0F0", "0I0", "0RI0", "0R0", "0W0"], "before the backward recompute"),
    (["0F0", "0I0", "0R0", "0RI0", "0RI0", "0W0"], "recomputed at most once"),
])
def test_the_validator_names_a_misplaced_RI(order, words):
    res = _one_pair(order)
    assert not res.valid and any(words in e for e in res.errors), res.errors


def test_RI_needs_the_split_form():
    inst = Instance(P=1, m=1, f=1, b=2)
    res = simulate(Schedule.from_strings(inst, {0: ["0F0", "0B0", "0RI0"]}))
    assert not res.valid and any(e.startswith("durations") for e in res.errors)


def test_cli_remat_options(tmp_path):
    import json
    import subprocess
    import sys

    from schedules.io import document_from_schedule

    path = tmp_path / "zbh2.json"
    path.write_text(json.dumps(document_from_schedule(third_option_example())))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "pipebounds", "remat", str(path),
                               "--budget-bytes", "4", "--json", *args],
                              capture_output=True, text=True)

    out = json.loads(run("--options", "1,2,3").stdout)
    assert (out["status"], out["makespan"], out["options"]) == ("optimal", 12, [1, 2, 3])
    assert out["input_recomputed"] == ["1RI1"] and "1RI1" in out["recomputed"]
    assert json.loads(run("--backward").stdout)["makespan"] == 13
    assert json.loads(run().stdout)["options"] == [1]
    bad = run("--options", "1,4")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "Traceback" not in bad.stderr


def test_gantt_and_trace_draw_backward_recomputes_and_RI():
    """A backward R (internal kind RW) and an RI are drawn and named (the Gantt data used to
    index KINDS with RW: the trace export failed and the picture left the op out)."""
    from pipebounds.viz.chrome_trace import chrome_trace
    from pipebounds.viz.gantt_data import gantt_data

    res = optimal_remat(third_option_example(), budget_bytes=4, options=(1, 2, 3))
    names = [e["name"] for e in chrome_trace(res.schedule)["traceEvents"] if e.get("ph") == "X"]
    assert "1R1" in names and "1RI1" in names
    data = gantt_data(res.schedule)
    assert sorted(data.op_name(k) for k in range(data.n_ops)) == sorted(
        str(op) for _, op in res.schedule.ops())


def test_documents_carry_RI_kept_gradient_and_per_stage_transients():
    """An orders document with RI ops, memory.kept_gradient and a per-stage transient reads back
    as the same schedule (same peak bytes); a bad kept_gradient is one clear error."""
    from schedules.io import document_from_schedule, schedule_from_document
    from schedules.memory import MemoryModelError, memory_from_json

    res = optimal_remat(third_option_example(), budget_bytes=4, options=(1, 2, 3))
    inst = res.schedule.instance
    mm = MemoryModel(**{**_fields(inst.memory), "transient": {"RI": [1, 0], "I": 1}})
    sched = res.schedule.with_instance(inst.with_(memory=mm))
    doc = document_from_schedule(sched)
    assert doc["memory"]["kept_gradient"] == [1, 1]
    assert doc["memory"]["transient"] == {"I": 1, "RI": [1, 0]}
    back = schedule_from_document(doc)
    assert back.orders == sched.orders
    assert simulate(back).peak_bytes == simulate(sched).peak_bytes
    with pytest.raises(MemoryModelError, match="kept_gradient"):
        memory_from_json({"activation": [2], "kept_after_input": [1], "kept_gradient": [2],
                          "budget": None})
    with pytest.raises(MemoryModelError, match="transient.RI"):
        memory_from_json({"activation": [2, 2], "transient": {"RI": [1]}, "budget": None})
