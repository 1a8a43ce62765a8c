"""``pipebounds export FILE --format chrome-trace|torch-csv -o OUT``: an orders document in
another tool's format (CLI.md, docs/interop.md).

``chrome-trace``: Trace Event JSON for Perfetto / chrome://tracing, one track per GPU, one event
per op, ``ts``/``dur`` in µs (``--us-per-unit``, default 1 µs per model time unit), memory
counters (pipebounds/viz/chrome_trace.py). ``torch-csv``: the ``compute_only`` CSV that torch
2.13's ``_PipelineScheduleRuntime._load_csv`` reads (one row per rank), microbatches renumbered
(stated on standard error) when the last stage's forwards are not in the order 0..m-1: torch
keeps losses in forward order and reads them by microbatch number. A schedule with ``R`` ops is
refused (exit 2): torch has no recompute action (``pipebounds execute`` runs them). An invalid
document is still exported (chrome-trace needs a timing) and the command then exits 1, naming the
first violation.
"""

from __future__ import annotations

FORMATS = ("chrome-trace", "torch-csv")


def register(sub) -> None:
    p = sub.add_parser("export", help="write a schedule as a Chrome trace or a torch CSV",
                       description="Export one orders document (JSON file, or - for standard "
                                   "input): chrome-trace (Perfetto, chrome://tracing) or "
                                   "torch-csv (torch.distributed.pipelining's _load_csv).")
    p.add_argument("file", help="orders document (JSON), or - for standard input")
    p.add_argument("--format", required=True, choices=FORMATS, help="output format")
    p.add_argument("-o", "--output", required=True, help="output file, or - for standard output")
    p.add_argument("--us-per-unit", default="1",
                   help="chrome-trace: microseconds per model time unit (default 1)")
    p.set_defaults(func=run)


def run(args) -> int:
    import json
    import sys

    from schedules.instance import InstanceError, to_fraction
    from schedules.simulate import simulate
    from .common import CLIError, read_one_schedule
    from .output import check_output_path

    try:
        scale = to_fraction(args.us_per_unit, "--us-per-unit")
    except InstanceError as exc:
        raise CLIError(str(exc)) from None
    if scale <= 0:
        raise CLIError(f"--us-per-unit must be > 0, got {args.us_per_unit}")
    if args.output != "-":
        check_output_path(args.output)
    schedule = read_one_schedule(args.file, "export writes")
    if args.format == "chrome-trace":
        from pipebounds.viz.gantt_data import GanttError
        from pipebounds.viz.chrome_trace import chrome_trace

        try:
            trace = chrome_trace(schedule, float(scale))
        except GanttError as exc:
            raise CLIError(str(exc)) from None
        text = json.dumps(trace, separators=(",", ":")) + "\n"
        valid = trace["otherData"]["valid"]
        errors = trace["otherData"]["errors"]
    else:
        from schedules.interop.torch import InteropError, for_torch_runtime, to_torch_csv

        try:
            torch_schedule, renumbered = for_torch_runtime(schedule)
        except InteropError as exc:
            raise CLIError(str(exc)) from None
        text = to_torch_csv(torch_schedule, renumber=False)
        if renumbered:
            moves = ", ".join(f"{j}->{k}" for j, k in enumerate(renumbered) if j != k)
            print(f"note: microbatches renumbered so that the last stage's forwards run "
                  f"0..m-1, as torch's runtime needs (it keeps losses in forward order): "
                  f"{moves}", file=sys.stderr)
        res = simulate(schedule)
        valid, errors = res.valid, res.errors
    if args.output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        _write(args.output, text)
    if not valid:
        print(f"exported an invalid schedule: {errors[0]}", file=sys.stderr)
        return 1
    return 0


def _write(path: str, text: str) -> None:
    from .common import CLIError
    from .output import atomic_output

    try:
        with atomic_output(path) as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror}") from None
