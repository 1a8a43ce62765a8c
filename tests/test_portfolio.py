"""The portfolio engine (pipebounds.search.portfolio), the symmetry rules of the CP-SAT model
(pipebounds.search.symmetry), and ``pipebounds solve``'s time limit and signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from schedules import Instance, simulate
from schedules.io import schedule_from_document
from schedules.ops import Op
from schedules.schedule import Schedule
from pipebounds.search import solve
from pipebounds.search.cpsat import solve_cpsat
from pipebounds.search.incumbent import known_schedules
from pipebounds.search.symmetry import canonical, violations

ROOT = Path(__file__).resolve().parents[1]

# root bound below the known schedules, so that the engines have to run
SMALL = [dict(P=3, m=6, K=2), dict(P=3, m=5, K=2, b_I=1, b_W=1),
         dict(P=2, m=3, K=2, v=2, placement="vshape"), dict(P=2, m=5, K=3, v=2)]

# hard for both engines: open after 20 s of CP-SAT (46 / 40), so a signal always finds it running
HARD = Instance(P=4, m=6, K=3, v=2, b_I=1, b_W=1)


def valid(res, inst):
    sim = simulate(res.schedule)
    assert sim.valid, sim.errors
    assert sim.makespan == res.makespan and res.schedule.instance == inst
    assert res.lower_bound <= res.makespan


@pytest.mark.parametrize("kw", SMALL)
def test_portfolio_is_optimal_and_agrees_with_the_search(kw):
    inst = Instance(**kw)
    a = solve(inst, time_limit=60, engine="portfolio")
    b = solve(inst, time_limit=60, engine="search")
    valid(a, inst)
    assert a.engine == "portfolio" and a.status == b.status == "optimal"
    assert a.makespan == b.makespan == a.lower_bound


def test_portfolio_runs_the_engines_when_the_root_does_not_decide():
    inst = Instance(P=3, m=6, K=2)
    res = solve(inst, time_limit=60, engine="portfolio", use_theory=False)
    valid(res, inst)
    assert res.status == "optimal" and res.stats["independent"]
    assert res.stats["proof"] in ("search", "cpsat", "combined")
    assert sorted(e for e, _, _ in res.stats["engines"]) == ["cpsat", "search"]


def test_auto_is_an_alias_of_the_portfolio():
    inst = Instance(P=2, m=3, K=2, v=2, placement="vshape")
    res = solve(inst, time_limit=60, engine="auto")
    assert res.engine == "portfolio" and res.status == "optimal"


@pytest.mark.parametrize("engine", ["portfolio", "search", "cpsat"])
def test_statuses_are_honest_under_a_tiny_time_limit(engine):
    """No proof in 0.05 s: the best schedule with a bound below it, never ``optimal``."""
    res = solve(HARD, time_limit=0.05, engine=engine)
    assert res.status in ("feasible", "unknown")
    if res.status == "feasible":
        valid(res, HARD)
        assert res.lower_bound < res.makespan
    else:
        assert res.schedule is None and res.makespan is None


def test_portfolio_stops_on_request_with_the_best_found():
    from pipebounds.search import Channel

    class StopAfter(Channel):
        def __init__(self):
            self.t0 = time.monotonic()

        def stop(self):
            return time.monotonic() - self.t0 > 1.0

    t0 = time.monotonic()
    res = solve(HARD, time_limit=60, engine="portfolio", channel=StopAfter())
    assert time.monotonic() - t0 < 30
    assert res.stats["interrupted"] and res.status == "feasible"
    valid(res, HARD)


# ------------------------------------------------------------------------------ symmetry
SYMMETRY = [dict(P=2, m=3, K=1), dict(P=2, m=3, K=2), dict(P=3, m=3, K=2),
            dict(P=2, m=4, K=2, b_I=1, b_W=1), dict(P=2, m=3, K=1, b_I=1, b_W=2),
            dict(P=2, m=3, K=2, v=2, placement="vshape"), dict(P=2, m=2, K=3, v=2),
            dict(P=2, m=3, K=3, v=2, b_I=1, b_W=1), dict(P=3, m=3, K=2, c="1/2"),
            dict(P=2, m=4, K=3, f=1, b=3), dict(P=3, m=4, K=None), dict(P=2, m=3, K=None, v=2,
                                                                        b_I=1, b_W=1)]


@pytest.mark.parametrize("kw", SYMMETRY)
def test_cpsat_symmetry_rules_keep_an_optimum(kw):
    """CP-SAT with SYM1-SYM4 and the search, both without the theory and without known
    schedules (independent proofs), prove the same optimum."""
    inst = Instance(**kw)
    a = solve(inst, time_limit=60, engine="search", use_known=False, use_theory=False)
    b = solve_cpsat(inst, time_limit=60, use_known=False, use_theory=False, symmetry="full")
    assert a.status == b.status == "optimal"
    assert a.makespan == b.makespan
    assert not violations(b.schedule)


@pytest.mark.parametrize("kw", [dict(P=3, m=5, K=2), dict(P=2, m=4, K=2, v=2, b_I=1, b_W=1),
                                dict(P=3, m=4, K=3, v=2, placement="vshape"),
                                dict(P=4, m=6, K=None, b_I=1, b_W=2)])
def test_canonical_relabelling_satisfies_the_rules(kw):
    inst = Instance(**kw)
    seen = 0
    for _, sched in known_schedules(inst):
        sched = sched.with_instance(inst)
        before = simulate(sched)
        if not before.valid:
            continue
        c = canonical(sched)
        after = simulate(c)
        assert after.valid and after.makespan <= before.makespan
        assert violations(c) == []
        seen += 1
    assert seen


def test_violations_catch_a_planted_swap():
    """Swap two microbatches' labels on one stage: a rule must report it."""
    inst = Instance(P=2, m=3, K=None)
    sched = canonical(Schedule.from_strings(inst, [
        ["0F0", "0F1", "0F2", "0B0", "0B1", "0B2"], ["1F0", "1B0", "1F1", "1B1", "1F2", "1B2"]]))
    assert violations(sched) == []

    def swap(op):
        if op.stage == 1 and op.microbatch in (1, 2):
            return Op(op.stage, op.kind, 3 - op.microbatch)
        return op

    planted = Schedule(inst, tuple(tuple(swap(o) for o in seq) for seq in sched.orders))
    assert simulate(planted).valid
    assert any(v.startswith("SYM2") for v in violations(planted))


