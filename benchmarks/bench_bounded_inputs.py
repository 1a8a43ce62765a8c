"""Speed targets of the hostile inputs that limits refuse (issue 16, docs/reliability.md): each
answers within the interpreter's start-up plus a few seconds.

The tests (tests/test_fuzz_cli.py) check the answers and only guard against hangs
(``HANG_SECONDS``); the targets live here, because a loaded machine misses them:

* the inputs of ``fuzz_cli.BOUNDED`` (sizes that would allocate gigabytes, numbers that would
  take hours, deep nesting): start-up + ``TIME_LIMIT`` (5 s);
* ``bound -P 4 -m 8 -v 1000``: start-up + 5 s;
* ``gantt`` of a million-op document (refused by ``MAX_ORDER_ITEMS``): start-up + 10 s.

Each runs in a subprocess under RLIMIT_AS = 1 GiB; start-up is the best of two runs of a trivial
refused document. Prints wall and child CPU seconds; exits 1 when a target is missed.

    python benchmarks/bench_bounded_inputs.py
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_cli import BOUNDED, CORPUS, TIME_LIMIT, big_document, run_subprocess  # noqa: E402


def timed(argv: list[str]) -> tuple[int, float, float]:
    """(exit status, wall seconds, child CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code, _, _, wall = run_subprocess(argv, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return code, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    startup = min(timed(["simulate", str(CORPUS / "m_1e8.json")])[1] for _ in range(2))
    print(f"start-up {startup:.2f} s")
    missed = 0
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.json"
        big_document(big)
        cases = [(a, TIME_LIMIT) for a in BOUNDED] + [
            (["bound", "-P", "4", "-m", "8", "-v", "1000"], TIME_LIMIT),
            (["gantt", str(big), "-o", os.path.join(tmp, "big.png")], 10.0)]
        for argv, target in cases:
            code, wall, cpu = timed(argv)
            ok = wall < startup + target
            missed += not ok
            print(f"{'ok  ' if ok else 'MISS'} exit {code}  wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
                  f"target {startup + target:5.2f} s  {' '.join(argv)[:70]}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
