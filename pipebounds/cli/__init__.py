"""``pipebounds``: the command line (CLI.md), a thin layer over the library.

Each command lives in its own module of this package with ``register(subparsers)``, which adds
its parser and sets ``func(args) -> exit status``. Exit status: 0 done, 1 ``simulate`` found an
invalid document, 2 bad input or usage (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .common import CLIError

COMMANDS = ("bound", "solve", "generate", "simulate", "gantt", "report", "frontier", "remat", "best",
            "audit", "export", "sweep")
"""Command modules, in the order ``pipebounds --help`` lists them."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors: one line, exit 2
        raise CLIError(f"{self.prog}: {message}")


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("pipebounds")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pipebounds",
                     description="Bounds, exact optima and known schedules for pipeline "
                                 "parallelism under memory limits (see README.md).")
    parser.add_argument("--version", action="version", version=f"pipebounds {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pipebounds`` console script."""
    from schedules.instance import InstanceError
    from schedules.io import INPUT_ERRORS
    from schedules.ops import OpError

    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except CLIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except INPUT_ERRORS + (OpError, InstanceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
