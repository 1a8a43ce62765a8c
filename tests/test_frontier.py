"""The memory frontier K* (docs/theory_frontier.md): formulas, construction, command, checks."""

import json
import subprocess
import sys
from fractions import Fraction

import pytest

from bounds import frontier as kf
from bounds.frontier import fill_drain, kf3_value, memory_time_threshold, single_slot_free
from pipebounds.services.frontier import frontier
from proofs_checks.frontier import grid_exact, table_agreement
from pipebounds.constructions.frontier import frontier_schedule
from schedules.instance import Instance
from schedules.simulate import simulate


@pytest.mark.parametrize("P,m,f,b,K", [(4, 8, 1, 2, 2), (3, 9, 1, 2, 2), (5, 12, 1, 2, 2),
                                       (3, 6, 1, 1, 2), (4, 4, 1, 2, 1)])
def test_construction_reaches_fill_drain_with_K(P, m, f, b, K):
    inst = Instance(P=P, m=m, f=f, b=b)
    s = frontier_schedule(inst, K)
    r = simulate(s)
    assert r.valid and r.makespan == fill_drain(inst) and max(r.peak_memory) <= K


def test_construction_returns_none_below_the_bound():
    # K = 1 with m > 2 + b/f: T3 > T1 (KF1), so no schedule can exist
    assert frontier_schedule(Instance(P=3, m=5, f=1, b=2), 1) is None


def test_kf1_threshold():
    assert single_slot_free(Instance(P=3, m=4, f=1, b=2))
    assert not single_slot_free(Instance(P=3, m=5, f=1, b=2))
    assert single_slot_free(Instance(P=1, m=9))


def test_kf3_below_1f1b_and_known_values():
    for P in range(1, 7):
        for m in range(1, 13):
            inst = Instance(P=P, m=m, f=1, b=2)
            assert 1 <= kf3_value(inst) <= min(m, P)
    # the table's independent optima: P=4, m=8, f=1, b=2 has OPT(1)=36 > 33 = OPT(2)
    assert kf3_value(Instance(P=4, m=8, f=1, b=2)) == 2
    assert memory_time_threshold(Instance(P=6, m=40, f=1, b=2)) >= 3


def test_frontier_exact_and_curve():
    fr = frontier(Instance(P=4, m=8, f=1, b=2), time_limit=0)
    assert fr.K_star_exact and fr.K_star == 2 and fr.optimum_unconstrained == 33
    assert [(p.K, p.optimum) for p in fr.curve] == [(1, Fraction(36)), (2, Fraction(33))]


def test_frontier_f_greater_than_b_is_a_bracket_without_solving():
    fr = frontier(Instance(P=3, m=6, f=3, b=1), time_limit=0, nodes=20000)
    assert fr.K_star_low <= fr.K_star_high
    assert fr.K_star_low == 2  # the bound alone; OPT(2) = 33 > 32 needs a solve


