"""``pipebounds gantt FILE -o OUT.png|.svg|.pdf|.html``: draw an orders document (CLI.md).

One row per GPU, ops coloured by kind with their microbatch, idle time visible, the makespan and
peak memory in the title, and a memory panel (``--no-memory`` drops it from pictures). ``.html``
writes a self-contained interactive page (pipebounds/viz/gantt_html.py; needs plotly, extra
``interactive``). Past ``--detail-limit`` ops the chart aggregates (busy fraction per GPU in time
bins; the title says so). An invalid schedule (memory above ``K``, a deadlock, a send/receive
order that hangs) is drawn with its violations marked and the command exits 1; one with
structural errors (missing ops, wrong placement...) is refused with exit 2. matplotlib/plotly are
imported only when
this command runs.
"""

from __future__ import annotations

import os

from schedules.io import printable_text

from .common import add_document_arg, whole_flag

PICTURES = (".png", ".svg", ".pdf")


def register(sub) -> None:
    p = sub.add_parser("gantt", help="draw a schedule as a Gantt chart (picture or HTML page)",
                       description="Draw one orders document (JSON file, or - for standard "
                                   "input) as a Gantt chart with a memory panel; .html gives an "
                                   "interactive page (zoom, hover, dependencies). Exit 1 when "
                                   "the schedule is invalid (drawn with its violations marked).")
    add_document_arg(p)
    p.add_argument("-o", "--output", required=True, help="output: .png, .svg, .pdf or .html")
    p.add_argument("--no-memory", action="store_true", help="omit the memory panel (pictures)")
    p.add_argument("--title", default=None, type=printable_text,
                   help="title prefix (default: the document's source)")
    p.add_argument("--detail-limit", type=whole_flag("--detail-limit", 0), default=None,
                   help="aggregate past this many ops (default 20000 for pictures, 10000 for "
                        "HTML)")
    from .common import add_progress_flags

    add_progress_flags(p, "a progress display (large schedules)")
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from schedules.progress import progress_bar
    from .common import CLIError, read_one_schedule
    from .output import atomic_output, check_output_path

    ext = os.path.splitext(args.output)[1].lower()
    if ext not in PICTURES + (".html",):
        raise CLIError(f"output must end in .png, .svg, .pdf or .html, got {args.output!r}")
    if args.detail_limit is not None and args.detail_limit < 0:
        raise CLIError(f"--detail-limit must be >= 0, got {args.detail_limit}")
    check_output_path(args.output)
    schedule = read_one_schedule(args.file, "gantt draws")
    if ext == ".html":
        try:
            import plotly  # noqa: F401
        except ImportError:
            raise CLIError("an .html Gantt needs plotly: pip install 'pipebounds[interactive]'") \
                from None
    from pipebounds.viz.gantt_data import GanttError, gantt_data

    big = schedule.num_ops > 5000
    bar = progress_bar(3, "gantt", enabled=False if args.quiet else
                       (True if args.progress else (None if big else False)))
    bar.set_postfix_str("simulate")
    try:
        data = gantt_data(schedule)
    except GanttError as exc:
        bar.close()
        raise CLIError(str(exc)) from None
    bar.update()
    bar.set_postfix_str("draw")
    kw = {} if args.detail_limit is None else {"detail_limit": args.detail_limit}
    try:
        with atomic_output(args.output) as tmp:
            if ext == ".html":
                from pipebounds.viz.gantt_html import save_gantt_html

                save_gantt_html(schedule, tmp, title=args.title, data=data, **kw)
            else:
                from pipebounds.viz.gantt import save_gantt

                save_gantt(schedule, tmp, memory=not args.no_memory, title=args.title,
                           data=data, **kw)
            bar.update()
    except OSError as exc:
        raise CLIError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    finally:
        bar.close()
    if not data.result.valid:
        print(f"invalid schedule drawn with its violations marked: {data.result.errors[0]}",
              file=sys.stderr)
        return 1
    return 0
