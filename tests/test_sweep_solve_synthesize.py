"""The sweep's ``solve`` task with ``synthesize``: a synthesized schedule is the engines' first
incumbent, within the task's time limit (docs/sweep.md)."""

from __future__ import annotations

import pipebounds.search as search
import pipebounds.synthesis as synthesis
from pipebounds.sweep.tasks import solve_task

INSTANCE = {"P": 2, "m": 4, "v": 2, "placement": "looped", "f": "1", "b": "2", "K": 2}


def test_solve_task_hands_the_synthesized_schedule_to_the_engines(monkeypatch):
    seen: dict = {}
    real_synthesize, real_solve = synthesis.synthesize, search.solve

    def synthesize(inst, time_limit=None, **kw):
        seen["synthesize"] = time_limit
        res = real_synthesize(inst, time_limit=time_limit, **kw)
        seen["schedule"] = res.schedule
        return res

    def solve(inst, **kw):
        seen["incumbent"] = kw.get("incumbent")
        seen["time_limit"] = kw["time_limit"]
        return real_solve(inst, **kw)

    monkeypatch.setattr(synthesis, "synthesize", synthesize)
    monkeypatch.setattr(search, "solve", solve)
    rows = solve_task({"instance": INSTANCE, "time_limit": 4, "engine": "cpsat",
                       "synthesize": 10})
    assert seen["synthesize"] == 2.0                  # at most half of the time limit
    assert seen["incumbent"] is seen["schedule"]      # the engines start from it
    assert seen["time_limit"] < 4                     # what the synthesis left
    assert rows[0]["status"] == "optimal" and rows[0]["makespan"] == 29
    seen.clear()
    rows = solve_task({"instance": INSTANCE, "time_limit": 4, "engine": "cpsat"})
    assert "synthesize" not in seen and seen["incumbent"] is None   # off by default
    assert rows[0]["makespan"] == 29
