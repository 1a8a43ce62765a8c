"""``pipebounds bound --batch FILE --json`` through the command: instances per CPU-second end to end.

Writes a mixed batch (default 200,000 JSON lines: ``P <= 16``, ``m <= 64``, ``K in {1, 2, 3,
inf}``, ``v in {1, 2}``, both placements, a third split, durations in ``{1, 2, 3}``; the
generator of ``bench_bound_batch.py``), runs ``python -m pipebounds bound --batch FILE --json``
as a child process with its output to a file, and reads the child's CPU seconds (user +
system) from ``resource.getrusage(RUSAGE_CHILDREN)``. Interpreter start-up, imports and the
first load of the optima table are the CPU seconds of the same command on a one-line batch,
subtracted. Prints the best of ``--repeat`` runs:

    instances per CPU-second = n / (CPU(n lines) - CPU(1 line))

    python benchmarks/bench_bound_batch_command.py [--n 200000] [--repeat 3] [--profile FILE]

``--profile FILE`` also writes the 60 costliest calls by cumulative time (``python -m cProfile``,
``pstats`` sorted by ``cumtime``) of one run to FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bound_batch import make_batch  # noqa: E402


def child_cpu(argv: list[str], out: str) -> tuple[float, float]:
    """``(CPU seconds, wall seconds)`` of one child process, its standard output to ``out``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(out, "wb") as fh:
        subprocess.run(argv, stdout=fh, check=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--P-max", type=int, default=16)
    ap.add_argument("--m-max", type=int, default=64)
    ap.add_argument("--profile", default=None, help="write a cProfile (cumtime) of one run here")
    args = ap.parse_args(argv)
    batch = make_batch(args.n, P_max=args.P_max, m_max=args.m_max)
    with tempfile.TemporaryDirectory() as tmp:
        big, one, out = (os.path.join(tmp, n) for n in ("batch.jsonl", "one.jsonl", "out.json"))
        Path(big).write_text("".join(json.dumps(d) + "\n" for d in batch))
        Path(one).write_text(json.dumps(batch[0]) + "\n")
        cmd = [sys.executable, "-m", "pipebounds", "bound", "--json", "--batch"]
        start = min(child_cpu(cmd + [one], out)[0] for _ in range(args.repeat))
        runs = [child_cpu(cmd + [big], out) for _ in range(args.repeat)]
        cpu, wall = min(c for c, _ in runs), min(w for _, w in runs)
        res = json.loads(Path(out).read_text())
        assert len(res) == args.n and all("error" not in r for r in res)
        bases: dict = {}
        for r in res:
            bases[r["exact_basis"]] = bases.get(r["exact_basis"], 0) + 1
        print(f"bound --batch (command): {args.n} instances, P <= {args.P_max}, m <= {args.m_max}: "
              f"best of {args.repeat}: {cpu:.3f} CPU-s ({wall:.3f} s wall), start-up (1-line "
              f"batch) {start:.3f} CPU-s -> {args.n / (cpu - start):,.0f} instances per "
              f"CPU-second ({args.n / cpu:,.0f} with start-up)")
        print(f"exact_basis counts {bases}")
        if args.profile:
            import pstats

            stats = os.path.join(tmp, "profile.pstats")
            child_cpu([sys.executable, "-m", "cProfile", "-o", stats, "-m", "pipebounds", "bound",
                       "--json", "--batch", big], out)
            with open(args.profile, "w") as fh:
                pstats.Stats(stats, stream=fh).sort_stats("cumtime").print_stats(60)
            print(f"profile written to {args.profile}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
