"""`solve` counts the nodes of both portfolio engines in every ending: an interruption, a proof
by one engine while the other runs, the time limit; a proof without search says so."""

from __future__ import annotations

import time

from pipebounds.cli import main
from pipebounds.search import Progress
from pipebounds.search.backend import SolveOptions
from pipebounds.search.portfolio import solve_portfolio
from schedules import Instance


def test_interrupted_portfolio_counts_its_engines_nodes():
    # far from settled in two seconds (20 s of the portfolio end at 127 against the bound 115),
    # while the branch and bound explores nodes from the start
    inst = Instance(P=8, m=16, K=3, f=2, b=3)
    t0 = time.monotonic()
    channel = Progress(inst.unit, stop=lambda: time.monotonic() > t0 + 2, enabled=False)
    res = solve_portfolio(inst, SolveOptions(time_limit=30), channel=channel)
    assert res.stats["interrupted"] and res.status in ("feasible", "unknown"), (res, res.stats)
    reported = {e for e, status, _ in res.stats["engines"] if status != "stopped"}
    # every engine either answered (its nodes counted) or is named as not having answered
    assert set(res.stats["unreported"]) == {"search", "cpsat"} - reported
    if "search" in reported:  # the branch and bound explores nodes in two seconds
        assert res.nodes > 0


def test_a_proof_without_search_is_said(capsys):
    assert main(["solve", "-P", "3", "-m", "4", "-K", "1", "-f", "2", "-b", "3", "--engine",
                 "search"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "0 nodes" not in head and "no search: the construction schedule meets the bound" in head