def test_cli_frontier_json():
    out = subprocess.run([sys.executable, "-m", "pipebounds", "frontier", "-P", "3", "-m", "9",
                          "--json"], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert d["K_star"] == 2 and d["K_star_exact"] is True and d["optimum_unconstrained"] == 33
    assert d["optimum_unconstrained_exact"] == "33"
    assert [p["K"] for p in d["curve"]] == [1, 2] and d["curve"][1]["optimum"] == 33
    assert d["curve"][1]["optimum_exact"] == "33"
    bad = subprocess.run([sys.executable, "-m", "pipebounds", "frontier", "-P", "0", "-m", "3"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def _rows():
    # hand-made rows in the table's form, values proven by the exact engine (pipebounds/data/optima.jsonl)
    base = Instance(P=4, m=8, f=1, b=2)
    return [(base.with_(K=1), Fraction(36)), (base.with_(K=2), Fraction(33)),
            (base.with_(K=3), Fraction(33))]


def test_table_check_passes_and_catches_a_planted_error():
    ok = table_agreement(_rows(), lambda i: frontier(i, time_limit=0))
    assert ok.ok

    class Wrong:  # K* one too high
        def __init__(self, fr):
            self.fr = fr
        K_star_exact = True
        optimum_unconstrained = property(lambda s: s.fr.optimum_unconstrained)
        K_star_low = property(lambda s: s.fr.K_star + 1)
        K_star_high = property(lambda s: s.fr.K_star + 1)
        K_star = property(lambda s: s.fr.K_star + 1)

    bad = table_agreement(_rows(), lambda i: Wrong(frontier(i, time_limit=0)))
    assert not bad.ok and "K* = 3" in bad.detail


def test_grid_check_catches_a_planted_kf3_error():
    grid = dict(P=range(2, 4), m=range(4, 7), ratios=((1, 2),))
    f = lambda i: frontier(i, time_limit=0)  # noqa: E731
    assert grid_exact(grid, f, kf3_value).ok
    assert not grid_exact(grid, f, lambda i: kf3_value(i) + 1).ok
    # a planted error in the KF2 formula is caught too (through kf3_value)
    orig = kf.memory_time_condition
    try:
        kf.memory_time_condition = lambda inst, d, K: K > 1 and orig(inst, d, K - 1)
        assert not grid_exact(grid, f, kf.kf3_value).ok
    finally:
        kf.memory_time_condition = orig


def test_kf4_check_passes_on_the_table_and_catches_a_planted_error():
    from bounds.frontier import kf4_value
    from proofs_checks.frontier import kf4_agreement
    from proofs_checks.table import optima_rows

    rows = optima_rows(lambda i: i.v == 2 and not i.split and not i.c)
    good = kf4_agreement(rows, kf4_value)
    assert good.ok and good.instances >= 20
    bad = kf4_agreement(rows, lambda i: None if kf4_value(i) is None else kf4_value(i) + 1)
    assert not bad.ok


# --- KF5 (v >= 2: first-backward and lifespan thresholds; docs/theory_frontier.md §8) ---

def _kf5_inputs():
    from proofs_checks.frontier import kf5_rows
    from proofs_checks.table import optima_rows

    return kf5_rows(), optima_rows(lambda i: i.v == 2 and not i.split and not i.c)


def test_kf5_check_passes_and_is_mostly_exact():
    from proofs_checks.frontier import kf5_agreement

    split, fused = _kf5_inputs()
    res = kf5_agreement(split, fused, kf.kf5_value)
    assert res.ok, res.detail
    assert res.instances == len(split) + 123 and len(split) >= 40


@pytest.mark.parametrize("planted", [
    lambda inst, T: kf.kf5_value(inst, T) + 1,
    lambda inst, T: kf.kf5_value(inst, T - 1),          # OPT(inf) read one unit low
])
def test_kf5_planted_errors_are_caught(planted):
    from proofs_checks.frontier import kf5_agreement

    split, fused = _kf5_inputs()
    assert not kf5_agreement(split, fused, planted).ok


def test_kf5_check_rejects_a_curve_that_does_not_prove_K_star():
    from proofs_checks.frontier import kf5_agreement

    split, _ = _kf5_inputs()
    inst, opt_inf, opts = split[0]
    bad = dict(opts)
    bad[max(bad) - 1] = opt_inf            # OPT(K* - 1) = OPT(inf): K* would be smaller
    assert not kf5_agreement([(inst, opt_inf, bad)], [], kf.kf5_value).ok


def test_kf5_thresholds_are_the_crossings_of_mw11_and_mw7():
    """K_F and K_L are the least K whose MW11 / MW7 is at most OPT(inf): the term is above it
    at K - 1 (when K > 1) and not above at K; fused, K_F has its closed form."""
    from bounds.multi_wave import first_backward_value, memory_slots_value, stages_by_gpu

    split, fused = _kf5_inputs()
    for inst, T, _ in split[:12]:
        for thr, term in ((kf.first_backward_threshold, first_backward_value),
                          (kf.lifespan_threshold, memory_slots_value)):
            K = thr(inst, T)
            assert K == inst.v * inst.m or term(inst.with_(K=K)) <= T
            assert K == 1 or term(inst.with_(K=K - 1)) > T
    inf = {i: o for i, o in fused if i.K is None}
    for inst, T in list(inf.items())[:30]:
        S, u = inst.S, inst.f + inst.b
        need = max(S * inst.f + (S - 1 - st[-1]) * inst.b + inst.v * inst.m * u + st[0] * inst.b
                   for st in stages_by_gpu(inst)) - T
        closed = max(1, -(-need // inst.f))
        assert kf.first_backward_threshold(inst, T) == min(closed, inst.v * inst.m)


def test_kf5_on_one_stored_row_is_reproduced_by_an_exact_solve():
    """The smallest stored row's K* re-proven: OPT(K* - 1) > OPT(inf) = OPT(K*) (CP-SAT, no
    bound of bounds/)."""
    from pipebounds.search.cpsat import solve_cpsat

    split, _ = _kf5_inputs()
    inst, opt_inf, opts = min(split, key=lambda r: (r[0].P * r[0].m, r[1]))
    K = max(opts)
    below = solve_cpsat(inst.with_(K=K - 1), time_limit=20, use_theory=False)
    at = solve_cpsat(inst.with_(K=K), time_limit=20, use_theory=False)
    assert below.status == at.status == "optimal"
    assert below.makespan > opt_inf == at.makespan
    assert kf.kf5_value(inst, opt_inf) <= K


def test_kf5_refuses_instances_outside_its_statement():
    for inst in (Instance(P=2, m=2, f=1, b=2), Instance(P=2, m=2, v=2, f=1, b=2, c=1),
                 Instance(P=2, m=2, v=2, f=[1, 2, 1, 1], b=2)):
        with pytest.raises(ValueError):
            kf.kf5_value(inst, Fraction(100))


# --- KF5 attained (K* closed by KF5 and a schedule; data/frontier_v2_split_kf5.jsonl) ---

def test_kf5_attained_check_passes_and_closes_most_stored_rows():
    import re

    from proofs_checks.frontier import kf5_attained_agreement, kf5_attained_rows

    rows = kf5_attained_rows()
    res = kf5_attained_agreement(rows, kf.kf5_value)
    assert res.ok, res.detail
    assert res.instances == len(rows) >= 100
    closed, n, equal = map(int, re.search(r"closed on (\d+) of (\d+) .*KF5 = K\* on (\d+)",
                                          res.detail).groups())
    # the stored bracket of every row: closed exactly where the check says so
    assert closed == sum(r["K_star_low"] == r["K_star_high"] for _, r in rows)
    assert n == len(rows) and closed >= 0.95 * n and equal >= 0.9 * n


def test_kf5_attained_planted_kf5_one_too_high_is_caught():
    from proofs_checks.frontier import kf5_attained_agreement, kf5_attained_rows

    planted = kf5_attained_agreement(kf5_attained_rows(),
                                     lambda inst, T: kf.kf5_value(inst, T) + 1)
    assert not planted.ok and "KF5 =" in planted.detail


def test_kf5_attained_rejects_a_schedule_that_does_not_fit_its_memory():
    """A row whose schedule is claimed at one less memory than its peak fails."""
    from proofs_checks.frontier import kf5_attained_agreement, kf5_attained_rows

    inst, row = next((i, r) for i, r in kf5_attained_rows() if r["K_star_high"] > 1)
    bad = {**row, "K_star_high": row["K_star_high"] - 1}
    assert not kf5_attained_agreement([(inst, bad)], kf.kf5_value).ok
    bad = {**row, "opt_inf": str(Fraction(row["opt_inf"]) - 1)}   # OPT(inf) one unit low
    assert not kf5_attained_agreement([(inst, bad)], kf.kf5_value).ok


def test_kf5_attained_resolve_reproves_a_miss():
    """Full mode's re-solve on the smallest row where KF5 < K*: OPT(inf) and the infeasible
    decision at KF5 re-proven by CP-SAT without any bound; a wrong stored OPT(inf) fails."""
    from proofs_checks.frontier import _resolve_kf5_row, kf5_attained_rows

    inst, row = min(((i, r) for i, r in kf5_attained_rows()
                     if "infeasible" in r["decisions"].values()),
                    key=lambda ir: (ir[0].P * ir[0].m, Fraction(ir[1]["opt_inf"])))
    assert _resolve_kf5_row(inst, row) == ("", 0)
    assert _resolve_kf5_row(inst, {**row, "opt_inf": str(Fraction(row["opt_inf"]) + 1)})[0]
    # a K recorded infeasible where a schedule reaches OPT(inf): the re-solve finds it
    feasible_K = next(K for K, v in row["decisions"].items() if v == "feasible")
    bad = {**row, "decisions": {**row["decisions"], feasible_K: "infeasible"}}
    assert "was found" in _resolve_kf5_row(inst, bad)[0]
