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
