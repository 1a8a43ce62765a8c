"""tools/fresh_tightness.py and its stored set data/fresh_tightness.jsonl: every stored schedule
re-simulates to its makespan within K, today's bound is never above a stored makespan nor
claims exactness where the proven optimum differs, and the check catches a planted error."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import pytest

from bounds import lower_bound

from tool_module import load_tool

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "fresh_tightness.jsonl"


def _tool():
    return load_tool("fresh_tightness")


def test_stored_rows_hold_against_todays_bound():
    tool = _tool()
    rows = tool.load(str(DATA))
    assert len(rows) >= 200 and {r["region"] for r in rows} == set(tool.ORDER)
    for row in rows:
        tool.check_stored(row)  # orders re-simulated to opt (raises otherwise)
        inst = tool.row_instance(row)
        lb = lower_bound(inst, backward_remat=row["model"] == "backward")
        now = {**row, "lb": str(lb.value), "exact": bool(lb.exact)}
        assert tool.violations(now) == [], (row, now)


def test_planted_error_is_caught():
    """A bound 1/64 above a proven optimum, and an exact claim one unit off, are violations."""
    tool = _tool()
    rows = [r for r in tool.load(str(DATA)) if r["status"] == "optimal"]
    tight = next(r for r in rows if Fraction(r["opt"]) == Fraction(r["lb"]))
    assert tool.violations({**tight, "lb": str(Fraction(tight["opt"]) + Fraction(1, 64))})
    loose = next(r for r in rows if Fraction(r["opt"]) > Fraction(r["lb"]))
    assert tool.violations({**loose, "exact": True})
    assert not tool.violations(loose)
    _, bad = tool.summary([{**tight, "lb": str(Fraction(tight["opt"]) + 1)}])
    assert bad == 1


@pytest.mark.parametrize("region", ["v1_fused", "v1_split", "k1", "mw_finite", "hetero",
                                    "backward"])
def test_draws_are_in_their_region(region):
    """Each region's draws fall in the table's region of the same name (its predicates)."""
    tool = _tool()
    import tightness_by_region as tbr  # put on the path by the tool

    preds = {k: p for k, _, p in tbr.REGIONS}
    rng = random.Random(3)
    model = "backward" if region == "backward" else "plain"
    for _ in range(30):
        inst = tool.draw(region, rng)
        first = next(k for k, _, p in tbr.REGIONS if p(inst, model))
        assert first == region, (region, inst.to_dict())
        assert preds[region](inst, model)


def test_issue_regions_cover_every_row_once():
    """The summary's second table (issue 25's regions, with its targets) partitions the rows."""
    tool = _tool()
    rows = tool.load(str(DATA))
    for r in rows:
        assert sum(pred(r) for _, pred, _ in tool.ISSUE_REGIONS) == 1, r
    lines, _ = tool.summary(rows)
    assert sum(line.startswith("| " + label) for line in lines
               for label, _, _ in tool.ISSUE_REGIONS) == len(tool.ISSUE_REGIONS)
