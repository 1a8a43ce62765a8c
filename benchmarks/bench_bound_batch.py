"""``pipebounds bound --batch FILE --json``: instances per second end to end, and lower_bound() per
instance.

Generates a mixed batch (default 20,000 instances: ``P <= 8``, ``m <= 32``,
``K in {1, 2, 3, inf}``, ``v in {1, 2}``, both placements, a third split, durations in
``{1, 2, 3}``), runs the CLI in-process (``pipebounds.cli.main``: JSON lines read, bounds,
certification lookups, JSON list written; interpreter start-up and imports excluded, the first
run loads pipebounds/data/optima.jsonl and is reported apart), prints instances/s, and checks the batch
result against the per-instance path (:func:`pipebounds.cli.bound.bound_report`, i.e.
:func:`bounds.lower_bound` plus :func:`pipebounds.certify.certify`) on a sample. Then times
:func:`bounds.lower_bound` on single instances (microseconds per call).

    python benchmarks/bench_bound_batch.py [--n 20000] [--repeat 3] [--sample 500]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bounds import lower_bound  # noqa: E402
from pipebounds.cli import main  # noqa: E402
from pipebounds.cli.bound import bound_report  # noqa: E402
from schedules import Instance  # noqa: E402


def make_batch(n: int, seed: int = 0, P_max: int = 8, m_max: int = 32) -> list[dict]:
    """``n`` random instances: ``P <= P_max``, ``m <= m_max``, ``K in {1, 2, 3, inf}``,
    ``v in {1, 2}``, both placements, a third split, durations in ``{1, 2, 3}``."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        d = {"P": rng.randint(1, P_max), "m": rng.randint(1, m_max), "K": rng.choice([1, 2, 3, None]),
             "v": rng.choice([1, 2]), "placement": rng.choice(["looped", "vshape"]),
             "f": rng.randint(1, 3)}
        if rng.random() < 1 / 3:
            d.update(b_input=rng.randint(1, 3), b_weight=rng.randint(1, 3))
        else:
            d["b"] = rng.randint(1, 3)
        out.append(d)
    return out


def run_cli(path: str) -> tuple[float, float, list]:
    """``(wall seconds, CPU seconds, results)`` of one in-process run."""
    buf = io.StringIO()
    t0, c0 = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(buf):
        code = main(["bound", "--batch", path, "--json"])
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    assert code == 0
    return dt, dc, json.loads(buf.getvalue())


def main_(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sample", type=int, default=500)
    args = ap.parse_args(argv)
    batch = make_batch(args.n)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        fh.write("\n".join(json.dumps(d) for d in batch) + "\n")
        path = fh.name
    first, _, res = run_cli(path)
    runs = [run_cli(path)[:2] for _ in range(args.repeat)]
    best, cpu = min(t for t, _ in runs), min(c for _, c in runs)
    print(f"bound --batch: {args.n} instances (mixed single/multi wave, fused/split, K in "
          f"1,2,3,inf): first run {first:.3f} s (loads pipebounds/data/optima.jsonl), then best "
          f"{best:.3f} s wall of {args.repeat} -> {args.n / best:,.0f} instances/s wall clock, "
          f"{args.n / cpu:,.0f} instances per CPU-second ({cpu:.3f} s CPU)")
    # the batch equals the per-instance path on a sample
    rng = random.Random(1)
    sample = rng.sample(range(args.n), min(args.sample, args.n))
    for k in sample:
        inst = Instance.from_dict(batch[k])
        want = json.loads(json.dumps({"instance": inst.to_dict(), **bound_report(inst)}))
        assert res[k] == want, (batch[k], res[k], want)
        assert res[k]["lower_bound_exact"] == str(lower_bound(inst).value).replace(" ", "")
    print(f"checked: {len(sample)} sampled results equal the per-instance lower_bound() and "
          f"certification")
    exact = sum(r["exact"] for r in res)
    bases = {}
    for r in res:
        bases[r["exact_basis"]] = bases.get(r["exact_basis"], 0) + 1
    print(f"exact on {exact} of {args.n}; exact_basis counts {bases}")
    # lower_bound() on one instance
    for d in ({"P": 8, "m": 32, "K": 1}, {"P": 8, "m": 32, "K": 2},
              {"P": 8, "m": 32, "K": 2, "b_input": 1, "b_weight": 1},
              {"P": 8, "m": 32, "K": 1, "v": 2, "placement": "vshape"},
              {"P": 8, "m": 32, "K": 3, "v": 2},
              {"P": 8, "m": 32, "K": None, "v": 2, "placement": "vshape", "b_input": 1,
               "b_weight": 2}):
        inst = Instance.from_dict(d)
        lower_bound(inst)
        reps = 300
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(reps):
            lower_bound(inst)
        us = (time.perf_counter() - t0) / reps * 1e6
        cus = (time.process_time() - c0) / reps * 1e6
        print(f"lower_bound {d}: {us:.0f} us wall, {cus:.0f} us CPU")
    Path(path).unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main_())
