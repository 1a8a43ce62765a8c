"""`pipebounds audit` text: each claim's statement, verdict and where its counterexample is."""

from __future__ import annotations

import json

from pipebounds.cli import main


def test_audit_text_states_each_claim_and_its_counterexample(capsys):
    assert main(["audit", "--only", "zb-h1", "--json"]) == 0
    claims = json.loads(capsys.readouterr().out)["claims"]
    assert main(["audit", "--only", "zb-h1"]) == 0
    out = capsys.readouterr().out
    blocks = out.strip().split("\n\n")
    assert len(blocks) == len(claims)
    for c, block in zip(claims, blocks):
        assert block.startswith(f"{c['verdict']}: {c['claim']}")
        assert c["id"] in block and c["source"] in block
        if c["counterexample"] is not None:
            d = c["counterexample"]
            line = next(x for x in block.splitlines() if "smallest counterexample" in x)
            assert f"P={d['P']} m={d['m']}" in line and "claimed" in line and "measured" in line
            assert f"audit --only {c['id']} --json" in block
    assert any(c["counterexample"] is not None for c in claims)
