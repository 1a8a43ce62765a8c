"""`pipebounds remat` says why an order is infeasible and what fits, labels forward and backward
recomputes, names the input's dropped R ops and says when fit_memory changed the order."""

from __future__ import annotations

import json

import pytest

from pipebounds.cli import main
from schedules import Instance
from schedules.generators import generate
from schedules.io import document_from_schedule
from schedules.remat import fit_memory
from schedules.remat_optimal import memory_floor, optimal_remat


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def zbh2():
    return generate("zb-h2", Instance(P=3, m=5, b_I=1, b_W=1))


@pytest.mark.parametrize("backward", [False, True])
def test_memory_floor_is_where_the_exact_remat_becomes_feasible(zbh2, backward):
    floor = memory_floor(zbh2, backward=backward)
    assert optimal_remat(zbh2, K=floor.K, backward=backward, time_limit=5).status != "infeasible"
    if floor.K > 1:
        assert optimal_remat(zbh2, K=floor.K - 1, backward=backward,
                             time_limit=5).status == "infeasible"
    if not backward:
        assert floor.deferred > 0  # zb-h2 defers W ops: that is what holds the memory


def test_infeasible_says_why_and_what_fits(zbh2, tmp_path, capsys):
    path = tmp_path / "zbh2.json"
    path.write_text(json.dumps(document_from_schedule(zbh2)))
    floor = memory_floor(zbh2).K
    r = json.loads(_run(capsys, "remat", str(path), "-K", "2", "--time-limit", "3", "--json"))
    assert r["status"] == "infeasible" and r["least_K"] == floor > 2
    assert r["least_K_backward"] == memory_floor(zbh2, backward=True).K <= 2
    assert r["fit_memory_reordered"] is True
    out = _run(capsys, "remat", str(path), "-K", "2", "--time-limit", "3")
    assert "None" not in out and "why:" in out and "deferred W ops hold more than K" in out
    fits = next(line for line in out.splitlines() if "what fits" in line)
    assert "--backward" in fits and f"-K {floor}" in fits and "fit_memory's order" in fits
    assert f"makespan {r['fit_memory_makespan_exact']}" in fits


def test_forward_and_backward_recomputes_are_labelled(zbh2, tmp_path, capsys):
    path = tmp_path / "zbh2.json"
    path.write_text(json.dumps(document_from_schedule(zbh2)))
    args = ["remat", str(path), "-K", "2", "--backward", "--time-limit", "3"]
    r = json.loads(_run(capsys, *args, "--json"))
    assert r["backward_recomputed"], r
    assert sorted(r["forward_recomputed"] + r["backward_recomputed"]) == sorted(r["recomputed"])
    out = _run(capsys, *args)
    fwd = next(line for line in out.splitlines() if "forward recomputes" in line)
    bwd = next(line for line in out.splitlines() if "backward recomputes" in line)
    assert fwd.split(": ", 1)[1].split() == r["forward_recomputed"]
    assert bwd.split(": ", 1)[1].split() == r["backward_recomputed"]
    assert "moved W ops earlier" in out  # fit_memory's makespan is of another order


def test_dropped_input_recomputes_are_named(tmp_path, capsys):
    fitted = fit_memory(generate("1f1b", Instance(P=3, m=5)), 1)
    drops = [str(op) for _, op in fitted.ops() if op.kind == "R"]
    assert drops
    path = tmp_path / "fitted.json"
    path.write_text(json.dumps(document_from_schedule(fitted)))
    r = json.loads(_run(capsys, "remat", str(path), "-K", "1", "--time-limit", "3", "--json"))
    assert r["dropped"] == len(drops) and r["dropped_ops"] == drops
    out = _run(capsys, "remat", str(path), "-K", "1", "--time-limit", "3")
    line = next(x for x in out.splitlines() if "dropped from the input" in x)
    assert line.split(": ", 1)[1].split() == drops
