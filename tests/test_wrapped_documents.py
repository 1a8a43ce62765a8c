"""``simulate``, ``export``, ``gantt`` and ``remat`` read an object that wraps an orders document
under ``schedule`` (what ``solve``, ``remat`` and ``synthesize`` print with ``--json``), through
the one document reader (schedules.io.load_documents)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipebounds.cli import main
from schedules import Instance, document_from_schedule
from schedules.generators import generate
from schedules.io import DocumentError, load_documents, unwrap_document


def wrapped(tmp_path, obj, name="w.json"):
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return str(path)


def test_unwrap_reads_the_inner_document_and_leaves_documents_alone():
    doc = document_from_schedule(generate("1f1b", Instance(P=2, m=3)))
    assert unwrap_document({"status": "optimal", "schedule": doc}) == doc
    assert unwrap_document(doc) is doc
    assert unwrap_document(dict(doc, schedule="ignored")) == dict(doc, schedule="ignored")
    docs, was_list = load_documents(json.dumps([{"schedule": doc}, doc]))
    assert was_list and docs == [doc, doc]
    with pytest.raises(DocumentError, match="'schedule' holds no orders document"):
        load_documents(json.dumps({"status": "infeasible", "schedule": None}))


def test_solve_json_piped_into_simulate():
    solve = subprocess.run([sys.executable, "-m", "pipebounds", "solve", "-P", "2", "-m", "3",
                            "-K", "2", "--time-limit", "5", "--json", "--quiet"],
                           capture_output=True, text=True, check=False)
    assert solve.returncode == 0, solve.stderr
    out = json.loads(solve.stdout)
    assert "orders" not in out and "orders" in out["schedule"]
    sim = subprocess.run([sys.executable, "-m", "pipebounds", "simulate", "-", "--json"],
                         input=solve.stdout, capture_output=True, text=True, check=False)
    assert sim.returncode == 0, sim.stderr
    assert json.loads(sim.stdout)["makespan_exact"] == out["makespan_exact"]


def test_remat_json_feeds_simulate_export_gantt_and_remat(tmp_path, capsys):
    base = generate("zb-h1", Instance(P=2, m=4, b_I=1, b_W=1))
    src = wrapped(tmp_path, document_from_schedule(base), "base.json")
    assert main(["remat", src, "-K", "2", "--json"]) == 0
    remat_out = capsys.readouterr().out
    obj = json.loads(remat_out)
    assert "orders" not in obj and "schedule" in obj
    path = wrapped(tmp_path, obj)
    assert main(["simulate", path, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["valid"] and res["peak_memory"] == [2, 2]
    assert main(["remat", path, "-K", "2", "--json"]) == 0
    capsys.readouterr()
    trace = tmp_path / "t.json"
    assert main(["export", path, "--format", "chrome-trace", "-o", str(trace)]) == 0
    n_ops = sum(len(seq) for seq in obj["schedule"]["orders"].values())
    assert len([e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]) \
        == n_ops
    html = tmp_path / "g.html"
    assert main(["gantt", path, "-o", str(html), "--quiet"]) == 0 and html.stat().st_size > 0
    # torch-csv has no R: an R-free wrapped schedule exports
    plain = wrapped(tmp_path, {"schedule": document_from_schedule(base)}, "plain.json")
    csv = tmp_path / "s.csv"
    assert main(["export", plain, "--format", "torch-csv", "-o", str(csv)]) == 0
    assert csv.read_text().splitlines()[0].split(",")[0] == "0F0"
