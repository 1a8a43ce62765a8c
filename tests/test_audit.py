"""pipebounds audit: verdicts reproducible, counterexamples contradict their claims."""

import dataclasses
import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from pipebounds.services.audit import (CLAIMS, VERDICTS, _condition_grid, audit, evaluate,
                               first_rank_idle_bound, json_value, markdown, rank_bubble,
                               remeasure, repeating_bubble, spans, zb_condition)
from schedules.generators import generate
from schedules.instance import Instance
from schedules.io import schedule_from_document
from schedules.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def verdicts():
    return audit()


def test_every_claim_has_a_verdict(verdicts):
    assert len(verdicts) >= 30   # issue 24: at least 30 claims
    for v in verdicts:
        assert v.verdict in VERDICTS
        assert v.claim.definition in ("makespan", "span", "memory", "orders")
        assert (v.counterexample is None) == (v.verdict == "holds")


def test_counterexamples_simulate_to_a_contradiction(verdicts, tmp_path):
    """Every counterexample (and the companion run of a steady-state claim) is a valid
    document for `pipebounds simulate` (one run on the list of them all), whose makespan it
    reproduces, and whose re-measured value contradicts the claim."""
    docs = []
    for v in verdicts:
        if v.counterexample is None:
            continue
        doc = v.counterexample
        docs.append(doc)
        if v.claim.companion is not None:  # a steady-state claim: both runs reproduce
            assert doc["companion"]["m"] > doc["m"] and doc["companion"]["P"] == doc["P"]
            docs.append(doc["companion"])
        measured, claimed, compare = remeasure(v.claim.id, doc)
        assert not compare(measured, claimed), v.claim.id
        assert json.dumps(doc["measured"]) == json.dumps(
            json.loads(json.dumps(json_value(measured))))
    path = tmp_path / "counterexamples.json"
    path.write_text(json.dumps(docs))
    out = subprocess.run([sys.executable, "-m", "pipebounds", "simulate", str(path), "--json"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert len(res) == len(docs) and all(x["valid"] for x in res)
    for doc, x in zip(docs, res):
        assert Fraction(x["makespan_exact"]) == simulate(schedule_from_document(doc)).makespan


def test_claims_md_is_generated_from_the_audit(verdicts):
    assert (ROOT / "docs" / "claims.md").read_text() == markdown(verdicts)


def test_a_planted_wrong_figure_is_caught():
    c = next(c for c in CLAIMS if c.id == "1f1b-bubble")
    assert evaluate(c).verdict == "holds"
    wrong = dataclasses.replace(c, claimed=lambda i: Fraction(i.P, i.m + i.P - 1))
    v = evaluate(wrong)
    assert v.verdict == "false" and v.counterexample["P"] == 2 and v.counterexample["m"] == 1


def test_cli_audit_json_keys():
    out = subprocess.run([sys.executable, "-m", "pipebounds", "audit", "--only", "1f1b", "--json"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    claims = json.loads(out.stdout)["claims"]
    assert {c["id"] for c in claims} == {"1f1b-bubble", "1f1b-memory"}
    for c in claims:
        assert {"claim", "source", "definition", "verdict", "range", "counterexample"} <= set(c)
    bad = subprocess.run([sys.executable, "-m", "pipebounds", "audit", "--only", "nothing"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def _claim(cid):
    return next(c for c in CLAIMS if c.id == cid)


def test_condition_grids_split_on_the_condition():
    sat, vio = _condition_grid(range(2, 4), True)(), _condition_grid(range(2, 4), False)()
    assert sat and vio and len(sat) + len(vio) == 2 * 27
    assert all(zb_condition(i) for i in sat) and not any(zb_condition(i) for i in vio)
    # W + 2B >= 2F and W + 2F >= 2B, B = b_I: (f, b_I, b_W) = (2, 1, 1) violates the first
    assert not zb_condition(Instance(P=2, m=2, f=2, b_I=1, b_W=1))
    assert not zb_condition(Instance(P=2, m=2, f=1, b_I=3, b_W=1))
    assert zb_condition(Instance(P=2, m=2, f=1, b_I=1, b_W=1))


def test_repeating_bubble_is_the_steady_state_growth():
    """V-Min with b_W = 3 f has a bubble in every period: the growth is positive and the same
    from 3P to 4P as from 4P to 5P; with f = b_I = b_W it is zero."""
    def runs(dur):
        return [simulate(generate("v-min", Instance(P=3, m=k * 3, v=2, placement="vshape",
                                                    f=dur[0], b_I=dur[1], b_W=dur[2])))
                for k in (3, 4, 5)]
    r3, r4, r5 = runs((1, 1, 3))
    assert repeating_bubble(r3, r4) > 0 and repeating_bubble(r3, r4) == repeating_bubble(r4, r5)
    r3, r4, r5 = runs((1, 1, 1))
    assert repeating_bubble(r3, r4) == repeating_bubble(r4, r5) == 0


def test_planted_wrong_condition_readings_are_caught():
    """Claiming necessity on rows that satisfy the condition (where V-Half at f = b_I = b_W
    has no repeating bubble within its memory) is false; dropping the f = b_I = b_W range of
    the sufficiency reading makes it false too."""
    nec = _claim("v-half-condition-necessary")
    v = evaluate(dataclasses.replace(nec, grid=_condition_grid(range(3, 5), True, ((1, 1, 1),))))
    assert v.verdict == "false" and v.counterexample["measured"][0] == 0
    assert v.counterexample["measured_exact"][0] == "0"
    suf = _claim("v-half-condition-sufficient")
    assert evaluate(dataclasses.replace(suf, holds_if=None)).verdict == "false"
    # the published direction on rows where it holds for this generator: a bubble in every
    # period; planting "zero bubble" there instead must fail
    vio = dataclasses.replace(nec, grid=lambda: [i for i in nec.grid() if i.P == 3],
                              compare=lambda a, c: a[0] == 0)
    assert evaluate(vio).verdict == "false"


def test_first_rank_idle_bound_holds_for_every_generated_schedule():
    """The proven bound on GPU 0's idle time is below the measured one for every single-wave
    split schedule on a grid (K = its peak memory), and is reached by ZB-2p."""
    for P, m, dur in itertools.product(range(2, 6), (3, 8, 12), itertools.product((1, 2, 3),
                                                                               repeat=3)):
        inst = Instance(P=P, m=m, f=dur[0], b_I=dur[1], b_W=dur[2])
        for name in ("zb-h1", "zb-h2", "zb-2p"):
            r = simulate(generate(name, inst))
            idle0 = spans(r)[0] - r.busy[0]
            assert first_rank_idle_bound(inst, max(r.peak_memory)) <= idle0, (name, inst)
    inst = Instance(P=4, m=8, f=1, b_I=3, b_W=1)
    assert first_rank_idle_bound(inst, 8) == 5 == rank_bubble(simulate(generate("zb-2p", inst)))


def test_a_planted_too_strong_bound_is_refuted_by_a_schedule():
    """A wrong bound (forgetting that GPU 0 can fill the wait with up to K forwards) exceeds
    a real schedule's idle time: the check of the previous test can fail."""
    def planted(inst, K):
        return max(Fraction(0), inst.P * inst.f + (inst.P - 1) * inst.b_I - inst.P * inst.f)
    inst = Instance(P=4, m=8, f=1, b_I=2, b_W=1)
    r = simulate(generate("zb-2p", inst))
    assert planted(inst, 8) > spans(r)[0] - r.busy[0] >= first_rank_idle_bound(inst, 8)


def test_zb2p_verdicts(verdicts):
    """ZB-2p is zero-bubble exactly at f = b_I = b_W on the grid; the proof refutes zero
    bubble for every 2P-memory schedule at the profiled V100 ratio from P = 8 on (and not
    before), and never at f = b_I = b_W."""
    by_id = {v.claim.id: v for v in verdicts}
    assert by_id["zb-2p-zero-bubble"].verdict == "holds_on_range"
    assert by_id["zb-2p-every-schedule"].verdict == "false"
    c = _claim("zb-2p-every-schedule")
    prof = [i for i in c.grid() if (i.f, i.b_I, i.b_W) == (1157, 1330, 1023)]
    refuted = {i.P for i in prof if first_rank_idle_bound(i, 2 * i.P) > 0}
    assert refuted == {8}
    assert all(first_rank_idle_bound(i, 2 * i.P) == 0 for i in c.grid() if i.f == i.b_I == i.b_W)


# ------------------------------------------------- issue 24: optimality, balance, K = 1
def test_zb2p_optimal_holds_with_every_optimum_proven(verdicts):
    """ZB-2p reaches the proven optimum at K = 2P on the whole grid; the optimum is the
    theory's bound met by ZB-2p's own schedule on every instance, as the note says (before
    MW11 was a v = 1 term, 14 instances at b_I = 3 f needed a row of the optima table, solved
    with use_theory=False, above the bound: each of those rows is now equal to the bound)."""
    from bounds import lower_bound
    from pipebounds.services.audit import proven_optimum

    v = {x.claim.id: x for x in verdicts}["zb-2p-optimal"]
    assert v.verdict == "holds" and v.instances == 567
    above = []
    for inst in _claim("zb-2p-optimal").grid():
        r = simulate(generate("zb-2p", inst))
        assert max(r.peak_memory) <= 2 * inst.P
        if lower_bound(inst).value < proven_optimum(r):
            above.append((inst.P, inst.m, inst.f, inst.b_I, inst.b_W))
    assert above == []


def test_a_planted_suboptimal_scheduler_is_caught():
    """The same claim for ZB-H1 (P activations, within 2P) on instances of the optima table
    is false: its counterexample replays to a makespan above the proven optimum."""
    from pipebounds.services.audit import TWOS

    grid = [Instance(P=P, m=m, K=2 * P, f=f, b_I=bi, b_W=bw) for P in (2, 3)
            for m in range(P, 7) for f, bi, bw in TWOS]
    c = dataclasses.replace(_claim("zb-2p-optimal"), generator="zb-h1", grid=lambda: grid)
    v = evaluate(c)
    assert v.verdict == "false"
    measured, claimed, compare = remeasure("zb-2p-optimal", v.counterexample)
    assert not compare(measured, claimed) and measured[0] > measured[1]


def test_proven_optimum_refuses_an_undecided_instance():
    """Where a schedule misses the bound and no table row knows the optimum, no optimum is made
    up (ZB-H1 at P = 5, m = 11: 78 against the bound 73, outside the table)."""
    from bounds import lower_bound
    from pipebounds.services.audit import proven_optimum

    inst = Instance(P=5, m=11, K=10, f=1, b_I=3, b_W=2)
    r = simulate(generate("zb-h1", inst))
    assert r.valid and r.makespan > lower_bound(inst).value
    with pytest.raises(AssertionError, match="no proven optimum"):
        proven_optimum(r)


def test_balance_claims_against_the_balanced_runs(verdicts):
    """At F = B = W no family has a repeating bubble (the note's 'the latter 0'); ZB-V keeps
    none at any unbalanced ratio; V-Half's counterexample repeats a bubble; V-Min's is a ratio
    where it repeats none; flipping ZB-V's claim to 'degrades' is refuted."""
    from pipebounds.services.audit import _balanced_repeating

    for name in ("zbv", "v-half", "v-min"):
        assert all(_balanced_repeating(name, P, 3 * P) == 0 for P in range(2, 7))
    by_id = {v.claim.id: v for v in verdicts}
    assert by_id["unbalanced-zbv"].verdict == "holds"
    half, vmin = by_id["unbalanced-v-half"], by_id["unbalanced-v-min"]
    assert half.verdict == vmin.verdict == "false"
    assert Fraction(half.counterexample["measured_exact"][0]) > 0
    assert vmin.counterexample["measured_exact"] == ["0", "0"]
    assert 0 < vmin.failures < vmin.instances       # V-Min degrades at some ratios, not all
    flipped = dataclasses.replace(_claim("unbalanced-zbv"), compare=lambda a, c: a[0] > a[1])
    assert evaluate(flipped).failures == by_id["unbalanced-zbv"].instances


def test_k1_exactness_claims(verdicts):
    """The smallest counterexample of T3's exactness is P=3 m=12 f=5 b=3 (OPT 146 > T3 144,
    a table row); with f <= b it is P=3 m=24 f=5 b=8 (T3d 417 > T3 416; OPT = 417, proven by
    the shipped certificate of makespan T3d, found by the exact K = 1 engine)."""
    by_id = {v.claim.id: v for v in verdicts}
    d = by_id["k1-exact"].counterexample
    assert (d["P"], d["m"], d["durations"]) == (3, 12, {"F": 5, "B": 3})
    assert d["claimed_exact"] == "144" and d["measured_exact"] == ["146", "146"]
    d = by_id["k1-exact-f-le-b"].counterexample
    assert (d["P"], d["m"], d["durations"]) == (3, 24, {"F": 5, "B": 8})
    assert d["claimed_exact"] == "416" and d["measured_exact"] == ["417", "417"]
    assert by_id["k1-exact-f-le-b"].failures == 1


def test_k1_measure_never_decides_an_open_instance():
    """P=6 m=14 f=4 b=5 is open (T3 = T3d = 204, best known 219): no verdict is made up, and a
    planted claim 'the lower bound is exact' is not taken as holding where OPT is unknown."""
    from pipebounds.services.audit import _k1_decided, k1_optimum

    with pytest.raises(AssertionError, match="undecided"):
        k1_optimum(Instance(P=6, m=14, K=1, f=4, b=5))
    with pytest.raises(AssertionError, match="undecided"):
        _k1_decided((Fraction(417), "unknown"), Fraction(417))
    assert _k1_decided((Fraction(417), "unknown"), Fraction(416)) is False
    assert _k1_decided((Fraction(144), Fraction(146)), Fraction(144)) is False
