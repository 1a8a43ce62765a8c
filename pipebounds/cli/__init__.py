"""``pipebounds``: the command line (CLI.md), a thin layer over the library.

Each command lives in its own module of this package with ``register(subparsers)``, which adds
its parser and sets ``func(args) -> exit status``. Exit status: 0 done, 1 ``simulate`` found an
invalid document, 2 bad input or usage (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
import time

from schedules.stopping import EXIT_STATUS, Interrupted, ending_on_signals, signalled

from schedules.errors import PipeboundsError

from .common import CLIError

OWN_SIGNALS = ("solve", "synthesize")
"""Commands that handle SIGINT/SIGTERM themselves (printing the best found so far); every other
command ends on them with status 130/143 and one line (:func:`schedules.stopping.ending_on_signals`)."""

MAX_STARTUP_SECONDS = 30.0
"""The longest start-up (process start to :func:`main`) counted in a command's time limit."""

COMMANDS = ("bound", "solve", "generate", "simulate", "gantt", "report", "frontier", "remat", "best",
            "synthesize", "audit", "export", "sweep", "execute", "profile")
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


class _Version(argparse.Action):
    """``--version``: the installed version, read (importlib.metadata) only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"pipebounds {_version()}")  # stdout, as argparse's own version action
        parser.exit()


def build_parser(commands=None) -> argparse.ArgumentParser:
    """The parser of ``commands`` (default: every command of :data:`COMMANDS`). :func:`main`
    registers only the command it runs, so a command's start-up imports only its own module
    (benchmarks/bench_startup.py)."""
    parser = _Parser(prog="pipebounds",
                     description="Bounds, exact optima and known schedules for pipeline "
                                 "parallelism under memory limits (see README.md).")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS if commands is None else commands:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def _one_line(text: str, limit: int = 500) -> str:
    text = " ".join(str(text).split("\n")).replace("\r", " ")
    return text if len(text) <= limit else text[:limit] + " ..."


def _error(message: str) -> int:
    """Print ``error: <message>`` as one line on stderr; the exit status of bad input (2)."""
    try:
        print(f"error: {_one_line(message)}", file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass  # no stderr to report to: the status still says it
    return 2


def _discard_stdout() -> None:
    """Point a broken or full standard output at /dev/null, so that the interpreter's last
    flush at exit neither fails again nor prints a traceback."""
    try:
        if sys.stdout is sys.__stdout__ and sys.stdout is not None:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, sys.stdout.fileno())
            os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pipebounds`` console script.

    Exit status (docs/reliability.md): 0 done; 1 ``simulate`` found an invalid document; 2 bad
    input or usage, a limit, or an output that cannot be written: always one line on stderr,
    never a traceback. Every exception the toolkit raises on purpose derives from
    :class:`schedules.errors.PipeboundsError` and is caught here, in one place. An
    unexpected exception (a bug) is also one line, ``error: internal error (please report):
    Type: message``, with status 2. A closed pipe on standard output (``| head``)
    ends quietly with status 0.
    """
    from schedules.deadline import mark_command_start, process_started

    # time limits are the user's wait: from the process start when this is the program (no
    # argv given), from this call when a running process calls it (tests, notebooks); a start
    # more than MAX_STARTUP_SECONDS ago is not this program's start-up (main() called later
    # with sys.argv, or a clock that /proc does not match): then from this call too
    now = time.monotonic()
    start = process_started() if argv is None else now
    mark_command_start(start if now - start <= MAX_STARTUP_SECONDS else now)
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser((argv[0],) if argv and argv[0] in COMMANDS else None)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):  # no command: usage on stderr, status 2
            return _error(f"a command is needed; {parser.format_usage().strip()} "
                          f"(pipebounds --help lists the commands)")
        if args.command in OWN_SIGNALS:
            code = int(args.func(args) or 0)
        else:
            defer = bool(getattr(args, "defer_signals", False))
            with ending_on_signals(defer):
                code = int(args.func(args) or 0)
                if defer and signalled() is not None:  # it printed its best so far
                    raise Interrupted(signalled(), "the best found so far is printed")
        if sys.stdout is not None:
            sys.stdout.flush()
        return code
    except Interrupted as exc:  # SIGINT/SIGTERM: 130/143, one line saying what was kept
        name = signal.Signals(exc.signum).name
        _error(f"interrupted by {name}" + (f": {exc.note}" if exc.note else ""))
        return EXIT_STATUS.get(exc.signum, 2)
    except PipeboundsError as exc:  # the one root (schedules.errors): bad input, a limit, a refusal
        return _error(str(exc))
    except BrokenPipeError:
        _discard_stdout()
        return 0
    except KeyboardInterrupt:
        return _error("interrupted")
    except MemoryError:
        return _error("out of memory: the input is too large for this machine (the limits are in "
                      "docs/reliability.md)")
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EPIPE):
            _discard_stdout()
            return _error(f"cannot write the output: {exc.strerror or exc}")
        return _error(f"internal error (please report): {type(exc).__name__}: {exc}")
    except SystemExit as exc:  # argparse --help/--version
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:  # noqa: BLE001 - a bug: one line, not a traceback
        return _error(f"internal error (please report): {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    sys.exit(main())
