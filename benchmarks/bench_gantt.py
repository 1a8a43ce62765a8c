"""Time ``pipebounds gantt`` on a large schedule (1F1B, P = 32, m = 2048: 131,072 ops), PNG and
HTML, end to end through the CLI (read, simulate, draw, write). Prints seconds and file sizes.

    python benchmarks/bench_gantt.py [P m]
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from schedules import Instance, document_from_schedule  # noqa: E402
from schedules.generators import generate  # noqa: E402


def main() -> None:
    P, m = (int(x) for x in sys.argv[1:3]) if len(sys.argv) > 2 else (32, 2048)
    sched = generate("1f1b", Instance(P=P, m=m))
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "s.json")
        with open(src, "w") as fh:
            json.dump(document_from_schedule(sched), fh)
        for ext in ("png", "html"):
            out = os.path.join(tmp, f"g.{ext}")
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pipebounds", "gantt", src, "-o", out, "--quiet"],
                           check=True)
            dt = time.perf_counter() - t0
            print(f"gantt {sched.num_ops} ops -> .{ext}: {dt:.1f} s, "
                  f"{os.path.getsize(out) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
