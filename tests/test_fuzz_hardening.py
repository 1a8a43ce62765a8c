"""Fuzz classes of the second hardening pass (issue 26, docs/reliability.md): the newer commands
under hostile input.

Quick set (CI): every class in-process, plus one signal case in a subprocess. Full set
(``PIPEBOUNDS_FUZZ_FULL=1``): the signal cases of every long command, in subprocesses, checking
the exit status 130/143 and that no process is left behind.

Every answer obeys :func:`fuzz_cli.assert_answer` (exit 0/1/2, or 130/143 after a signal; one
line on stderr for 2; no traceback; no internal error).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from hypothesis import given, strategies as st

from fuzz_cli import CORPUS, ROOT, assert_answer, run_in_process

VALID = str(CORPUS / "valid.json")
FULL = os.environ.get("PIPEBOUNDS_FUZZ_FULL") == "1"
TWO = {"P": 2, "m": 1, "durations": {"F": 1, "B": 2},
       "orders": {"0": ["0F0", "0B0"], "1": ["1F0", "1B0"]}}
GOOD_COMMS = {"0": ["0F0", "0SEND_F0", "0RECV_B0", "0B0"],
              "1": ["1RECV_F0", "1F0", "1B0", "1SEND_B0"]}


def _write(tmp_path, name: str, obj) -> str:
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(path)


def _answer(argv, status, text="", stdin=b""):
    code, out, err = run_in_process(argv, stdin)
    assert_answer(code, err, argv)
    assert code == status, (argv, code, err[:500], out[:300])
    assert text in (err if status == 2 else out), (text, err[:500], out[:300])
    return out, err


# ------------------------------------------------------------- numbers through the one reader
@pytest.mark.parametrize("K", ["\u0663", "1_0", "", "none", " ", "3.0", "0x3", "\uff13", "nan"])
def test_K_flag_is_ascii_digits_or_inf(K):
    _answer(["bound", "-P", "2", "-m", "2", "-K", K], 2, "K")
    _answer(["remat", VALID, "-K", K], 2, "K")


@pytest.mark.parametrize("flag, value", [("--time-limit", "nan"), ("--time-limit", "\u0661"),
                                         ("--time-limit", "1_0"), ("--time-limit", "-1"),
                                         ("--time-limit", "1e400")])
def test_time_limits_through_the_number_reader(flag, value):
    _answer(["remat", VALID, "-K", "1", flag, value], 2, flag)
    _answer(["solve", "-P", "2", "-m", "2", flag, value], 2, flag)


def test_whole_number_flags():
    _answer(["report", "-P", "\u0663", "--no-figures"], 2, "-P")
    _answer(["solve", "-P", "2", "-m", "2", "--workers", "\u0662"], 2, "--workers")


@given(st.text(alphabet=st.sampled_from("0123456789_ \u0660\u0663\u06f3\u0967\uff11+-"),
               min_size=0, max_size=6))
def test_K_text_is_read_exactly_or_refused(text):
    code, out, err = run_in_process(["bound", "-P", "2", "-m", "2", "-K", text, "--json"])
    assert_answer(code, err, text)
    plain = text.strip()
    if code == 0:  # accepted: ASCII digits only, and the value read is the digits' value
        assert plain.isascii() and plain.lstrip("+").isdigit() and int(plain) >= 1, text
        assert json.loads(out)["instance"]["K"] == int(plain)


def test_document_K_spellings(tmp_path):
    for K in ["", "none", "1_0", "\u0663"]:
        _answer(["simulate", _write(tmp_path, "k.json", {**TWO, "K": K})], 2, "K")
    _answer(["simulate", _write(tmp_path, "k.json", {**TWO, "K": "inf"}), "--json"], 0, "valid")


# ------------------------------------------------------------------ documents at the door
def test_orders_key_with_underscore_is_not_gpu_10(tmp_path):
    doc = {**TWO, "orders": {"0": ["0F0", "0B0"], "1_0": ["1F0", "1B0"]}}
    _answer(["simulate", _write(tmp_path, "o.json", doc)], 2, "not a GPU number")


@pytest.mark.parametrize("comms, text", [
    ({**GOOD_COMMS, "0": ["0F0", "0SEND_F0", "9SEND_F0", "0RECV_B0", "0B0"]}, "does not exist"),
    ({**GOOD_COMMS, "1": GOOD_COMMS["1"] + ["1SEND_F0"]}, "does not exist"),
    ({**GOOD_COMMS, "0": GOOD_COMMS["0"] + ["1SEND_B0"]}, "is on GPU 0 but stage 1"),
    ({**GOOD_COMMS, "0": ["0F0", "0SEND_F0", "0SEND_F0", "0RECV_B0", "0B0"]}, "twice"),
    ({**GOOD_COMMS, "0": ["0SEND_F0", "0RECV_B0", "0B0"]}, "differ from its op order"),
    ({**GOOD_COMMS, "0": ["0F0", "0SEND_F7", "0RECV_B0", "0B0"]}, "does not exist"),
])
def test_comms_that_contradict_the_document_are_refused(tmp_path, comms, text):
    _answer(["simulate", _write(tmp_path, "c.json", {**TWO, "comms": comms})], 2, text)


def test_consistent_comms_still_simulate(tmp_path):
    _answer(["simulate", _write(tmp_path, "c.json", {**TWO, "comms": GOOD_COMMS}), "--json"], 0,
            '"valid": true')


@pytest.mark.parametrize("ext", [".png", ".svg", ".html"])
def test_lone_surrogate_in_source_is_drawn(tmp_path, ext):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**TWO, "source": "a\ud800b"}))  # json escapes it as \ud800
    out = tmp_path / f"g{ext}"
    _answer(["gantt", str(path), "-o", str(out)], 0)
    assert out.stat().st_size > 500


def test_best_memory_deep_nesting_is_a_limit(tmp_path):
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    _answer(["best", "-P", "2", "-m", "2", "--budget-bytes", "10", "--memory", deep], 2,
            "MAX_JSON_DEPTH")
    _answer(["best", "-P", "2", "-m", "2", "--budget-bytes", "10", "--memory",
             _write(tmp_path, "deep.json", deep)], 2, "MAX_JSON_DEPTH")


def test_input_beyond_the_size_limit_is_refused_while_reading():
    from schedules.limits import MAX_INPUT_BYTES

    _answer(["simulate", "-"], 2, "MAX_INPUT_BYTES", stdin=b" " * (MAX_INPUT_BYTES + 1))


def test_values_and_documents_limits(tmp_path):
    from schedules.limits import MAX_DOCUMENTS, MAX_JSON_VALUES

    _answer(["simulate", _write(tmp_path, "v.json", "[" + "1," * MAX_JSON_VALUES + "1]")], 2,
            "MAX_JSON_VALUES")
    _answer(["simulate", _write(tmp_path, "d.json", [TWO] * (MAX_DOCUMENTS + 1))], 2,
            "MAX_DOCUMENTS")


def test_missing_messages_are_counted_not_formatted(tmp_path):
    out, _ = _answer(["simulate", _write(tmp_path, "m.json", {"P": 1, "m": 1 << 22,
                                                              "orders": {}})], 1, "more")
    assert out.count("\n") < 40


def test_generate_beyond_the_ops_limit_is_refused():
    _answer(["generate", "1f1b", "-P", "2048", "-m", "2048"], 2, "MAX_ORDER_ITEMS")


def test_bare_command_is_one_line():
    _answer([], 2, "a command is needed")


def test_report_output_name_too_long(tmp_path):
    _answer(["report", "-o", str(tmp_path / ("a" * 300)), "--no-figures"], 2, "too long")


# ------------------------------------------------------------------------ remat statuses
def _bytes_doc(tmp_path, memory):
    return _write(tmp_path, "b.json", {**json.loads((CORPUS / "valid.json").read_text()),
                                       "K": None, "memory": memory})


@pytest.mark.parametrize("activation, budget", [(1, 2 ** 62), (10 ** 30, "1" + "0" * 39),
                                                (2 ** 40, 2 ** 62)])
def test_huge_byte_budgets_are_exact(tmp_path, activation, budget):
    path = _bytes_doc(tmp_path, {"activation": [activation] * 2, "budget": budget})
    out, _ = _answer(["remat", path, "--json", "--time-limit", "5"], 0)
    r = json.loads(out)
    assert r["status"] == "optimal" and r["lower_bound_exact"] == r["makespan_exact"]


def test_byte_counts_beyond_the_solver_are_one_line(tmp_path):
    path = _bytes_doc(tmp_path, {"activation": [3, 7], "static": [10 ** 38, 1],
                                 "budget": 2 * 10 ** 38 + 1})
    _answer(["remat", path, "--time-limit", "5"], 2, "too large for the exact solver")


def test_span_objective_at_large_P_is_refused_not_overflowed(tmp_path):
    out, _ = _answer(["generate", "1f1b", "-P", "48", "-m", "48", "--json"], 0)
    path = _write(tmp_path, "p48.json", out)
    _answer(["remat", path, "-K", "4", "--objective", "span", "--time-limit", "2"], 2,
            "too large for the exact solver")


def test_remat_optimal_means_equal_bound(tmp_path):
    for K in ("1", "2"):
        out, _ = _answer(["remat", VALID, "-K", K, "--json", "--time-limit", "5"], 0)
        r = json.loads(out)
        if r["status"] == "optimal":
            value = r["span_exact"] if r["objective"] == "span" else r["makespan_exact"]
            assert r["lower_bound_exact"] == value, r


# -------------------------------------------------------------------- sweep grids and stores
@pytest.mark.parametrize("grid, text", [
    ({"product": {"P": [4], "m_per_P": ["2"]}}, "m_per_P[0]"),
    ({"product": {"P": [True], "m": [2]}}, "P[0]"),
    ({"product": {"P": [2], "m": [2], "K": [""]}}, "K"),
    ({"product": {"P": list(range(1, 101)), "m": list(range(1, 101)), "v": list(range(1, 12))}},
     "MAX_GRID_ITEMS"),
    ({"product": {"P": [2], "m": [2]}, "options": {"time_limit": "nan"}}, "time_limit"),
    ({"product": {"P": [2], "m": [2]}, "options": {"Ks": ["1"]}}, "Ks"),
])
def test_grids_are_checked_before_expansion(tmp_path, grid, text):
    _answer(["sweep", _write(tmp_path, "g.json", grid), "--task", "bound", "--store",
             str(tmp_path / "s.db")], 2, text)
    assert not (tmp_path / "s.db").exists() or not sqlite3.connect(
        str(tmp_path / "s.db")).execute("SELECT name FROM sqlite_master").fetchall()


def test_corrupt_and_foreign_stores_are_one_line(tmp_path):
    grid = _write(tmp_path, "g.json", {"product": {"P": [2], "m": [2]}})
    (tmp_path / "corrupt.db").write_bytes(b"SQLite format 3\0" + os.urandom(4000))
    _answer(["sweep", grid, "--task", "bound", "--store", str(tmp_path / "corrupt.db")], 2,
            "store")
    db = sqlite3.connect(str(tmp_path / "foreign.db"))
    db.execute("CREATE TABLE results (a, b)")
    db.commit()
    db.close()
    _answer(["sweep", grid, "--task", "bound", "--store", str(tmp_path / "foreign.db")], 2,
            "not a pipebounds results store")


def test_refused_scheduler_address_is_one_line(tmp_path):
    pytest.importorskip("distributed")
    grid = _write(tmp_path, "g.json", {"product": {"P": [2], "m": [2]}})
    t0 = time.monotonic()
    _answer(["sweep", grid, "--task", "bound", "--store", str(tmp_path / "s.db"),
             "--scheduler", "tcp://127.0.0.1:1"], 2, "cannot reach the Dask scheduler")
    assert time.monotonic() - t0 < 60  # the connect timeout is 5 s; a fence, not a benchmark


def test_valid_grid_with_string_numbers_runs(tmp_path):
    grid = _write(tmp_path, "g.json", {"product": {"P": [2], "m_per_P": [1], "K": ["inf", 2, None],
                                                   "durations": [{"f": "3/2", "b": "2"}]}})
    out, _ = _answer(["sweep", grid, "--task", "generate", "--store", str(tmp_path / "s.db"),
                      "--executor", "inprocess", "--json"], 0)
    assert json.loads(out)["failed"] == 0


# ------------------------------------------------------------------------------- signals
def _signalled(argv, sig, wait: float) -> tuple[int, str, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pipebounds", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    time.sleep(wait)
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # Ctrl-C reaches the whole process group
    else:
        proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        left = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True,
                              text=True).stdout.split()
        if proc.poll() is None or left:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, err.decode("utf-8", "replace"), left


def _check_signal(argv, sig, wait=8.0):
    code, err, left = _signalled(argv, sig, wait)
    assert code == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig], (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert err.startswith("error: interrupted by"), err
    assert not left, left
    return err


def test_remat_ends_on_sigint(tmp_path):
    out, _ = _answer(["generate", "1f1b", "-P", "24", "-m", "48", "--json"], 0)
    _check_signal(["remat", _write(tmp_path, "p.json", out), "-K", "3", "--time-limit", "120"],
                  signal.SIGINT)


FULL_SIGNALS = [
    (["best", "-P", "8", "-m", "16", "-v", "2", "-K", "3", "--time-limit", "60",
      "--solve-time-limit", "60"], signal.SIGINT),
    (["best", "-P", "8", "-m", "16", "-v", "2", "-K", "3", "--time-limit", "60"], signal.SIGTERM),
    (["frontier", "-P", "4", "-m", "8", "-v", "5"], signal.SIGINT),
    (["frontier", "-P", "4", "-m", "8", "-v", "5"], signal.SIGTERM),
    (["report", "-P", "4", "-m", "8", "--no-figures", "-o", "{tmp}/r"], signal.SIGINT),
    (["audit"], signal.SIGTERM),
]


@pytest.mark.skipif(not FULL, reason="full fuzz set: PIPEBOUNDS_FUZZ_FULL=1")
@pytest.mark.parametrize("argv, sig", FULL_SIGNALS,
                         ids=[f"{a[0]}-{s.name}" for a, s in FULL_SIGNALS])
def test_long_commands_end_on_signals(tmp_path, argv, sig):
    wait = 3.0 if argv[0] == "report" else 8.0  # the report at its size limit takes ~7 s
    _check_signal([a.replace("{tmp}", str(tmp_path)) for a in argv], sig, wait)


@pytest.mark.skipif(not FULL, reason="full fuzz set: PIPEBOUNDS_FUZZ_FULL=1")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_sweep_pool_ends_on_signals_and_says_how_to_resume(tmp_path, sig):
    grid = _write(tmp_path, "g.json", {"product": {"P": [2, 3, 4], "m_per_P": [4, 8],
                                                   "K": [1, 2, 3, 4]},
                                       "options": {"time_limit": 30}})
    err = _check_signal(["sweep", grid, "--task", "solve", "--store", str(tmp_path / "s.db"),
                         "--workers", "2"], sig, wait=12)
    assert "--resume" in err and "items are stored" in err


# ------------------------------------------------------------------- sizes for time limits
@pytest.mark.parametrize("argv, text", [
    (["solve", "-P", "2048", "-m", "2048", "-K", "1", "--time-limit", "2"], "MAX_ORDER_ITEMS"),
    (["solve", "-P", "64", "-m", "64", "-v", "4", "--time-limit", "2"], "--time-limit 4"),
    (["best", "-P", "2048", "-m", "2048", "-K", "1"], "MAX_ORDER_ITEMS"),
    (["frontier", "-P", "2048", "-m", "2048"], "MAX_ORDER_ITEMS"),
])
def test_sizes_a_time_limit_cannot_hold_are_refused_at_once(argv, text):
    _answer(argv, 2, text)


def test_solve_batch_line_beyond_its_time_limit_is_its_own_error(tmp_path):
    lines = json.dumps({"P": 2, "m": 2}) + "\n" + json.dumps({"P": 2048, "m": 2048}) + "\n"
    out, _ = _answer(["solve", "--batch", _write(tmp_path, "b.jsonl", lines), "--time-limit", "2",
                      "--json", "--quiet"], 0)
    res = json.loads(out)
    assert res[0]["status"] == "optimal" and "MAX_ORDER_ITEMS" in res[1]["error"]


def test_frontier_total_time_leaves_a_proven_range():
    out, _ = _answer(["frontier", "-P", "4", "-m", "8", "-v", "5", "--total-time", "0.01",
                      "--json", "--quiet"], 0)
    r = json.loads(out)
    if not r["K_star_exact"]:
        assert r["K_star_low"] <= r["K_star_high"]


def test_report_beyond_its_size_limit_is_refused_before_the_work(tmp_path):
    _answer(["report", "-P", "32", "-m", "64", "--no-figures", "-o", str(tmp_path / "r")], 2,
            "MAX_REPORT_PAIRS")
    assert not (tmp_path / "r").exists()


# ------------------------------------------- third pass (issue 26): time limits, ranges, signals
@pytest.mark.parametrize("orders, text", [
    ({"0": ["0F0", "0B0", "0F7"], "1": ["1F0", "1B0"]}, "GPU 0: 0F7 names microbatch 7"),
    ({"0": ["0F0", "0B0"], "1": ["1F0", "1B0", "9B0"]}, "GPU 1: 9B0 names stage 9"),
])
@pytest.mark.parametrize("command", ["simulate", "gantt", "export"])
def test_ops_out_of_range_are_malformed_input(tmp_path, orders, text, command):
    doc = _write(tmp_path, "d.json", {**TWO, "orders": orders})
    argv = {"simulate": ["simulate", doc, "--json"],
            "gantt": ["gantt", doc, "-o", str(tmp_path / "g.png")],
            "export": ["export", doc, "--format", "chrome-trace", "-o", "-"]}[command]
    _answer(argv, 2, text)


def test_other_faults_of_the_orders_stay_invalid_schedules(tmp_path):
    placed = {"0": ["0F0", "0B0", "1F0"], "1": ["1F0", "1B0"]}  # a stage on the wrong GPU
    out, _ = _answer(["simulate", _write(tmp_path, "p.json", {**TWO, "orders": placed}),
                      "--json"], 1)
    assert "placement" in out
    _answer(["simulate", _write(tmp_path, "m.json", {**TWO, "orders": {"0": ["0F0", "0B0"],
                                                                         "1": ["1F0"]}})], 1,
            "missing")


def test_the_library_validator_still_reports_range():
    from schedules import Instance, Schedule, simulate

    sched = Schedule.from_strings(Instance(P=2, m=1), {"0": ["0F0", "0B0", "0F3"],
                                                       "1": ["1F0", "1B0"]})
    assert sched.first_out_of_range()[1].microbatch == 3
    assert "range" in {v.rule for v in simulate(sched).violations}


def test_audit_empty_only_is_refused():
    _answer(["audit", "--only", ""], 2, "--only")


def test_branch_and_bound_looks_at_the_clock_between_its_1024_node_checks():
    """A node of P = 12, m = 48 costs milliseconds: 1024 nodes passed a 0.2 s limit by 16 s of
    CPU before the search looked at the clock every 20 ms (bnb.CLOCK_SECONDS)."""
    from schedules import Instance
    from pipebounds.search.bnb import Search
    from pipebounds.search.model import Model

    search = Search(Model.of(Instance(P=12, m=48, K=6)), time_limit=0.2)
    t0 = time.process_time()
    out = search.run(upper=None, stop_at_first=False)
    assert not out.complete and search.nodes < 1024
    assert time.process_time() - t0 < 5.0  # a fence (CPU seconds), not a benchmark


def test_best_with_no_time_left_is_honest_and_quick():
    from schedules import Instance
    from pipebounds.services.best import best

    res = best(Instance(P=4, m=8, K=2), solve_time_limit=5.0, started=time.monotonic() - 1e6)
    assert res.optimum is None and res.optimum_status == "unknown"
    assert all(e.status in ("unknown", "feasible", "optimal", "infeasible") for e in res.ranking)
    assert all(e.status != "optimal" or e.makespan == e.result.lower_bound for e in res.ranking)


def test_synthesis_with_no_time_left_still_answers_with_a_valid_schedule():
    from schedules import Instance, simulate
    from pipebounds.synthesis import synthesize

    res = synthesize(Instance(P=12, m=48, K=6), time_limit=1e-6)
    sim = simulate(res.schedule)
    assert sim.valid and max(sim.peak_memory) <= 6 and res.makespan == sim.makespan
    assert res.status == "feasible" and res.makespan > res.lower_bound


def test_frontier_stopped_at_once_keeps_a_proven_range():
    """An expired deadline (or a signal) before any K is tried: K* is left as [K*_low, P], the
    upper end certified by the simulated 1F1B (KF0)."""
    from schedules import Instance, simulate
    from schedules.deadline import Deadline
    from pipebounds.services.frontier import frontier

    fr = frontier(Instance(P=8, m=32), deadline=Deadline(time.monotonic() - 1))
    assert (fr.K_star_low, fr.K_star_high) == (4, 8) and not fr.K_star_exact
    sim = simulate(fr.certificate)
    assert sim.valid and sim.makespan == fr.optimum_unconstrained and max(sim.peak_memory) <= 8
    assert [p.K for p in fr.curve] == list(range(1, 9))
    assert all(p.optimum is None for p in fr.curve[:-1]) and fr.curve[-1].exact


def test_in_process_commands_count_their_limit_from_the_call():
    """main(argv) in a running process (tests, notebooks) counts --time-limit from the call, not
    from the process start (which may be hours ago)."""
    from schedules.deadline import command_started, process_started

    t0 = time.monotonic()
    out, _ = _answer(["solve", "-P", "2", "-m", "2", "-K", "1", "--time-limit", "5", "--json",
                      "--quiet"], 0)
    assert json.loads(out)["status"] == "optimal"
    assert t0 <= command_started() <= time.monotonic() and process_started() < t0


def test_frontier_prints_what_it_settled_on_a_signal(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pipebounds", "frontier", "-P", "4", "-m", "8",
                             "-v", "5", "--total-time", "inf", "--json", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)
    time.sleep(3.0)
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, (proc.returncode, err)
    r = json.loads(out)
    assert r["interrupted"] is True and r["curve"]
    assert r["K_star_exact"] or r["K_star_low"] <= (r["K_star_high"] or r["K_star_low"])
    assert err.decode().startswith("error: interrupted by SIGTERM")


def test_a_process_start_long_ago_is_not_counted_as_start_up(monkeypatch, capsys):
    """main() with sys.argv in a process started long ago (or a /proc clock that does not
    match): the limit counts from the call, not from a start-up of a million seconds."""
    import schedules.deadline as dl
    from pipebounds.cli import main

    monkeypatch.setattr(dl, "_STARTED", [time.monotonic() - 1e6])
    monkeypatch.setattr(sys, "argv", ["pipebounds", "solve", "-P", "2", "-m", "2", "-K", "1",
                                      "--time-limit", "5", "--json", "--quiet"])
    t0 = time.monotonic()
    assert main() == 0
    assert t0 <= dl.command_started() and json.loads(capsys.readouterr().out)["status"] == "optimal"
