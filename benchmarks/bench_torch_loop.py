"""The loop of docs/interop.md, closed on this machine (needs torch): profile a small transformer
on CPU, let ``best`` choose the schedule and recomputation for three memory budgets, run each
choice with ``run_schedule`` on 2 gloo processes and print predicted against measured peak
memory and step time.

    PYTHONPATH=. python benchmarks/bench_torch_loop.py [--width 64] [--seq 32] [-m 8]

Predicted: the ``best`` entry's makespan (profiled microseconds) and per-GPU peak bytes (bytes
model of the profile: static + saved activations). Measured: the slowest rank's wall time of the
second of two steps, and per GPU the static bytes plus the peak bytes of saved tensors
(saved-tensor hooks). Times depend on the machine's load; memory does not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("-m", type=int, default=8)
    ap.add_argument("--budgets", default="12000000,3000000,2000000",
                    help="bytes per GPU, comma separated")
    args = ap.parse_args()
    from pipebounds.torch.launch import execute
    from pipebounds.torch.models import ModelSpec

    spec = ModelSpec(name="transformer", width=args.width, seq=args.seq, heads=2)
    py = [sys.executable, "-m", "pipebounds"]
    with tempfile.TemporaryDirectory() as d:
        inst_path, mem_path = os.path.join(d, "inst.json"), os.path.join(d, "mem.json")
        subprocess.run(py + ["profile", "--model", "transformer", "--width", str(args.width),
                             "--seq", str(args.seq), "--stages", "2", "-P", "2", "-m",
                             str(args.m), "-o", inst_path], check=True, capture_output=True)
        inst = json.load(open(inst_path))
        json.dump(inst["memory"], open(mem_path, "w"))
        print(f"profile (us): f {inst['f']} b_input {inst['b_input']} b_weight "
              f"{inst['b_weight']}; bytes: activation {inst['memory']['activation']} kept "
              f"{inst['memory']['kept_after_input']} static {inst['memory']['static']}")
        print("| budget (B/GPU) | chosen | recomputes | predicted peak (B) | measured peak (B) "
              "| predicted step (ms) | measured step (ms) | grad error |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for budget in [int(x) for x in args.budgets.split(",")]:
            out = subprocess.run(py + ["best", "--instance", inst_path, "--budget-bytes",
                                       str(budget), "--memory", mem_path, "--time-limit", "5",
                                       "--solve-time-limit", "0", "--json", "--quiet"],
                                 check=True, capture_output=True, text=True).stdout
            top = json.loads(out)["ranking"][0]
            doc = top["schedule"]
            rep = execute(doc, 2, spec, check=True)
            static = inst["memory"]["static"]
            measured = [static[r["rank"]] + r["peak_bytes"] for r in rep["ranks"]]
            err = max(r["grad_error"] for r in rep["ranks"])
            print(f"| {budget} | {top['family']} ({top.get('order', '')}) | {top['recomputed']} "
                  f"| {top['peak']} | {measured} | {top['makespan'] / 1e3:.1f} | "
                  f"{rep['measured_seconds'] * 1e3:.1f} | {err:.1e} |")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
