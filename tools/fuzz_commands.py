"""A fuzz pass over every command (issue 26, "done when"): hostile flags, documents, grids and time
limits, each run as a user would in a subprocess under RLIMIT_AS = 1 GiB with a 10 s timeout.

Each case says which exit statuses are right and, optionally, a check of the answer (a wrong
answer: an ``optimal`` whose makespan is not its bound, a JSON output that does not parse, a time
limit passed by more than 1.5 s...). Prints one line per failing case and the counts of the
five classes of issue 26: internal errors, wrong exits, hangs (> 10 s), > 1 GiB, wrong answers.

    python tools/fuzz_commands.py [--only COMMAND] [--verbose]

The cases that found something are kept in tests/test_fuzz_hardening.py.
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
MEMORY = 1 << 30
TIMEOUT = 10.0
OVER = 1.5  # seconds a --time-limit may be passed (start-up included)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run(argv: list[str], cwd: str, stdin: bytes = b"") -> tuple[str | int, str, str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "pipebounds", *argv], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                            preexec_fn=_limits, start_new_session=True)
    try:
        out, err = proc.communicate(stdin, timeout=TIMEOUT)
        code: str | int = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        code = "hang"
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), wall


CPU = [0.0]
"""The child CPU seconds of the last :func:`run` (the machine may be loaded: wall >> CPU)."""


def _json(out: str):
    return json.loads(out)


def optimal_means_bound(out: str) -> str | None:
    r = _json(out)
    for x in r if isinstance(r, list) else [r]:
        if x.get("status") == "optimal" and "lower_bound_exact" in x and \
                x.get("makespan_exact") not in (None, x["lower_bound_exact"]) and \
                x.get("value_exact", x.get("makespan_exact")) != x["lower_bound_exact"]:
            return f"optimal but makespan {x.get('makespan_exact')} != bound {x['lower_bound_exact']}"
    return None


def within(limit: float):
    def check(out: str, seconds: float) -> str | None:
        return None if seconds <= limit + OVER else f"{seconds:.1f} s for a {limit:g} s limit"
    return check


def cases(tmp: str):
    """``(label, argv, allowed exit statuses, answer check or None, stdin)``."""
    d = Path(tmp)

    def doc(name: str, obj) -> str:
        p = d / name
        p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
        return str(p)

    ok = {"P": 2, "m": 2, "orders": {"0": ["0F0", "0F1", "0B0", "0B1"],
                                     "1": ["1F0", "1F1", "1B0", "1B1"]}}
    good = doc("ok.json", ok)
    mid = ["-P", "12", "-m", "48", "-K", "6"]
    split = ["--b-input", "1", "--b-weight", "1"]
    # ------------------------------------------------------------------ time limits
    for T in ("0.001", "0.3", "1"):
        yield (f"solve mid T={T}", ["solve", *mid, "--time-limit", T, "--json"], {0},
               (optimal_means_bound, within(float(T))), b"")
        yield (f"solve cpsat v2 T={T}", ["solve", "-P", "8", "-m", "24", "-v", "2", "-K", "5",
                                         "--engine", "cpsat", "--time-limit", T, "--json"], {0},
               (optimal_means_bound, within(float(T))), b"")
        yield (f"solve search T={T}", ["solve", *mid, "--engine", "search", "--time-limit", T,
                                       "--json"], {0}, (optimal_means_bound, within(float(T))), b"")
        yield (f"solve synth auto T={T}", ["solve", *mid, "--synthesize", "auto", "--time-limit",
                                           T, "--json"], {0},
               (optimal_means_bound, within(float(T))), b"")
        yield (f"synthesize mid T={T}", ["synthesize", *mid, "--time-limit", T, "--json"], {0},
               (optimal_means_bound, within(float(T))), b"")
        yield (f"synthesize split T={T}", ["synthesize", "-P", "8", "-m", "32", "-K", "3", *split,
                                           "--backward", "--time-limit", T, "--json"], {0},
               (optimal_means_bound, within(float(T))), b"")
        yield (f"frontier mid T={T}", ["frontier", "-P", "12", "-m", "48", "--time-limit", T,
                                       "--total-time", T, "--json"], {0},
               (None, within(float(T))), b"")
        yield (f"frontier v3 T={T}", ["frontier", "-P", "3", "-m", "6", "-v", "3",
                                      "--solve-curve", "--time-limit", T, "--total-time", T,
                                      "--json"], {0}, (None, within(float(T))), b"")
    yield ("solve T=1e-300", ["solve", "-P", "4", "-m", "8", "-K", "2", "--time-limit", "1e-300"],
           {0, 2}, None, b"")
    yield ("solve synth 1e9", ["solve", "-P", "3", "-m", "4", "-K", "2", "--time-limit", "1",
                               "--synthesize", "1e9", "--json"], {0},
           (optimal_means_bound, within(1.0)), b"")
    yield ("solve batch short", ["solve", "--batch", "-", "--time-limit", "0.2", "--json"], {0},
           (optimal_means_bound, None),
           b'{"P": 12, "m": 48, "K": 6}\n{"P": 8, "m": 24, "v": 2, "K": 5}\n{"P": 2, "m": 2}\n')
    yield ("best mid T=0.1", ["best", *mid, "--time-limit", "0.1", "--solve-time-limit", "0.1",
                              "--json"], {0}, None, b"")
    yield ("best K=1 split", ["best", "-P", "6", "-m", "12", "-K", "1", *split, "--backward",
                              "--time-limit", "0.2", "--solve-time-limit", "0.2", "--json"],
           {0}, None, b"")
    yield ("best synth tiny", ["best", "-P", "4", "-m", "8", "-K", "2", "--time-limit", "0.1",
                               "--synthesize", "0.001", "--json"], {0}, None, b"")
    yield ("best policy megatron K1", ["best", *mid[:4], "-K", "1", "--policy", "megatron",
                                       "--solve-time-limit", "0.5", "--json"], {0}, None, b"")
    yield ("best memory {}", ["best", "-P", "2", "-m", "2", "--budget-bytes", "10", "--memory",
                              "{}"], {2}, None, b"")
    yield ("best memory list", ["best", "-P", "2", "-m", "2", "--budget-bytes", "10",
                                "--memory", "[1, 2]"], {2}, None, b"")
    yield ("best budget no memory", ["best", "-P", "2", "-m", "2", "--budget-bytes", "10"], {2},
           None, b"")
    # ------------------------------------------------------------------ remat
    gen = subprocess.run([sys.executable, "-m", "pipebounds", "generate", "1f1b", "-P", "12",
                          "-m", "48", "--json"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp).stdout
    big = doc("big.json", gen)
    for T in ("0.001", "0.5", "1"):
        yield (f"remat big T={T}", ["remat", big, "-K", "6", "--time-limit", T, "--json"], {0},
               (optimal_means_bound, within(float(T))), b"")
    yield ("remat span P12", ["remat", big, "-K", "6", "--objective", "span", "--time-limit",
                              "1", "--json"], {0, 2}, (optimal_means_bound, within(1.0)), b"")
    yield ("remat adjacent backward fused", ["remat", good, "-K", "1", "--backward",
                                             "--positions", "adjacent"], {2}, None, b"")
    yield ("remat no K", ["remat", good], {2}, None, b"")
    yield ("remat K 0", ["remat", good, "-K", "0"], {2}, None, b"")
    yield ("remat R first", ["remat", doc("r.json", {**ok, "orders": {
        "0": ["0R0", "0F0", "0F1", "0B0", "0B1"], "1": ["1F0", "1F1", "1B0", "1B1"]}}), "-K",
        "1", "--json"], {0, 2}, (optimal_means_bound, None), b"")
    yield ("remat policy all budget", ["remat", good, "--policy", "all", "--budget-bytes", "5"],
           {2}, None, b"")
    # ------------------------------------------------------------------ out-of-range ops
    far = {**ok, "orders": {"0": ["0F0", "0F1", "0F9", "0B0", "0B1"],
                            "1": ["1F0", "1F1", "1B0", "1B1"]}}
    high = {**ok, "orders": {"0": ["0F0", "0F1", "0B0", "0B1"],
                             "1": ["1F0", "1F1", "1B0", "1B1", "5B0"]}}
    for name, obj in (("microbatch", far), ("stage", high)):
        p = doc(f"range_{name}.json", obj)
        for cmd in (["simulate", p], ["simulate", p, "--json"], ["gantt", p, "-o",
                    str(d / f"{name}.png")], ["export", p, "--format", "chrome-trace", "-o", "-"],
                    ["remat", p, "-K", "1"]):
            yield (f"{cmd[0]} op {name} out of range", cmd, {2}, None, b"")
    yield ("simulate list of range docs", ["simulate", "-"], {2}, None,
           json.dumps([ok, far]).encode())
    yield ("simulate placement stays 1", ["simulate", doc("pl.json", {**ok, "orders": {
        "0": ["0F0", "0F1", "0B0", "0B1", "1F0"], "1": ["1F0", "1F1", "1B0", "1B1"]}})], {1},
        None, b"")
    yield ("simulate missing stays 1", ["simulate", doc("mi.json", {**ok, "orders": {
        "0": ["0F0", "0F1", "0B0", "0B1"], "1": ["1F0", "1F1", "1B0"]}})], {1}, None, b"")
    yield ("simulate negative microbatch", ["simulate", doc("neg.json", {**ok, "orders": {
        "0": ["0F-1"], "1": []}})], {2}, None, b"")
    yield ("simulate orders list", ["simulate", doc("lst.json", {**ok, "orders": [
        ["0F0", "0F1", "0B0", "0B1"], ["1F0", "1F1", "1B0", "1B1"]]}), "--json"], {0}, None, b"")
    yield ("simulate K 0 doc", ["simulate", doc("k0.json", {**ok, "K": 0})], {2}, None, b"")
    yield ("simulate 2^32 microbatch", ["simulate", doc("m32.json", {**ok, "orders": {
        "0": ["0F4294967296"], "1": []}})], {2}, None, b"")
    # ------------------------------------------------------------------ generate, bound
    for fam in ("1f1b", "zb-h2", "interleaved", "dualpipev", "gpipe", "zb-v"):
        yield (f"generate {fam} K1", ["generate", fam, "-P", "8", "-m", "16", "-K", "1", *split,
                                      "--json"], {0, 2}, None, b"")
        yield (f"generate {fam} P1 m1", ["generate", fam, "-P", "1", "-m", "1"], {0, 2}, None, b"")
    yield ("generate unknown", ["generate", "nope", "-P", "2", "-m", "2"], {2}, None, b"")
    yield ("generate d-fb on fused", ["generate", "dualpipev-fb", "-P", "2", "-m", "4",
                                      "--d-fb", "-1"], {2}, None, b"")
    for flags in (["-f", "0"], ["-b", "0"], ["-c", "-1"], ["-f", "1/0"], ["-b", "1e-400"],
                  ["-K", "-1"], ["-v", "0"], ["--placement", "zigzag"], ["-f", "0x10"]):
        yield (f"bound {' '.join(flags)}", ["bound", "-P", "4", "-m", "8", *flags], {2}, None, b"")
    yield ("bound certify tiny", ["bound", "-P", "6", "-m", "12", "-K", "2", "--certify",
                                  "0.001", "--json"], {0}, None, b"")
    yield ("bound certify mid", ["bound", *mid, "--certify", "2", "--json"], {0},
           (None, within(2.0 + 3.0)), b"")
    yield ("bound batch hostile", ["bound", "--batch", "-", "--json"], {0}, None,
           b'\xef\xbb\xbf{"P": 2, "m": 2}\n{"P": -1, "m": 2}\n\n{"P": 2, "m": 2, "K": 0}\n'
           b'{"P": 1e400, "m": 2}\n[1]\n"x"\n{"P": 2, "m": 2, "c": "1/0"}\n')
    yield ("bound batch empty", ["bound", "--batch", "-", "--json"], {0, 2}, None, b"")
    # ------------------------------------------------------------------ sweep, report, audit
    yield ("sweep grid list", ["sweep", doc("g1.json", "[1, 2]"), "--task", "bound", "--store",
                               str(d / "s1.db")], {2}, None, b"")
    yield ("sweep empty product", ["sweep", doc("g2.json", {"product": {"P": [], "m_per_P": [1]}}),
                                   "--task", "bound", "--store", str(d / "s2.db")], {0, 2}, None,
           b"")
    yield ("sweep unknown task", ["sweep", good, "--task", "nope", "--store", str(d / "s3.db")],
           {2}, None, b"")
    yield ("sweep store proc", ["sweep", doc("g3.json", {"product": {"P": [2], "m_per_P": [1]}}),
                                "--task", "bound", "--store", "/proc/x.db"], {2}, None, b"")
    yield ("sweep time limit in grid", ["sweep", doc("g4.json", {"product": {
        "P": [8], "m_per_P": [4], "K": [3]}, "options": {"time_limit": 0.2}}), "--task", "solve",
        "--store", str(d / "s4.db"), "--executor", "inprocess", "--json"], {0, 2}, None, b"")
    yield ("report P1 m1", ["report", "-P", "1", "-m", "1", "--no-figures", "-o",
                            str(d / "rep1")], {0, 2}, None, b"")
    yield ("report relative", ["report", "-P", "2", "-m", "2", "--no-figures", "-o", "rel/out"],
           {0}, None, b"")
    yield ("report P 0", ["report", "-P", "0", "-m", "2", "--no-figures"], {2}, None, b"")
    yield ("audit unknown", ["audit", "--only", "nope"], {2}, None, b"")
    yield ("audit empty only", ["audit", "--only", ""], {2}, None, b"")
    yield ("audit markdown json", ["audit", "--markdown", "--json"], {2}, None, b"")
    # ------------------------------------------------------------------ gantt, export, execute
    yield ("gantt empty orders", ["gantt", doc("e.json", {"P": 1, "m": 1, "orders": {}}), "-o",
                                  str(d / "e.png")], {1, 2}, None, b"")
    yield ("gantt txt", ["gantt", good, "-o", str(d / "g.txt")], {2}, None, b"")
    yield ("gantt detail 0", ["gantt", good, "-o", str(d / "g.png"), "--detail-limit", "0"],
           {0, 2}, None, b"")
    for us in ("0", "-1", "nan", "1e400"):
        yield (f"export us {us}", ["export", good, "--format", "chrome-trace", "--us-per-unit", us,
                                   "-o", "-"], {2}, None, b"")
    yield ("export torch-csv R", ["export", doc("rr.json", {**ok, "orders": {
        "0": ["0F0", "0F1", "0B0", "0R1", "0B1"], "1": ["1F0", "1F1", "1B0", "1B1"]}}),
        "--format", "torch-csv", "-o", "-"], {2}, None, b"")
    yield ("export full", ["export", good, "--format", "chrome-trace", "-o", "/dev/full"], {2},
           None, b"")
    yield ("execute world 0", ["execute", good, "--world-size", "0"], {2}, None, b"")
    yield ("execute world mismatch", ["execute", good, "--world-size", "3"], {2}, None, b"")
    yield ("execute range doc", ["execute", str(d / "range_microbatch.json"), "--world-size",
                                 "2"], {2}, None, b"")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    counts = {"cases": 0, "internal errors": 0, "wrong exits": 0, "hangs": 0, "> 1 GiB": 0,
              "wrong answers": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for label, argv, allowed, check, stdin in cases(tmp):
            if args.only and argv[0] != args.only:
                continue
            counts["cases"] += 1
            code, out, err, seconds = run(argv, tmp, stdin)
            lines = [x for x in err.splitlines() if x.strip()]
            why = None
            if code == "hang":
                counts["hangs"] += 1
                why = "hang"
            elif "Traceback" in err or "internal error" in err:
                counts["internal errors"] += 1
                why = "internal error: " + (lines[-1] if lines else "")
            elif "out of memory" in err or "MemoryError" in err or code in (-9, -11, 137, 139):
                counts["> 1 GiB"] += 1
                why = f"memory ({code})"
            elif code not in allowed or (code == 2 and len(lines) != 1):
                counts["wrong exits"] += 1
                why = f"exit {code} (allowed {sorted(allowed)}), stderr {lines[:2]}"
            elif check is not None and code == 0:
                answer, timing = check
                try:
                    why = (answer(out) if answer else None) or (timing(out, seconds) if timing
                                                                 else None)
                except ValueError as exc:
                    why = f"output does not parse: {exc}"
                if why:
                    counts["wrong answers"] += 1
            if why or args.verbose:
                print(f"{'FAIL' if why else 'ok  '} {seconds:5.1f} s ({CPU[0]:4.1f} s CPU)  "
                      f"{label}: {why or code}",
                      flush=True)
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if any(v for k, v in counts.items() if k != "cases") else 0


if __name__ == "__main__":
    sys.exit(main())
