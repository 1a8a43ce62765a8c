"""The exact search (pipebounds.search): validity, honesty of statuses, optimality checked against
an independent brute force, hand-derived optima, random valid schedules and the table of optima."""

from __future__ import annotations

import itertools
import json
import os
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from schedules import Instance, Op, Schedule, simulate
from pipebounds.search import solve
from pipebounds.search.bnb import Search
from pipebounds.search.model import Model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "data", "optima.jsonl")


def brute_force(inst: Instance) -> Fraction:
    """Minimum makespan over *all* per-GPU orders and remat choices (tiny instances only).

    Independent of the search: every subset of recomputed pairs (when K is finite), every
    permutation of each GPU's ops that keeps the GPU-local precedences (F before R before the
    input-gradient op before W), timed and checked by the simulator.
    """
    split = inst.split
    pairs = [(j, s) for j in range(inst.m) for s in range(inst.S)]
    best = None
    subsets = [()] if inst.K is None else [c for r in range(len(pairs) + 1)
                                           for c in itertools.combinations(pairs, r)]
    for remat in subsets:
        per_gpu = [[] for _ in range(inst.P)]
        for j, s in pairs:
            ops = [Op(s, "F", j)]
            if (j, s) in remat:
                ops.append(Op(s, "R", j))
            ops += [Op(s, "I", j), Op(s, "W", j)] if split else [Op(s, "B", j)]
            per_gpu[inst.gpu(s)].append(ops)
        choices = [list(interleavings([tuple(ch) for ch in chains])) for chains in per_gpu]
        for combo in itertools.product(*choices):
            res = simulate(Schedule(inst, combo))
            if res.valid and (best is None or res.makespan < best):
                best = res.makespan
    return best


def interleavings(chains):
    """Every merge of the chains (each kept in its order): the orders of one GPU that respect
    its local precedences."""
    chains = [c for c in chains if c]
    if not chains:
        yield ()
        return
    for i, ch in enumerate(chains):
        rest = chains[:i] + [ch[1:]] + chains[i + 1:]
        for tail in interleavings(rest):
            yield (ch[0],) + tail


def check(res, inst):
    assert res.schedule is not None
    sim = simulate(res.schedule)
    assert sim.valid, sim.errors
    assert sim.makespan == res.makespan
    assert res.lower_bound <= res.makespan
    if res.status == "optimal":
        assert res.lower_bound == res.makespan


@pytest.mark.parametrize("kw", [
    dict(P=2, m=2, K=1), dict(P=2, m=2, K=None), dict(P=2, m=2, K=1, f=2, b=1),
    dict(P=1, m=2, K=1, b_I=1, b_W=2), dict(P=2, m=1, K=1, v=2, placement="vshape"),
    dict(P=2, m=1, K=1, v=2, placement="looped"), dict(P=3, m=1, K=1, f=2, b=3),
])
def test_search_matches_brute_force(kw):
    inst = Instance(**kw)
    res = solve(inst, use_known=False)
    check(res, inst)
    assert res.status == "optimal"
    assert res.makespan == brute_force(inst)


@pytest.mark.parametrize("P,m,K,f,b", [(1, 4, 1, 1, 2), (1, 3, None, 2, 3), (3, 1, 1, 1, 2),
                                       (4, 1, 1, 3, 1)])
def test_hand_derived_optima(P, m, K, f, b):
    """P = 1: a GPU alone does all the work, OPT = m(f+b) (F, B alternating needs K = 1);
    m = 1: the chain of the only microbatch, OPT = P(f+b) (one activation per GPU)."""
    res = solve(Instance(P=P, m=m, K=K, f=f, b=b), use_known=False)
    assert res.status == "optimal"
    assert res.makespan == (m if P == 1 else P) * (f + b)


def test_unconstrained_single_wave_is_fill_drain():
    """K unbounded, v = 1, b >= f: OPT = (m + P - 1)(f + b) (1F1B reaches it; the search proves
    nothing shorter exists)."""
    for P, m in [(2, 3), (3, 3), (3, 4)]:
        res = solve(Instance(P=P, m=m, K=None), use_known=False)
        assert res.status == "optimal"
        assert res.makespan == (m + P - 1) * 3


