"""Fixed-rule recomputation policies against the exact optimum (schedules/remat_policies.py).

The fixed rules (Megatron's microbatch rule, DeepSpeed's interval at stage granularity,
everything, nothing) recompute right before the backward, so each is one point of the
``adjacent`` choice space; brute force over every subset of checkpointed pairs on small
instances gives that space's optimum, which ``optimal_remat(positions="adjacent")`` must equal
and no rule may beat.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import pytest

from schedules import Instance, simulate
from schedules.generators import generate
from schedules.remat import RematError
from schedules.remat_optimal import optimal_remat
from schedules.remat_policies import (POLICIES, megatron_candidates, remat_policy,
                                      with_checkpoints)


def brute_force_adjacent(schedule, K):
    """Least makespan over every set of pairs recomputed right before their backward."""
    inst = schedule.instance.with_(K=K)
    pairs = [(s, j) for s in range(inst.S) for j in range(inst.m)]
    best = None
    for r in range(len(pairs) + 1):
        for chosen in combinations(pairs, r):
            res = simulate(with_checkpoints(schedule, chosen).with_instance(inst))
            if res.valid and (best is None or res.makespan < best):
                best = res.makespan
    return best


def test_megatron_rule_by_hand_on_1f1b():
    # 1F1B, P = 2, m = 4: GPU 0 has 2 microbatches in flight, GPU 1 one. At K = 2 nothing
    # needs recomputing (k = 2). At K = 1, k = 1 checkpoints microbatches 1 and 3 on GPU 0
    # only, but R1 then runs while 2F2 is live (2 activations): only k = 0 (every pair) fits.
    sched = generate("1f1b", Instance(P=2, m=4))
    cands = dict((c["k"], p) for c, p in megatron_candidates(sched))
    assert sorted(cands[1]) == [(0, 1), (0, 3)]
    assert len(cands[0]) == 8 and cands[2] == []
    r2 = remat_policy(sched, "megatron", K=2)
    assert r2.feasible and r2.parameters["k"] == 2 and r2.recomputed == ()
    r1 = remat_policy(sched, "megatron", K=1)
    assert r1.feasible and r1.parameters == {"k": 0, "max_outstanding": [2, 1]}
    assert r1.makespan == remat_policy(sched, "all", K=1).makespan
    assert not remat_policy(sched, "none", K=1).feasible


@pytest.mark.parametrize("name,inst,K", [
    ("1f1b", Instance(P=2, m=3, f=1, b=2), 1),
    ("1f1b", Instance(P=2, m=4, f=2, b=3), 1),
    ("1f1b", Instance(P=3, m=3, f=1, b=1), 2),
    ("gpipe", Instance(P=2, m=3, f=1, b=2), 2),
    ("interleaved", Instance(P=2, m=2, v=2, f=1, b=2), 2),
])
def test_optimal_adjacent_is_the_brute_force_optimum_and_no_rule_beats_it(name, inst, K):
    sched = generate(name, inst)
    brute = brute_force_adjacent(sched, K)
    opt = optimal_remat(sched, K=K, positions="adjacent", time_limit=10)
    assert opt.status == "optimal" and opt.makespan == brute
    anywhere = remat_policy(sched, "optimal", K=K, time_limit=10)
    assert anywhere.status == "optimal" and anywhere.makespan <= brute
    for policy in POLICIES[1:]:
        r = remat_policy(sched, policy, K=K)
        if r.feasible:
            assert r.makespan >= brute, policy
            res = simulate(r.schedule)
            assert res.valid and res.makespan == r.makespan and max(res.peak_memory) <= K


def test_byte_budget_policies():
    from schedules.memory import memory_from_json

    mm = memory_from_json({"activation": [4, 2], "budget": None})
    inst = Instance(P=2, m=4, f=1, b=2, memory=mm)
    sched = generate("1f1b", inst)
    for policy in POLICIES:
        r = remat_policy(sched, policy, budget_bytes=Fraction(5), time_limit=10)
        if r.feasible:
            assert max(r.peak) <= 5, policy
    assert not remat_policy(sched, "none", budget_bytes=5).feasible
    assert remat_policy(sched, "all", budget_bytes=4).feasible


def test_bad_policy_is_named():
    with pytest.raises(RematError, match="policy must be one of"):
        remat_policy(generate("1f1b", Instance(P=2, m=2)), "greedy", K=1)


def test_cli_remat_and_best_policy(tmp_path, capsys):
    import json

    from pipebounds.cli import main
    from schedules.io import document_from_schedule

    path = tmp_path / "o.json"
    path.write_text(json.dumps(document_from_schedule(generate("1f1b", Instance(P=2, m=4)))))
    assert main(["remat", str(path), "-K", "1", "--policy", "megatron", "--json",
                 "--time-limit", "5"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["policy"] == "megatron" and r["feasible"] and r["parameters"]["k"] == 0
    assert r["optimal_status"] == "optimal"
    assert Fraction(r["ratio_exact"]) == Fraction(r["makespan_exact"]) / Fraction(
        r["optimal_makespan_exact"]) >= 1
    assert simulate(__import__("schedules.io", fromlist=["x"]).schedule_from_document(
        r["schedule"]).with_instance(Instance(P=2, m=4, K=1))).valid
    assert main(["remat", str(path), "-K", "1", "--policy", "none"]) == 0
    assert "infeasible" in capsys.readouterr().out
    assert main(["best", "-P", "2", "-m", "4", "-K", "1", "--policy", "all", "--json",
                 "--solve-time-limit", "0"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert b["policy"] == "all" and all(e["order"] == "all" for e in b["ranking"])
