"""pipebounds audit: verdicts reproducible, counterexamples contradict their claims."""

import dataclasses
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from pipebounds.audit import CLAIMS, VERDICTS, audit, evaluate, json_value, markdown, remeasure

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def verdicts():
    return audit()


def test_every_claim_has_a_verdict(verdicts):
    assert len(verdicts) >= 9
    for v in verdicts:
        assert v.verdict in VERDICTS
        assert v.claim.definition in ("makespan", "span", "memory", "orders")
        assert (v.counterexample is None) == (v.verdict == "holds")


def test_counterexamples_simulate_to_a_contradiction(verdicts, tmp_path):
    for v in verdicts:
        if v.counterexample is None:
            continue
        doc = v.counterexample
        path = tmp_path / f"{v.claim.id}.json"
        path.write_text(json.dumps(doc))
        out = subprocess.run([sys.executable, "-m", "pipebounds", "simulate", str(path), "--json"],
                             capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        res = json.loads(out.stdout)
        res = res[0] if isinstance(res, list) else res
        assert res["valid"]
        measured, claimed, compare = remeasure(v.claim.id, doc)
        assert not compare(measured, claimed), v.claim.id
        assert json.dumps(doc["measured"]) == json.dumps(
            json.loads(json.dumps(json_value(measured))))


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