# ------------------------------------------------------------------------- command line
def _cli(*args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "pipebounds", "solve", *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kw)


def _wait_for_progress(proc, timeout=90.0):
    """Read stderr until the first progress line (the solve has started)."""
    t0 = time.monotonic()
    line = proc.stderr.readline()
    assert line and time.monotonic() - t0 < timeout, "no progress line"
    return line


HARD_FLAGS = ["-P", "4", "-m", "6", "-K", "3", "-v", "2", "--b-input", "1", "--b-weight", "1"]


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_ends_solve_with_the_best_schedule(sig, code):
    proc = _cli(*HARD_FLAGS, "--json", "--progress", "--time-limit", "120")
    _wait_for_progress(proc)
    time.sleep(0.5)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    res = json.loads(out)
    assert res["status"] == "feasible" and res["interrupted"] is True
    sim = simulate(schedule_from_document(res["schedule"]))
    assert sim.valid and sim.makespan == Fraction(res["makespan_exact"])
    assert Fraction(res["lower_bound_exact"]) < sim.makespan


def test_interrupted_batch_keeps_finished_lines(tmp_path):
    batch = tmp_path / "b.jsonl"
    batch.write_text('{"P": 2, "m": 2, "K": 1}\n'
                     '{"P": 4, "m": 6, "K": 3, "v": 2, "b_input": 1, "b_weight": 1}\n'
                     '{"P": 2, "m": 3, "K": 1}\n')
    proc = _cli("--batch", str(batch), "--json", "--progress", "--time-limit", "120")
    _wait_for_progress(proc)  # the first line is decided at the root, silently
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    res = json.loads(out)
    assert len(res) == 3
    assert res[0]["status"] == "optimal"
    assert res[1]["status"] == "feasible" and res[1]["interrupted"]
    assert "interrupted" in res[2]["error"]


def test_solve_help_states_the_default_time_limit_and_exit_statuses(capsys):
    from pipebounds.cli import main

    try:  # --help exits 0 (SystemExit, or main's return value)
        assert main(["solve", "--help"]) == 0
    except SystemExit as exc:
        assert exc.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "default 60" in out and "130" in out and "143" in out and "portfolio" in out


def test_bad_time_limit_exits_2(capsys):
    from pipebounds.cli import main

    assert main(["solve", "-P", "2", "-m", "2", "--time-limit", "-1"]) == 2
    assert main(["solve", "-P", "2", "-m", "2", "--time-limit", "soon"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "Traceback" not in err


def _in_daemon(q):
    from pipebounds.search.portfolio import solve_portfolio

    from pipebounds.search.backend import SolveOptions

    res = solve_portfolio(Instance(P=2, m=3, K=2, v=2, placement="vshape"),
                          SolveOptions(time_limit=60))
    q.put((res.status, res.makespan, [e for e, _, _ in res.stats["engines"]]))


def test_portfolio_inside_a_daemon_process_runs_the_engines_in_turn():
    """A pool worker may not start processes: the engines run one after the other."""
    import multiprocessing

    ctx = multiprocessing.get_context()
    q = ctx.Queue()
    p = ctx.Process(target=_in_daemon, args=(q,), daemon=True)
    p.start()
    status, makespan, engines = q.get(timeout=120)
    p.join(10)
    ref = solve(Instance(P=2, m=3, K=2, v=2, placement="vshape"), time_limit=60, engine="search")
    assert status == "optimal" and makespan == ref.makespan
    assert engines[0] == "search"


def test_every_backend_takes_the_one_options_object_and_an_incumbent():
    """The backend contract (pipebounds.search.backend): each registered engine takes a frozen
    SolveOptions; a caller's incumbent is used even without the known schedules, and no engine
    returns anything worse than it."""
    import dataclasses

    from pipebounds.search.backend import BACKENDS, SolveOptions
    from schedules.generators import generate
    from schedules.remat import fit_memory

    inst = Instance(P=3, m=4, K=2, f=2, b=3)
    start = fit_memory(generate("gpipe", Instance(P=3, m=4, f=2, b=3)), 2).with_instance(inst)
    start_ms = simulate(start).makespan
    opts = SolveOptions(time_limit=20, use_known=False, incumbent=start)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.time_limit = 1  # type: ignore[misc]
    prepared = opts.prepared(inst)
    assert prepared.known is not None and prepared.known[2] == start_ms
    for name, backend in BACKENDS.items():
        res = backend.solve(inst, opts)
        assert res.makespan is not None and res.makespan <= start_ms, name
        assert simulate(res.schedule).makespan == res.makespan, name
        assert res.status == "optimal", (name, res.status)
