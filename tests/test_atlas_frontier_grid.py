"""tools/atlas_frontier_grid.py --optima: the solve grid of the open pairs left after synthesis."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from pipebounds.sweep.grid import expand, load_grid
from pipebounds.sweep.tasks import _instance

from tool_module import load_tool

ROOT = Path(__file__).resolve().parent.parent
HEADER = ["P", "m", "v", "placement", "durations", "K", "best_family", "family_makespan",
          "synthesized", "source", "lower_bound", "gap", "optimum", "why"]


def _tool():
    return load_tool("atlas_frontier_grid")


def _row(P, m, v, placement, durations, K, why):
    return [P, m, v, placement, durations, K, "1f1b", 10, 10, "x", 9, 1.1, "", why]


def test_optima_grid_keeps_open_pairs_up_to_max_P_smallest_first(tmp_path, monkeypatch):
    tool = _tool()
    left, out = tmp_path / "left.csv", tmp_path / "grid.json"
    with open(left, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerow(_row(4, 16, 2, "vshape", "f=1 b=2", 3, "open"))
        w.writerow(_row(2, 8, 1, "-", "f=1 b_I=1 b_W=1", 2, "open"))
        w.writerow(_row(2, 4, 2, "looped", "f=1 b=2", 2, "bound weak"))   # explained: left out
        w.writerow(_row(8, 8, 1, "-", "f=1 b=1", 2, "open"))               # P > max_P
        w.writerow(_row(4, 8, 2, "looped", "f=1157/100 b=2353/100", 5, "open"))
    monkeypatch.setattr(tool, "LEFT", left)
    monkeypatch.setattr(tool, "OPTIMA_OUT", out)
    assert tool.optima_grid(4, 7.5) == 0
    grid = json.loads(out.read_text())
    assert grid["options"] == {"time_limit": 7.5, "engine": "cpsat"}  # not the library's search
    got = [(x["P"], x["m"], x["v"], x["K"]) for x in grid["instances"]]
    assert got == [(2, 8, 1, 2), (4, 8, 2, 5), (4, 16, 2, 3)]
    assert grid["instances"][0] == {"P": 2, "m": 8, "v": 1, "f": "1", "b_input": "1",
                                    "b_weight": "1", "K": 2}
    assert grid["instances"][2]["placement"] == "vshape"
    # the sweep reads it as a solve grid of the same instances
    items = expand(load_grid(str(out)), "solve")
    assert {it.params["engine"] for it in items} == {"cpsat"}   # solve_task passes it on
    insts = [_instance(it.params) for it in items]
    assert [(i.P, i.m, i.v, i.K, i.split) for i in insts] == [
        (2, 8, 1, 2, True), (4, 8, 2, 5, False), (4, 16, 2, 3, False)]


def test_optima_grid_samples_a_range_of_P_and_asks_for_a_synthesis_first(tmp_path, monkeypatch):
    tool = _tool()
    left, default, out = tmp_path / "left.csv", tmp_path / "default.json", tmp_path / "p8.json"
    with open(left, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        for K in range(1, 11):
            w.writerow(_row(8, 16, 1, "-", "f=1 b=1", K, "open"))
        w.writerow(_row(4, 16, 1, "-", "f=1 b=1", 2, "open"))        # P < min_P
        w.writerow(_row(8, 16, 1, "-", "f=1 b=1", 11, "schedules weak"))  # explained
    monkeypatch.setattr(tool, "LEFT", left)
    monkeypatch.setattr(tool, "OPTIMA_OUT", default)
    assert tool.optima_grid(8, 60.0, min_P=8, sample=4, seed=1, synthesize=5.0, out=out) == 0
    assert not default.exists()                      # the file asked for, not the default
    grid = json.loads(out.read_text())
    assert grid["options"] == {"time_limit": 60.0, "engine": "cpsat", "synthesize": 5.0}
    Ks = [x["K"] for x in grid["instances"]]
    assert len(Ks) == 4 and set(Ks) <= set(range(1, 11))
    tool.optima_grid(8, 60.0, min_P=8, sample=4, seed=1, out=tmp_path / "again.json")
    again = json.loads((tmp_path / "again.json").read_text())
    assert [x["K"] for x in again["instances"]] == Ks  # seeded: the same sample
    assert "synthesize" not in again["options"]
    tool.optima_grid(8, 60.0, min_P=8)                # all ten, to the default file
    assert len(json.loads(default.read_text())["instances"]) == 10
