"""The sweep mechanism (pipebounds.sweep): executors agree, the store survives interruption."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from pipebounds.cli import main
from pipebounds.sweep import Store, expand, flat_rows_for_test, make_executor, run_sweep

GRID = {"product": {"P": [2, 3], "m_per_P": [1, 2], "K": [1, None],
                    "durations": [{"f": 1, "b": 2}, {"f": 1, "b_input": 1, "b_weight": 1}]}}
VOLATILE = ("key", "seconds", "code_version", "theory_version")


def _table(path) -> list:
    rows = flat_rows_for_test(path)
    return sorted(json.dumps({k: str(v) for k, v in r.items() if k not in VOLATILE},
                             sort_keys=True) for r in rows)


def _sweep(tmp_path, name, executor, task="bound", grid=GRID):
    path = tmp_path / f"{name}.sqlite"
    with Store(path) as store:
        summary = run_sweep(expand(grid, task), store, executor, progress=False)
    return path, summary


def test_pool_and_inprocess_give_the_same_table(tmp_path):
    a, sa = _sweep(tmp_path, "a", make_executor("inprocess"))
    b, sb = _sweep(tmp_path, "b", make_executor("pool", workers=2))
    assert sa.ran == sb.ran == len(expand(GRID, "bound")) == 16
    assert sa.failed == sb.failed == 0
    assert _table(a) == _table(b)


def test_generate_rows_respect_their_bound(tmp_path):
    grid = {"product": {"P": [2], "m": [4], "durations": [{"f": 1, "b": 2}]},
            "options": {"families": ["1f1b", "gpipe"], "polish": False}}
    path, summary = _sweep(tmp_path, "g", make_executor("inprocess"), "generate", grid)
    rows = flat_rows_for_test(path)
    # gpipe peaks at m = 4 activations, 1F1B at P = 2: one row per K from 1 to the peak
    assert sorted((r["family"], r["K"]) for r in rows) == [
        ("1f1b", 1), ("1f1b", 2), ("gpipe", 1), ("gpipe", 2), ("gpipe", 3), ("gpipe", 4)]
    assert all(r["valid"] and r["peak"] <= r["K"] for r in rows)
    assert all(r["makespan_exact"] >= r["lower_bound_exact"] for r in rows)


def test_dask_loopback_cluster_gives_the_same_table(tmp_path, capsys):
    """The documented cluster command (``--scheduler ADDRESS``) on a cluster on 127.0.0.1."""
    distributed = pytest.importorskip("distributed")
    a, _ = _sweep(tmp_path, "a", make_executor("inprocess"))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(GRID))
    b = tmp_path / "b.sqlite"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        code = main(["sweep", str(grid), "--task", "bound", "--store", str(b), "--scheduler",
                     cluster.scheduler_address, "--json", "--quiet"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["ran"] == 16 and summary["failed"] == 0
    assert _table(a) == _table(b)


def test_interrupted_run_resumes_without_redoing(tmp_path):
    items = expand(GRID, "bound")
    calls = []

    def interrupted(todo, fn):
        for n, item in enumerate(todo):
            if n == 5:
                raise KeyboardInterrupt
            calls.append(item.key)
            yield item, fn(item)

    path = tmp_path / "r.sqlite"
    with Store(path) as store, pytest.raises(KeyboardInterrupt):
        run_sweep(items, store, interrupted, progress=False)
    with Store(path) as store:
        assert store.done_keys() == set(calls)
        with pytest.raises(ValueError, match="resume"):
            run_sweep(items, store, make_executor("inprocess"), progress=False)
        redone = []

        def counting(todo, fn):
            for item in todo:
                redone.append(item.key)
                yield item, fn(item)

        summary = run_sweep(items, store, counting, resume=True, progress=False)
    assert summary.skipped == 5 and summary.ran == len(items) - 5
    assert not set(redone) & set(calls)
    full, _ = _sweep(tmp_path, "full", make_executor("inprocess"))
    assert _table(path) == _table(full)


def test_killed_cli_run_keeps_finished_results(tmp_path):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"product": {"P": [2, 3, 4], "m": [2, 3, 4, 5], "K": [1, 2]},
                                "options": {"families": ["1f1b", "gpipe", "looped-bfs"]}}))
    store = tmp_path / "k.sqlite"
    cmd = [sys.executable, "-m", "pipebounds", "sweep", str(grid), "--task", "generate",
           "--store", str(store), "--workers", "1", "--quiet"]
    # its own process group, killed whole (as a shell kills a job): no orphaned pool worker
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.time() + 60
    stored = 0
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        if store.exists():
            try:
                stored = sqlite3.connect(store).execute("SELECT COUNT(*) FROM results").fetchone()[0]
            except sqlite3.OperationalError:
                continue
            if stored >= 3:
                break
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store(store) as s:
        kept = s.done_keys()
    assert len(kept) >= min(stored, 3)
    out = subprocess.run(cmd + ["--resume", "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["skipped"] == len(kept) and summary["ran"] == 24 - len(kept)


def test_store_refuses_a_row_below_its_bound(tmp_path):
    path = tmp_path / "bad.sqlite"
    with Store(path) as store:
        store.add("k", "generate", {"instance": {"P": 2, "m": 2}}, "ok",
                  [{"family": "x", "K": 1, "valid": True, "makespan": 5, "lower_bound": 6,
                    "gap": "5/6"}], 0.0)
    with pytest.raises(ValueError, match="below its lower bound"):
        flat_rows_for_test(path)


@pytest.mark.parametrize("grid, message", [
    ({"product": {"Q": [1]}}, "unknown grid key 'Q'"),
    ({"product": {"P": 2}}, "must be a non-empty list"),
    ({"instances": [], "product": {}}, "exactly one of"),
])
def test_bad_grid_is_one_line_exit_2(tmp_path, capsys, grid, message):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(grid))
    code = main(["sweep", str(path), "--task", "bound", "--store", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_failing_item_is_stored_as_error_and_does_not_stop(tmp_path):
    grid = {"instances": [{"P": 2, "m": 2}, {"P": 0, "m": 2}, {"P": 3, "m": 3}]}
    path, summary = _sweep(tmp_path, "e", make_executor("inprocess"), "bound", grid)
    assert summary.ran == 3 and summary.failed == 1
    errors = [r for r in flat_rows_for_test(path) if r["status"] == "error"]
    assert len(errors) == 1 and "P" in errors[0]["error"]


def test_resume_runs_failed_items_again(tmp_path):
    grid = {"instances": [{"P": 2, "m": 2}, {"P": 3, "m": 3}]}
    items = expand(grid, "bound")
    path = tmp_path / "f.sqlite"
    with Store(path) as store:
        store.add(items[0].key, "bound", items[0].params, "error", "boom", 0.0)
        summary = run_sweep(items, store, make_executor("inprocess"), resume=True,
                            progress=False)
        assert summary.ran == 2 and summary.failed == 0
        assert store.done_keys() == {it.key for it in items}


def _square(x: int) -> int:
    return x * x


def test_parallel_map_in_order_on_every_executor_and_proofs_checks_on_a_cluster(capsys):
    """parallel_map (what proofs_checks runs its exhaustive solves on) keeps the order
    in-process, on a pool and on a loopback Dask cluster; ``python -m proofs_checks
    --scheduler ADDRESS`` passes a check there."""
    from pipebounds.sweep import parallel_map
    from proofs_checks.__main__ import main as checks_main

    args = list(range(20))
    want = [x * x for x in args]
    assert parallel_map(_square, args) == want
    assert parallel_map(_square, args, workers=2) == want
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert parallel_map(_square, args, address=cluster.scheduler_address) == want
        code = checks_main(["--quick", "--only", "MW7-MW9 valid at v = 3", "--scheduler",
                            cluster.scheduler_address])
    out = capsys.readouterr().out
    assert code == 0 and "1 passed, 0 failed" in out


def _sleep_then(x):
    import time

    time.sleep(x)
    return x


def test_parallel_map_records_item_times_and_the_projection_uses_them():
    """parallel_map records each call: its items and their own run times (the largest too);
    the projection of proofs_checks.timing keeps the serial part and divides the items' time by
    N, never below the longest item."""
    from pipebounds.sweep.executors import POOL_CALLS
    from proofs_checks.timing import projected

    assert parallel_map_sleep([0.05, 0.05, 0.2]) == [0.05, 0.05, 0.2]
    call = POOL_CALLS[-1]
    assert call["items"] == 3
    assert 0.3 <= call["item_seconds"] < 1.5
    assert 0.2 <= call["longest"] < 1.0
    row = {"seconds": 10.0, "parallel": {"items": 4, "item_seconds": 8.0, "longest": 3.0,
                                         "wall": 8.0}}
    assert projected(row, 1) == 10.0
    assert projected(row, 2) == 2.0 + 4.0
    assert projected(row, 8) == 2.0 + 3.0          # the longest item bounds it
    assert projected({"seconds": 5.0}, 4) == 5.0   # nothing parallel: all serial


def parallel_map_sleep(xs):
    from pipebounds.sweep import parallel_map

    return parallel_map(_sleep_then, xs, workers=2)


SYNTH_GRID = {"instances": [{"P": 2, "m": 2, "K": 1}, {"P": 2, "m": 4, "K": 2},
                            {"P": 2, "m": 3, "v": 2, "placement": "looped", "K": 2}],
              "options": {"time_limit": 0.3}}


def test_synthesize_rows_of_another_version_are_recomputed_not_mixed(tmp_path):
    from pipebounds.sweep.store import synthesis_version

    items = expand(SYNTH_GRID, "synthesize")
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        first = run_sweep(items, store, make_executor("inprocess"), progress=False)
    assert first.ran == 3 and first.stale == 0 and first.failed == 0
    rows = flat_rows_for_test(path)
    assert {r["synthesis_version"] for r in rows} == {synthesis_version()}
    assert all(r["makespan_exact"] >= r["lower_bound_exact"] for r in rows)
    # plant an older version on one item: a resume must run that item (and only it) again
    stale_key = items[1].key
    db = sqlite3.connect(path)
    (raw,) = db.execute("SELECT rows FROM results WHERE key = ?", (stale_key,)).fetchone()
    old = json.loads(raw)
    old[0]["synthesis_version"] = "0ld0ld0ld0ld"
    db.execute("UPDATE results SET rows = ? WHERE key = ?", (json.dumps(old), stale_key))
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.stale_keys("synthesis_version", synthesis_version()) == {stale_key}
        redone = []

        def counting(todo, fn):
            for item in todo:
                redone.append(item.key)
                yield item, fn(item)

        again = run_sweep(items, store, counting, resume=True, progress=False)
        assert store.stale_keys("synthesis_version", synthesis_version()) == set()
    assert redone == [stale_key] and again.stale == 1 and again.skipped == 2
    assert {r["synthesis_version"] for r in flat_rows_for_test(path)} == {synthesis_version()}


def test_a_row_without_a_version_is_stale_and_other_tasks_are_not_checked(tmp_path):
    with Store(tmp_path / "v.sqlite") as store:
        store.add("a", "synthesize", {}, "ok", [{"K": 1}], 0.1)
        store.add("b", "synthesize", {}, "ok", [{"K": 1, "synthesis_version": "x"}], 0.1)
        store.add("c", "bound", {}, "ok", [{"lower_bound": 3}], 0.1)
        assert store.stale_keys("synthesis_version", "x", "synthesize") == {"a"}
        assert store.stale_keys("synthesis_version", "y", "synthesize") == {"a", "b"}


CODE = '''"""Module doc."""
import math  # used below


class Slot:
    """A slot (doc)."""

    size = 2


def area(r):
    """Area of a disc of radius r (≤ any square's)."""
    # the formula
    return math.pi * r * r  # pi r^2
'''


def test_a_documentation_mend_keeps_the_versions_and_a_code_change_does_not():
    from pipebounds.sweep.store import code_text

    base = code_text(CODE)
    mended = (CODE.replace("Module doc.", "Module doc, mended.\n\nTwo paragraphs now.")
              .replace("# used below", "# imported for pi")
              .replace("(≤ any square's)", "(at most any square's, ≤)")
              .replace("    # the formula\n", "\n    # the formula, πr²\n\n"))
    assert code_text(mended) == base
    for changed in (CODE.replace("size = 2", "size = 3"),
                    CODE.replace("math.pi * r * r", "math.pi * r"),
                    CODE.replace("(doc)", "(doc)\"\"\"\n    size = 1\n    \"\"\"more"),
                    CODE.replace("r * r  # pi r^2", "r * r, '# pi r^2'")):
        assert code_text(changed) != base, changed
    assert "#" not in base and "doc" not in base and "math.pi * r * r" in base
