"""`bound`, `simulate` and `report` say whether the bound is the optimum and why: the binding
term marked, the certificate named, `--certify` offered where it could settle an open case, the
known optimum and the gap in `simulate`, and a K = inf document's K said aloud."""

from __future__ import annotations

import json

from pipebounds.cli import main


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return out


def test_bound_marks_the_binding_terms(capsys):
    out = _run(capsys, "bound", "-P", "3", "-m", "12", "-K", "1", "-f", "5", "-b", "3")
    terms = [line.split() for line in out.splitlines() if line.startswith("  ")]
    bound = json.loads(_run(capsys, "bound", "-P", "3", "-m", "12", "-K", "1", "-f", "5", "-b",
                            "3", "--json"))["lower_bound_exact"]
    marked = {t[1] for t in terms if "binding" in t}
    assert marked == {t[1] for t in terms if t[2] == bound} == {"single_slot_coupled"}


def test_bound_offers_certify_where_it_could_settle(capsys):
    # m = 20 lies outside the checked range S-nb-checked (m <= 16), where a certificate decides
    args = ["bound", "-P", "4", "-m", "20", "--b-input", "1", "--b-weight", "1"]
    out = _run(capsys, *args)
    assert "--certify S may settle it" in out.splitlines()[1]
    out = _run(capsys, *args, "--certify", "5")
    head = out.splitlines()[1]
    assert "basis certificate" in head and "the schedule " in head and "reaches the bound" in head


def test_bound_names_the_theorem_or_range(capsys):
    out = _run(capsys, "bound", "-P", "4", "-m", "8")
    assert "basis theorem: theorem T1" in out
    out = _run(capsys, "bound", "-P", "4", "-m", "8", "-K", "1")
    assert "checked range" in out


def test_simulate_shows_the_known_optimum_the_gap_and_where_K_came_from(tmp_path, capsys):
    doc = _run(capsys, "generate", "1f1b", "-P", "4", "-m", "8", "-K", "2", "--json", "--quiet")
    (tmp_path / "k2.json").write_text(doc)
    out = _run(capsys, "simulate", str(tmp_path / "k2.json"))
    r = json.loads(_run(capsys, "simulate", str(tmp_path / "k2.json"), "--json"))
    assert r["optimum"] == 33 and r["gap_to"] == "optimum" and r["gap_exact"] == "2/33"
    assert "known optimum 33 (basis table)" in out and "gap 6.06% to it" in out
    doc = _run(capsys, "generate", "zb-h2", "-P", "4", "-m", "8", "--b-input", "1",
               "--b-weight", "1", "--json")
    (tmp_path / "inf.json").write_text(doc)
    out = _run(capsys, "simulate", str(tmp_path / "inf.json"))
    assert "the document sets no K" in out and "K=7, its peak memory" in out
    assert "this schedule is optimal" in out


def test_report_names_its_certificates(tmp_path, capsys):
    out = _run(capsys, "report", "-P", "3", "-m", "4", "--no-figures", "--quiet",
               "-o", str(tmp_path / "r"))
    lines = [x for x in out.splitlines() if "certificates (a schedule reaching the bound)" in x]
    assert lines and all("K=" in x for x in lines)
    rows = [row for s in json.loads(_run(capsys, "report", "-P", "3", "-m", "4", "--no-figures",
                                         "--quiet", "--json", "-o", str(tmp_path / "r")))
            for row in s["rows"]]
    assert all(row["basis_detail"] for row in rows if row["exact_basis"] == "certificate")
