"""The recorded schedules that reach the bound ship with the package, so `bound --certify`
agrees with `simulate` of the project's own stored schedule (basis certificate)."""

from __future__ import annotations

import json
from pathlib import Path

from pipebounds.certify.certificates import stored_schedules
from pipebounds.cli import main

from tool_module import load_tool

ROOT = Path(__file__).resolve().parent.parent


def _tool():
    return load_tool("ship_certificates")


def test_the_shipped_file_is_the_tools_output():
    text = (ROOT / "pipebounds" / "data" / "certificates.jsonl").read_text()
    assert text == _tool().certificates_text(ROOT)
    assert len(stored_schedules()) == len(list((ROOT / "data").glob("k1_*_reached_*.json")))


def test_bound_certify_agrees_with_simulate_of_the_stored_schedule(capsys):
    doc = ROOT / "data" / "k1_T3d_reached_P4_m12_f5_b3_K1.json"
    assert main(["simulate", str(doc), "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert sim["optimal"] is True and sim["exact_basis"] == "certificate"
    assert main(["bound", "-P", "4", "-m", "12", "-K", "1", "-f", "5", "-b", "3",
                 "--certify", "5", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["exact"] is True and rep["exact_basis"] == "certificate"
    assert rep["optimum"] == sim["makespan"] == sim["lower_bound"]
