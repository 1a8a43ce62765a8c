"""Helpers of the fuzz suite (tests/test_fuzz_*.py): run the CLI in-process or in a bounded
subprocess, and the one rule every answer must follow (docs/reliability.md).

The rule: exit status 0, 1 or 2 only; for 2 exactly one line on stderr, ``error: ...``; never a
traceback; never ``internal error`` (that line exists so a bug reaches the user as one line, but
the suite treats it as a failure).
"""

from __future__ import annotations

import io
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from pipebounds.cli import main

CORPUS = Path(__file__).parent / "fuzz_corpus"
ROOT = Path(__file__).resolve().parent.parent
MEMORY_LIMIT = 1 << 30
"""RLIMIT_AS of a subprocess case (1 GiB)."""
TIME_LIMIT = 5.0
"""Seconds a bounded case should take beyond the interpreter's start-up: a speed target, measured
by benchmarks/bench_bounded_inputs.py (not asserted by the tests: a loaded machine misses it)."""
HANG_SECONDS = 300.0
"""The tests' guard: a bounded case still running after this long hangs (the targets above are
seconds; a hang is hours)."""

BOUNDED = [
    ["simulate", str(CORPUS / "m_1e8.json")],
    ["bound", "-P", "1000000000", "-m", "2"],
    ["generate", "1f1b", "-P", "4", "-m", "1000000000"],
    ["bound", "-P", "4", "-m", "8", "-f", "1e100000000"],
    ["simulate", str(CORPUS / "deep_ignored_key.json")],
]
"""Inputs refused (exit 2) in start-up time by a limit: sizes that would allocate gigabytes,
numbers that would take hours, deep nesting."""


def big_document(path, P: int = 64, m: int = 8192) -> None:
    """A 1F1B orders document of ``2 P m`` ops (a million by default) at ``path``."""
    import json

    from builders import one_f_one_b_orders

    path.write_text(json.dumps({"P": P, "m": m, "orders": one_f_one_b_orders(P, m)}))


def run_in_process(argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    """``pipebounds argv`` in this process with a fresh stdin/stdout/stderr."""
    saved = sys.stdin, sys.stdout, sys.stderr
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    err = io.StringIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        code = main(argv)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    out.flush()
    return code, out.buffer.getvalue().decode("utf-8", "replace"), err.getvalue()


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_subprocess(argv: list[str], stdin=None, stdout=subprocess.PIPE, close_stdin=False,
                   timeout: float = 60.0) -> tuple[int, str, str, float]:
    """``python -m pipebounds argv`` under RLIMIT_AS = 1 GiB; returns (code, out, err, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}

    def setup():
        _limits()
        if close_stdin:
            os.close(0)

    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pipebounds", *argv], stdin=stdin,
                          stdout=stdout, stderr=subprocess.PIPE, env=env, preexec_fn=setup,
                          timeout=timeout, check=False)
    seconds = time.perf_counter() - t0
    out = proc.stdout.decode("utf-8", "replace") if isinstance(proc.stdout, bytes) else ""
    return proc.returncode, out, proc.stderr.decode("utf-8", "replace"), seconds


def assert_answer(code: int, err: str, context="") -> None:
    """The rule of docs/reliability.md for one answer of the CLI."""
    assert code in (0, 1, 2), (code, err[-2000:], context)
    assert "Traceback" not in err, (err[-3000:], context)
    assert "internal error" not in err, (err, context)
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("error: "), (err[:2000], context)
