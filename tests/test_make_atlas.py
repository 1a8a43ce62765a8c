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


def test_bound_structure_names_the_binding_theorems_and_whether_memory_counts():
    tool = _tool()
    obj = {"P": 8, "m": 32, "f": 1, "b": 1}
    cache: dict = {}
    ids, mem = tool.bound_structure(obj, 4, cache)
    assert mem and "T2" in ids          # K = 4 < P: the memory-time bound is above T1
    ids, mem = tool.bound_structure(obj, 8, cache)
    assert not mem and "T1" in ids      # K = P: the fill and drain, as with no limit
    assert len(cache) == 1              # the bound with no limit is computed once


def test_binding_section_groups_the_pairs_left_by_their_binding_terms():
    tool = _tool()
    rows = [(None, K, "1f1b", F(110), {}, F(110), F(100), None, None, why, ids, mem)
            for K, why, ids, mem in [(1, "open", ("T2",), True), (2, "open", ("T2",), True),
                                     (3, "schedules weak", ("T1",), False)]]
    text = "\n".join(tool.binding_section(rows))
    assert "Of the 3 pairs left, 2 have a bound that the memory limit raises" in text
    assert "| T2 | 2 | 1.1000 | 2 | 0 | 0 | 2 |" in text
    assert "| T1 | 1 | 1.1000 | 0 | 0 | 1 | 0 |" in text
    assert tool.binding_section([]) == []