@settings(max_examples=12)
@given(st.data())
def test_no_random_valid_schedule_beats_the_optimum(data):
    from strategies import schedules_of

    P = data.draw(st.integers(1, 3))
    m = data.draw(st.integers(1, 3))
    K = data.draw(st.sampled_from([1, 2, None]))
    split = data.draw(st.booleans())
    inst = Instance(P=P, m=m, K=K, **(dict(b_I=1, b_W=1) if split else dict(b=2)))
    res = solve(inst, use_known=False)
    check(res, inst)
    assert res.status == "optimal"
    sched = data.draw(schedules_of(inst))
    assert simulate(sched).makespan >= res.makespan


def test_time_limit_gives_honest_status():
    inst = Instance(P=4, m=8, K=2, f=1, b=3)
    res = solve(inst, time_limit=0.3)
    check(res, inst)
    assert res.status in ("optimal", "feasible")
    if res.status == "feasible":
        assert res.lower_bound < res.makespan


def test_search_finds_only_better_than_upper():
    mdl = Model.of(Instance(P=2, m=3, K=1))
    out = Search(mdl).run(upper=12)  # 12 is optimal (fill-drain): nothing strictly better
    assert out.complete and out.orders is None


def test_table_sample_matches_fresh_solves():
    if not os.path.exists(TABLE):
        pytest.skip("pipebounds/data/optima.jsonl not generated yet")
    with open(TABLE, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    small = [r for r in rows if r["status"] == "optimal" and r["P"] * r["m"] * r["v"] <= 8]
    assert small, "the table has no small proven rows"
    small.sort(key=lambda r: json.dumps(r, sort_keys=True))  # the same sample on every run
    sample = small[:: max(1, len(small) // 8)][:8]
    for row in sample:
        inst = Instance.from_dict(row)
        res = solve(inst, time_limit=20)
        check(res, inst)
        assert res.status == "optimal"
        assert res.makespan == Fraction(row["opt"]), row


# ------------------------------------------------------------------------- command line
def test_cli_solve_json(capsys):
    from pipebounds.cli import main
    from schedules.io import schedule_from_document

    code = main(["solve", "-P", "3", "-m", "3", "-K", "1", "--time-limit", "20", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    res = json.loads(out)
    for key in ("status", "makespan", "lower_bound", "seconds", "schedule", "nodes", "engine",
                "makespan_exact", "lower_bound_exact"):
        assert key in res
    assert res["status"] == "optimal" and res["makespan"] == res["lower_bound"]
    sim = simulate(schedule_from_document(res["schedule"]))
    assert sim.valid and sim.makespan == Fraction(res["makespan_exact"])


def test_cli_solve_batch_keeps_going(tmp_path, capsys):
    from pipebounds.cli import main

    path = tmp_path / "batch.jsonl"
    path.write_text('{"P": 2, "m": 2, "K": 1}\n{"P": 2}\n'
                    '{"P": 2, "m": 2, "b_input": 1, "b_weight": 1, "K": "inf"}\n')
    code = main(["solve", "--batch", str(path), "--json", "--time-limit", "10"])
    out, _ = capsys.readouterr()
    res = json.loads(out)
    assert code == 0 and len(res) == 3
    assert res[0]["status"] == "optimal" and res[0]["instance"]["K"] == 1
    assert "error" in res[1]
    assert res[2]["status"] == "optimal" and res[2]["instance"]["b_input"] == 1


def test_cli_solve_bad_input_exits_2(capsys):
    from pipebounds.cli import main

    assert main(["solve", "-P", "0", "-m", "2"]) == 2
    assert main(["solve", "-P", "2", "-m", "2", "--engine", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "Traceback" not in err


@pytest.mark.parametrize("kw", [dict(P=3, m=4, K=1), dict(P=2, m=3, K=2, v=2, placement="vshape"),
                                dict(P=3, m=3, K=2, b_I=1, b_W=1)])
def test_independent_of_the_theory(kw):
    """Without bounds.lower_bound the search proves the same optimum on its own."""
    inst = Instance(**kw)
    a = solve(inst, time_limit=30)
    b = solve(inst, time_limit=30, use_theory=False, use_known=False)
    check(b, inst)
    assert b.stats["independent"] and not a.stats["independent"]
    assert a.status == b.status == "optimal" and a.makespan == b.makespan
