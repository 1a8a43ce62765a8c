"""The causes of issue 16, each run as the user would (a fresh ``python -m pipebounds`` process
under RLIMIT_AS = 1 GiB): exit status, the answer's first line, seconds and peak memory.

    python tools/hostile_inputs.py [--timeout 30]

The hostile inputs are the files of tests/fuzz_corpus/ (the fuzz suite asserts the same answers
in-process, tests/test_fuzz_cli.py). Seconds include the interpreter's start-up, printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fuzz_corpus"


def c(name: str) -> str:
    return str(CORPUS / name)


def big_document(path: str, P: int = 64, m: int = 8192) -> int:
    """A 1F1B orders document with ``2·P·m`` ops (tests/builders.py writes the orders)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from builders import one_f_one_b_orders

    with open(path, "w") as fh:
        json.dump({"P": P, "m": m, "durations": {"F": 1, "B": 2},
                   "orders": one_f_one_b_orders(P, m)}, fh)
    return 2 * P * m


def causes(tmp: str) -> list[tuple[str, list[str], dict]]:
    out = f"{tmp}/out.png"
    return [
        ("1 non-UTF-8 input", ["simulate", c("non_utf8.json")], {}),
        ("2 deep JSON in an ignored key", ["simulate", c("deep_ignored_key.json")], {}),
        ("3 integer of 5000 digits", ["simulate", c("int_5000_digits.json")], {}),
        ("3 action with 5000 digits", ["simulate", c("action_5000_digits.json")], {}),
        ("3 -f 1e5000", ["bound", "-P", "4", "-m", "8", "-f", "1e5000"], {}),
        ("4 durations 1e19 (simulate)", ["simulate", c("duration_1e19.json")], {}),
        ("4 durations 1e19 (gantt)", ["gantt", c("duration_1e19.json"), "-o", out], {}),
        ("4 -f 1e19 (solve)", ["solve", "-P", "2", "-m", "2", "-f", "10000000000000000000"], {}),
        ("4 split -b 1e19 (bound)", ["bound", "-P", "4", "-m", "8", "--b-input",
                                     "10000000000000000000", "--b-weight", "1"], {}),
        ("4 huge c", ["bound", "-P", "4", "-m", "8", "-c", "1e30"], {}),
        ("5 non-numeric stage_to_rank", ["simulate", c("stage_to_rank_text.json")], {}),
        ("6 60-byte document, m = 1e8", ["simulate", c("m_1e8.json")], {}),
        ("6 -P 1000000000", ["bound", "-P", "1000000000", "-m", "2"], {}),
        ("7 report -o an existing file", ["report", "-o", c("valid.json")], {}),
        ("7 report -o unwritable", ["report", "-o", "/proc/pipebounds-report"], {}),
        ("8 full stdout", ["generate", "1f1b", "-P", "4", "-m", "8", "--json"], {"full": True}),
        ("9 mathtext source (gantt)", ["gantt", c("mathtext_source.json"), "-o", out], {}),
        ("9 mathtext --title", ["gantt", c("valid.json"), "-o", out, "--title", "$\\frac{"], {}),
        ("10 simulate - with stdin closed", ["simulate", "-"], {"close_stdin": True}),
        ("11 bound -v 1000", ["bound", "-P", "4", "-m", "8", "-v", "1000"], {}),
        ("11 bound -P 1000000", ["bound", "-P", "1000000", "-m", "8"], {}),
        ("11 bound -m 1000000 -v 2", ["bound", "-P", "4", "-m", "1000000", "-v", "2"], {}),
        ("11 generate -m 1000000000", ["generate", "1f1b", "-P", "4", "-m", "1000000000"], {}),
        ("11 -f 1e100000000", ["bound", "-P", "4", "-m", "8", "-f", "1e100000000"], {}),
        ("11 gantt of a 1M-op document", ["gantt", f"{tmp}/big.json", "-o", out], {"big": True}),
        ("12 JSON true as P", ["simulate", c("P_true.json")], {}),
        ("12 stage_to_rank [0.5, 1]", ["simulate", c("stage_to_rank_half.json")], {}),
        ("12 --batch with U+2028/U+0085", ["bound", "--batch", c("batch_u2028.jsonl"), "--json"],
         {"count": True}),
        ("13 --batch of hostile lines", ["bound", "--batch", c("batch_hostile.jsonl"), "--json"],
         {"count": True}),
    ]


def run(argv: list[str], opts: dict, timeout: float) -> tuple[object, str, float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}

    def setup():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        if opts.get("close_stdin"):
            os.close(0)

    stdout = open("/dev/full", "wb") if opts.get("full") else subprocess.PIPE
    rss_file = tempfile.mktemp(prefix="pb-rss-")
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_file, sys.executable, "-m",
                                 "pipebounds", *argv], stdout=stdout,
                                stderr=subprocess.PIPE, env=env, preexec_fn=setup,
                                start_new_session=True)
        out, err = proc.communicate(timeout=timeout)
        code: object = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # /usr/bin/time and the CLI under it
        proc.communicate()
        out, err, code = b"", b"", f"timeout {timeout:.0f} s"
    finally:
        if opts.get("full"):
            stdout.close()
    seconds = time.perf_counter() - t0
    try:
        with open(rss_file) as fh:
            rss_mib = int(fh.read().split()[-1]) / 1024
        os.remove(rss_file)
    except (OSError, ValueError, IndexError):
        rss_mib = float("nan")
    text = err.decode("utf-8", "replace").strip()
    if not text and out and opts.get("count"):
        res = json.loads(out)
        text = f"{len(res)} results, {sum('error' in r for r in res)} with an error"
    elif not text:
        text = "(no message)"
    return code, text.splitlines()[0][:110] if text else "", seconds, rss_mib


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timeout", type=float, default=30.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        n = big_document(f"{tmp}/big.json")
        code, _, start, _ = run(["simulate", c("m_1e8.json")], {}, args.timeout)
        print(f"start-up of a process (refused 60-byte document): {start:.2f} s; big document: "
              f"{n} ops")
        for name, argv, opts in causes(tmp):
            code, text, seconds, rss = run(argv, opts, args.timeout)
            print(f"{name:<34} exit {code!s:<10} {seconds:6.2f} s {rss:6.0f} MiB  {text}")


if __name__ == "__main__":
    main()
