"""`pipebounds remat` and `pipebounds best`: JSON keys of CLI.md, values checked against the
library, exit 2 with one line on bad input."""

from __future__ import annotations

import json
from fractions import Fraction

from pipebounds.cli import main
from schedules import Instance, document_from_schedule, schedule_from_document, simulate
from schedules.generators import generate


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _doc(tmp_path, sched, name="doc.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document_from_schedule(sched)))
    return str(path)


def test_remat_json(tmp_path, capsys):
    path = _doc(tmp_path, generate("1f1b", Instance(P=4, m=8)))
    code, out, err = _run(capsys, "remat", path, "-K", "1", "--json")
    assert code == 0 and err == ""
    r = json.loads(out)
    for key in ("status", "makespan", "lower_bound", "fit_memory_makespan", "recomputed",
                "schedule"):
        assert key in r
    assert r["status"] == "optimal" and r["makespan"] <= r["fit_memory_makespan"] == 39
    assert r["theory_lower_bound"] == 36 and r["makespan"] >= 36
    sched = schedule_from_document(r["schedule"])
    res = simulate(sched)
    assert res.valid and res.makespan == r["makespan"] and max(res.peak_memory) <= 1
    assert sorted(r["recomputed"]) == sorted(str(op) for _, op in sched.ops() if op.kind == "R")


def test_remat_bytes_and_backward(tmp_path, capsys):
    sched = generate("zb-h2", Instance(P=3, m=4, b_I=1, b_W=1))
    doc = document_from_schedule(sched)
    doc["memory"] = {"activation": [4, 4, 4], "kept_after_input": [2, 2, 2], "budget": 100}
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    code, out, _ = _run(capsys, "remat", str(path), "--budget-bytes", "6", "--json")
    assert code == 0 and json.loads(out)["status"] == "infeasible"
    code, out, _ = _run(capsys, "remat", str(path), "--budget-bytes", "6", "--backward",
                        "--json")
    r = json.loads(out)
    assert code == 0 and r["status"] == "optimal" and r["backward_recomputed"]
    assert all(Fraction(x) <= 6 for x in r["peak"])
    res = simulate(schedule_from_document(r["schedule"]))  # the document carries budget 6
    assert res.valid and res.makespan == Fraction(r["makespan_exact"])
    assert [str(x) for x in res.peak_bytes] == r["peak_exact"] and r["peak"] == [6, 6, 6]


def test_remat_bad_input(tmp_path, capsys):
    path = _doc(tmp_path, generate("1f1b", Instance(P=2, m=2)))
    for argv in (["remat", path], ["remat", path, "-K", "x"], ["remat", path, "-K", "1",
                                                              "--backward"],
                 ["remat", path, "--budget-bytes", "3"], ["remat", str(tmp_path / "no.json"),
                                                          "-K", "1"]):
        code, out, err = _run(capsys, *argv)
        assert code == 2 and out == "" and err.startswith("error:") and err.count("\n") == 1


def test_best_json(capsys):
    code, out, err = _run(capsys, "best", "-P", "3", "-m", "4", "-K", "1", "--json",
                          "--time-limit", "10", "--solve-time-limit", "20")
    assert code == 0 and err == ""
    r = json.loads(out)
    for key in ("ranking", "lower_bound", "optimum", "gap"):
        assert key in r
    ms = [e["makespan"] for e in r["ranking"] if e["makespan"] is not None]
    assert ms == sorted(ms) and {e["family"] for e in r["ranking"]} >= {"gpipe", "1f1b"}
    for e in r["ranking"]:
        assert set(e) >= {"family", "makespan", "peak", "status"}
    assert r["optimum"] is not None and r["lower_bound"] <= r["optimum"] <= ms[0]
    assert Fraction(r["gap_exact"]) == Fraction(ms[0]) / Fraction(r["optimum"]) - 1
    # each family's makespan is the optimal remat of its order
    from schedules.remat_optimal import optimal_remat

    top = r["ranking"][0]
    base = generate(top["family"], Instance(P=3, m=4))
    assert optimal_remat(base, K=1).makespan == top["makespan"]


def test_best_bad_input(capsys):
    for argv in (["best", "-P", "2", "-m", "2"], ["best", "-P", "2", "-m", "2",
                                                  "--budget-bytes", "3"]):
        code, out, err = _run(capsys, *argv)
        assert code == 2 and err.startswith("error:") and err.count("\n") == 1
