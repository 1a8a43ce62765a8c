"""tools/make_atlas.py: why a frontier pair is left (bound weak, schedules weak, open), from the
optima and the schedules that ``solve`` found."""

from __future__ import annotations

from fractions import Fraction as F

from pipebounds.sweep import Store

from tool_module import load_tool


def _tool():
    return load_tool("make_atlas")


def test_classify_uses_a_found_schedule_as_an_upper_bound():
    cls = _tool().classify
    lb = F(100)
    assert cls(F(110), lb, None) == "open"
    assert cls(F(110), lb, F(102)) == "schedules weak"      # proven, within 2 %
    assert cls(F(110), lb, F(103)) == "bound weak"          # proven, above 2 %
    # an unproven schedule within 2 % shows that the optimum is within 2 % too
    assert cls(F(110), lb, None, F(102)) == "schedules weak"
    assert cls(F(110), lb, F(101), F(101)) == "schedules weak"
    # one above 2 % shows nothing
    assert cls(F(110), lb, None, F(103)) == "open"
    assert cls(F(110), lb, F(104), F(104)) == "bound weak"


def _store(path, rows):
    with Store(path) as st:
        for i, (K, engine, limit, status, ms) in enumerate(rows):
            params = {"instance": {"P": 2, "m": 8, "v": 2, "placement": "looped", "f": "1",
                                   "b": "1", "K": K}, "time_limit": limit}
            if engine is not None:
                params["engine"] = engine
            st.add(f"k{i}", "solve", params, "ok",
                   [{"status": status, "makespan": ms, "lower_bound": 38, "seconds": 1.0,
                     "engine": engine or "search"}], 1.0)


def test_solve_results_take_the_least_makespan_proven_or_not(tmp_path, monkeypatch):
    tool = _tool()
    path = tmp_path / "optima.sqlite"
    _store(path, [(2, None, 20.0, "feasible", 43), (2, "cpsat", 30.0, "optimal", 38),
                  (3, "cpsat", 30.0, "feasible", 40), (4, "cpsat", 30.0, "unknown", None)])
    monkeypatch.setattr(tool, "OPTIMA", path)
    opt, found = tool.solve_results()
    assert {K: ms for (_, K), ms in found.items()} == {2: 38, 3: 40}
    assert {K: ms for (_, K), ms in opt.items()} == {2: 38}
    assert tool.solve_runs() == ("`search` 20 s each, 1 pairs, 0 proven optimal; "
                                 "`cpsat` 30 s each, 3 pairs, 1 proven optimal")
