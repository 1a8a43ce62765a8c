"""``pipebounds report [-o DIR] [-P N -m N] [--json] [--no-figures]``: the main job (CLI.md)."""

from __future__ import annotations

from .common import CLIError, add_progress_flags, print_json, progress_arg, whole_flag


def register(sub) -> None:
    p = sub.add_parser(
        "report", help="bounds against the known schedules on a default instance",
        description="Lower bounds against every known schedule family, fitted to each memory limit "
                    "K with rematerialization, on four default settings (single-wave fused and "
                    "split, two waves looped and V-shape). Prints the tables; writes report.json, "
                    "report.txt and figures into DIR.")
    p.add_argument("-o", "--out", default="report", help="output folder (default: report)")
    p.add_argument("-P", type=whole_flag("-P"), default=4, help="GPUs of the default settings (default 4)")
    p.add_argument("-m", type=whole_flag("-m"), default=8, help="microbatches (default 8)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    add_progress_flags(p, "a progress display (settings done)")
    p.set_defaults(func=run)


def run(args) -> int:
    from schedules.instance import InstanceError
    from pipebounds.services.report import build_report, default_settings, format_text, to_json, write_report
    from .output import check_output_path

    from schedules.limits import MAX_REPORT_PAIRS, limit_message

    if args.P * args.m > MAX_REPORT_PAIRS:  # the report has no time limit: a size limit instead
        raise CLIError(limit_message("MAX_REPORT_PAIRS", args.P * args.m,
                                     f"P·m = {args.P}·{args.m}") + "; use pipebounds sweep")
    check_output_path(args.out, want_dir=True)  # before the work, not after
    try:
        settings = default_settings(args.P, args.m)
    except InstanceError as exc:
        raise CLIError(str(exc)) from None
    reports = build_report(settings, progress=progress_arg(args))
    written = _write_atomically(reports, args.out, figures=not args.no_figures,
                                write_report=write_report)
    if args.json:
        print_json(to_json(reports))
    else:
        print(format_text(reports))
        print(f"\nwrote {', '.join(str(p) for p in written)}")
    return 0


def _write_atomically(reports, out_dir: str, figures: bool, write_report) -> list:
    """Write the report into a temporary folder beside ``out_dir``, then move each finished file
    into place: a failed write leaves no partial file in ``out_dir``."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    target = Path(out_dir)
    parent = target.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".pipebounds-report-", dir=parent))
    except OSError as exc:
        raise CLIError(f"cannot write the report into {out_dir}: {exc.strerror or exc}") from None
    try:
        try:
            files = write_report(reports, tmp, figures=figures)
        except OSError as exc:
            raise CLIError(f"cannot write the report into {out_dir}: {exc.strerror or exc}") from None
        written = []
        try:
            target.mkdir(parents=True, exist_ok=True)
            for f in files:
                dest = target / Path(f).name
                os.replace(f, dest)
                written.append(dest)
        except OSError as exc:
            raise CLIError(f"cannot write the report into {out_dir}: {exc.strerror or exc}") from None
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
