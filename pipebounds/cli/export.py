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

``--p2p blocking|buffered`` (torch-csv): also run the send/receive orders torch's runtime
builds for the exported order (its default lowering and the one with ``defer_pp_recv=True``,
:func:`schedules.interop.torch.runtime_p2p`) under that semantics, the analysis of ``simulate
--p2p``: for each one that would hang, one ``warning:`` line on standard error names the
lowering, the stuck GPUs and a simple reordering that fixes it, if one does (the file and the
exit status are unchanged).
"""

from __future__ import annotations

from schedules.comms import P2P_MODES

from .common import add_document_arg

FORMATS = ("chrome-trace", "torch-csv")


def register(sub) -> None:
    p = sub.add_parser("export", help="write a schedule as a Chrome trace or a torch CSV",
                       description="Export one orders document (JSON file, or - for standard "
                                   "input): chrome-trace (Perfetto, chrome://tracing) or "
                                   "torch-csv (torch.distributed.pipelining's _load_csv).")
    add_document_arg(p)
    p.add_argument("--format", required=True, choices=FORMATS, help="output format")
    p.add_argument("-o", "--output", required=True, help="output file, or - for standard output")
    p.add_argument("--us-per-unit", default="1",
                   help="chrome-trace: microseconds per model time unit (default 1)")
    p.add_argument("--p2p", choices=P2P_MODES, default=None,
                   help="torch-csv: warn when a send/receive order torch's runtime builds for "
                        "the export (default, defer_pp_recv) hangs under these send semantics")
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
    if args.p2p is not None and args.format != "torch-csv":
        raise CLIError("--p2p checks torch's send/receive orders: it needs --format torch-csv")
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
        if valid and args.p2p is not None:
            for line in p2p_warnings(torch_schedule, args.p2p):
                print(line, file=sys.stderr)
    if args.output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        _write(args.output, text)
    if not valid:
        print(f"exported an invalid schedule: {errors[0]}", file=sys.stderr)
        return 1
    return 0


def p2p_warnings(torch_schedule, semantics: str) -> list[str]:
    """One ``warning:`` line per torch runtime lowering of the exported order that hangs under
    ``semantics`` (:func:`schedules.interop.torch.runtime_p2p`)."""
    from schedules.interop.torch import InteropError, runtime_p2p

    try:
        checks = runtime_p2p(torch_schedule, semantics)
    except InteropError as exc:  # torch's lowering itself refuses the order
        return [f"warning: {exc}"]
    out = []
    for name, chk in checks.items():
        if not chk.hangs:
            continue
        how = "torch's runtime" if name == "default" else "torch's runtime with defer_pp_recv=True"
        stuck = "; ".join(chk.blocked[:2]) + ("; ..." if len(chk.blocked) > 2 else "")
        fix = (f"; reordering its sends and receives by {chk.correction} fixes it"
               if chk.correction else
               "; no simple reordering (deferred receives, rank parity) fixes it")
        out.append(f"warning: under {semantics} sends the send/receive order {how} builds "
                   f"for this export hangs ({stuck}){fix}")
    return out


def _write(path: str, text: str) -> None:
    from .common import CLIError
    from .output import atomic_output

    try:
        with atomic_output(path) as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror}") from None
