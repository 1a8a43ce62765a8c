"""``pipebounds gantt FILE -o OUT.png|.svg``: draw an orders document (CLI.md).

One row per GPU, ops coloured by kind with their microbatch, idle time visible, the makespan and
peak memory in the title, and a memory panel (``--no-memory`` drops it). matplotlib is imported
only when this command runs.
"""

from __future__ import annotations

import os


def register(sub) -> None:
    p = sub.add_parser("gantt", help="draw a schedule as a Gantt chart",
                       description="Draw one orders document (JSON file, or - for standard "
                                   "input) as a Gantt chart with a memory panel.")
    p.add_argument("file", help="orders document (JSON), or - for standard input")
    p.add_argument("-o", "--output", required=True, help="output picture: .png, .svg or .pdf")
    p.add_argument("--no-memory", action="store_true", help="omit the memory panel")
    p.add_argument("--title", default=None, help="title prefix (default: the document's source)")
    p.set_defaults(func=run)


def run(args) -> int:
    from schedules.io import load_documents, schedule_from_document
    from .common import CLIError, read_text
    from .output import atomic_output, check_output_path

    ext = os.path.splitext(args.output)[1].lower()
    if ext not in (".png", ".svg", ".pdf"):
        raise CLIError(f"output must end in .png, .svg or .pdf, got {args.output!r}")
    check_output_path(args.output)
    docs, was_list = load_documents(read_text(args.file))
    if len(docs) != 1:
        raise CLIError(f"{args.file} holds {len(docs)} documents; gantt draws one")
    schedule = schedule_from_document(docs[0])
    from schedules.gantt import GanttError, save_gantt

    try:
        with atomic_output(args.output) as tmp:
            save_gantt(schedule, tmp, memory=not args.no_memory, title=args.title)
    except GanttError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    return 0
