"""Shared pieces of the command line (CLI.md): instance flags, batch input, JSON output, errors."""

from __future__ import annotations

import argparse
import json
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterator

from schedules import limits
from schedules.instance import Instance, InstanceError, fraction_json
from schedules.io import (INPUT_ERRORS, DocumentError, decode_text, parse_json, read_capped,
                          read_file)
from schedules.errors import PipeboundsError
from schedules.json_numbers import (exact_or_none, exact_string, number, number_or_none,  # noqa: F401
                                    quantities, quantity)


class CLIError(PipeboundsError):
    """Bad input or usage: the CLI prints the message on one line and exits 2."""


def add_instance_flags(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """The instance flags of CLI.md: -P -m -K -v --placement -f -b --b-input --b-weight."""
    g = parser.add_argument_group("instance")
    g.add_argument("-P", type=str, required=False, help="GPUs (required)")
    g.add_argument("-m", type=str, required=False, help="microbatches (required)")
    g.add_argument("-K", type=str, default="inf", help="memory limit per GPU, or 'inf' (default)")
    g.add_argument("-v", type=str, default="1", help="waves: stages per GPU (default 1)")
    g.add_argument("--placement", default="looped", help="looped (default) or vshape")
    g.add_argument("-f", type=str, default="1", help="forward time (default 1)")
    g.add_argument("-b", type=str, default=None, help="fused backward time (default 2)")
    g.add_argument("--b-input", type=str, default=None, help="split backward: input-gradient time")
    g.add_argument("--b-weight", type=str, default=None, help="split backward: weight-gradient time")
    g.add_argument("-c", type=str, default="0", help="communication delay between GPUs (default 0)")
    g.add_argument("--directions", type=str, default="1",
                   help="1 (default) or 2: the bidirectional model (two copies, microbatches "
                        "from both ends; MODEL.md)")
    g.add_argument("--instance", metavar="FILE", default=None,
                   help="an instance object (JSON, or - for standard input) instead of the "
                        "flags: the flags' keys, f/b/b_input/b_weight may be per-stage lists, "
                        "plus c and memory; -K given with it overrides its K")


INSTANCE_DEFAULTS = {"P": None, "m": None, "v": "1", "placement": "looped", "f": "1", "b": None,
                     "b_input": None, "b_weight": None, "c": "0", "directions": "1"}
"""The instance flags' defaults: with ``--instance`` every one of them must be left as it is."""


def instance_from_object(obj: Any, where: str) -> Instance:
    """An instance object (CLI.md third round: the flags' keys, per-stage lists for ``f``,
    ``b``, ``b_input``, ``b_weight``, plus ``c`` and ``memory``) read through
    :meth:`Instance.from_dict`, or CLIError naming the problem and ``where``."""
    if not isinstance(obj, dict):
        raise CLIError(f"{where}: an instance must be a JSON object, got "
                       f"{type(obj).__name__ if obj is not None else 'null'}")
    known = {"P", "m", "K", "v", "placement", "stage_to_rank", "f", "b", "b_input", "b_weight",
             "b_I", "b_W", "c", "memory", "directions", "source", "note", "notes", "name",
             "model"}
    unknown = sorted(str(k) for k in obj if k not in known)
    if unknown:
        raise CLIError(f"{where}: unknown instance key {unknown[0]!r} (keys: P, m, K, v, "
                       f"placement, stage_to_rank, f, b, b_input, b_weight, c, memory, "
                       f"directions)"[:300])
    try:
        return Instance.from_dict(obj)
    except INPUT_ERRORS as exc:
        raise CLIError(f"{where}: {exc}") from None


def read_instance_file(path: str) -> Instance:
    """The instance object in ``path`` (or standard input for ``-``)."""
    where = "standard input" if path == "-" else path
    try:
        obj = parse_json(read_text(path), where)
    except INPUT_ERRORS as exc:
        raise CLIError(f"{where}: {exc}") from None
    if isinstance(obj, dict) and "instance" in obj and "P" not in obj:
        obj = obj["instance"]  # a result object that carries its instance
    return instance_from_object(obj, where)


def seconds_flag(name: str, allow_zero: bool = False, allow_inf: bool = False):
    """An argparse ``type=`` reading a time in seconds through the one number reader
    (:func:`schedules.numbers.read_seconds`: ASCII digits, no ``nan``, ``inf`` only where
    ``allow_inf``); a bad value is a one-line usage error naming ``name``."""
    from schedules.numbers import read_seconds

    def read(text: str):
        try:
            return read_seconds(text, name, allow_zero=allow_zero, allow_inf=allow_inf)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    read.__name__ = name  # argparse names the type in its message
    return read


def whole_flag(name: str, minimum: int = 1, maximum: int | None = None):
    """An argparse ``type=`` reading a whole number ``>= minimum`` (and ``<= maximum``) through
    the one number reader (:func:`schedules.numbers.read_whole`: ASCII digits only)."""
    from schedules.numbers import read_whole

    def read(text: str) -> int:
        try:
            n = read_whole(text, name, minimum)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if maximum is not None and n > maximum:
            raise argparse.ArgumentTypeError(f"{name} must be <= {maximum}, got {n}")
        return n
    read.__name__ = name
    return read


def limit_flag(text: str | None, name: str = "-K"):
    """A memory-limit flag (``-K``): a whole number >= 1 or ``inf`` (None), through
    :func:`schedules.numbers.read_limit`; CLIError otherwise (``''`` and ``none`` included)."""
    from schedules.numbers import read_limit

    try:
        return read_limit(text, name, limit_error=limits.LimitError)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def instance_from_args(args: argparse.Namespace) -> Instance:
    """Build the instance from parsed flags, or raise CLIError naming the problem.

    The flags' text goes to :class:`Instance` as it is, so the rules (and limits) of every
    number are the same as in documents and batch lines (schedules/instance.py).
    """
    path = getattr(args, "instance", None)
    if path is not None:
        given = [k for k, d in INSTANCE_DEFAULTS.items() if getattr(args, k, d) != d]
        if given:
            flag = {"b_input": "--b-input", "b_weight": "--b-weight",
                    "placement": "--placement", "directions": "--directions"
                    }.get(given[0], "-" + given[0])
            raise CLIError(f"give either --instance or instance flags, not both ({flag})")
        inst = read_instance_file(path)
        if getattr(args, "K", "inf") != "inf":
            try:
                inst = inst.with_(K=args.K)
            except InstanceError as exc:
                raise CLIError(str(exc)) from None
        return inst
    if args.P is None or args.m is None:
        raise CLIError("an instance needs -P and -m, or --instance FILE (or --batch FILE where "
                       "supported)")
    if (args.b_input is None) != (args.b_weight is None):
        raise CLIError("split backward needs both --b-input and --b-weight")
    kwargs: dict[str, Any] = dict(P=args.P, m=args.m, K=args.K, v=args.v,
                                  placement=args.placement, f=args.f, c=args.c,
                                  directions=getattr(args, "directions", "1"))
    if args.b_input is not None:
        kwargs.update(b_I=args.b_input, b_W=args.b_weight)
        if args.b is not None:
            kwargs["b"] = args.b
    elif args.b is not None:
        kwargs["b"] = args.b
    try:
        return Instance(**kwargs)
    except InstanceError as exc:
        raise CLIError(str(exc)) from None


def add_overlap_flags(parser: argparse.ArgumentParser) -> None:
    """``--d-fb``, ``--d-fi``: durations of overlapped ``F&B`` ops (MODEL.md third round), for
    the commands that take them (``bound``, ``generate``; the exact engines do not model them)."""
    parser.add_argument("--d-fb", type=str, default=None, metavar="X",
                        help="duration of an overlapped forward + full backward op (F&B)")
    parser.add_argument("--d-fi", type=str, default=None, metavar="X",
                        help="duration of an overlapped forward + input-gradient op (split)")


def with_overlap_flags(inst: Instance, args: argparse.Namespace) -> Instance:
    """``inst`` with the durations of :func:`add_overlap_flags` when given."""
    changes = {k: getattr(args, a) for k, a in (("d_FB", "d_fb"), ("d_FI", "d_fi"))
               if getattr(args, a, None) is not None}
    if not changes:
        return inst
    try:
        return inst.with_(**changes)
    except InstanceError as exc:
        raise CLIError(str(exc)) from None


def check_schedule_size(inst: Instance, what: str = "a schedule of this instance") -> None:
    """CLIError unless a schedule of ``inst`` (one forward and one backward per pair, or ``I``
    and ``W`` split) has at most ``MAX_ORDER_ITEMS`` ops: the size every command that builds,
    draws or writes a whole schedule stays within (seconds, well under 1 GiB)."""
    ops = inst.P * inst.v * inst.m * (3 if inst.split else 2)
    if ops > limits.MAX_ORDER_ITEMS:
        raise CLIError(limits.limit_message(
            "MAX_ORDER_ITEMS", ops, f"ops of {what} ({3 if inst.split else 2}·P·v·m)"))


END_SECONDS = 0.1
"""Seconds of a command's time limit kept for what follows its solve (certification, the
output, the process's exit): ``--time-limit`` is the user's wait (docs/reliability.md)."""


MODEL_OPS_PER_SECOND = 8192
"""Ops of a schedule a solve can prepare per second of its time limit (the known schedules, their
fitting to ``K``, the lower bound and the model), measured on ``P = 64, m = 64, v = 4``: a
larger instance is refused rather than answered late."""


def check_solvable(inst: Instance, time_limit, what: str = "the solve") -> None:
    """CLIError unless ``inst`` is within :func:`check_schedule_size` and, with a time limit
    (seconds; None: none), small enough that ``what`` can prepare its model within it."""
    check_schedule_size(inst)
    ops = inst.P * inst.v * inst.m * (3 if inst.split else 2)
    if time_limit is not None and ops > MODEL_OPS_PER_SECOND * max(time_limit, 1.0):
        need = -(-ops // MODEL_OPS_PER_SECOND)
        raise CLIError(f"{what} cannot build its model of {ops} ops within --time-limit "
                       f"{time_limit:g} s (about {MODEL_OPS_PER_SECOND} ops per second, "
                       f"docs/reliability.md); give --time-limit {need} or more")


def read_bytes(path: str) -> bytes:
    """The bytes of a file, or of standard input for ``-`` (at most ``MAX_INPUT_BYTES``)."""
    if path == "-":
        stdin = sys.stdin
        if stdin is None or getattr(stdin, "closed", False):
            raise CLIError("cannot read standard input: it is closed")
        try:
            return read_capped(getattr(stdin, "buffer", None) or stdin, "standard input")
        except DocumentError as exc:
            raise CLIError(str(exc)) from None
        except (OSError, ValueError) as exc:
            raise CLIError(f"cannot read standard input: {getattr(exc, 'strerror', None) or exc}"
                           ) from None
    try:
        return read_file(path)
    except DocumentError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # embedded NUL in the path
        raise CLIError(f"cannot read {path!r}: {exc}") from None


def read_text(path: str) -> str:
    """Read a file, or standard input for ``-``, as UTF-8 text (one-line error otherwise)."""
    where = "standard input" if path == "-" else path
    try:
        return decode_text(read_bytes(path), where)
    except DocumentError as exc:
        raise CLIError(str(exc)) from None


def read_one_schedule(path: str, verb: str):
    """The :class:`~schedules.schedule.Schedule` of the one orders document in ``path`` (or - for
    standard input); CLIError naming the problem otherwise (``verb``: what the command does)."""
    from schedules.io import INPUT_ERRORS, load_documents, schedule_from_document

    docs, _ = load_documents(read_text(path))
    if len(docs) != 1:
        raise CLIError(f"{path} holds {len(docs)} documents; {verb} one")
    try:
        return schedule_from_document(docs[0])
    except INPUT_ERRORS as exc:
        raise CLIError(str(exc)) from None


def read_batch(path: str) -> Iterator[tuple[Any, Instance | None, str | None]]:
    """Lines of a ``--batch`` file: ``(raw object, instance or None, error or None)`` each.

    Lines are split on ``\\n`` only (a U+2028 or U+0085 inside a JSON string is part of its
    line) and each is decoded, parsed and checked on its own: a bad line, whatever the fault,
    yields its error and does not stop the others. Blank lines are skipped.
    """
    for lineno, line in enumerate(read_bytes(path).split(b"\n"), 1):
        if line.strip():
            yield read_batch_line(line, lineno)


def read_batch_line(line: bytes, lineno: int) -> tuple[Any, Instance | None, str | None]:
    """One ``--batch`` line: ``(raw object, instance or None, error or None)``, whatever the
    fault (never raises)."""
    raw = None
    try:
        raw = parse_json(decode_text(line, "the line"))
        return raw, Instance.from_dict(raw), None
    except INPUT_ERRORS as exc:
        return raw, None, f"line {lineno}: {exc}"
    except Exception as exc:  # noqa: BLE001 - one line must never lose the batch
        return raw, None, f"line {lineno}: internal error (please report): " \
                          f"{type(exc).__name__}: {exc}"


def batch_results(args: argparse.Namespace, report) -> list[dict]:
    """Results of ``report(inst) -> dict`` for every line of ``--batch`` (CLI.md).

    Each result carries its ``instance``; a bad line, or an instance the report fails on, gives
    an object with an ``error`` key and does not stop the others (an unexpected failure names its
    exception type, so a bug is not mistaken for bad input).
    """
    if args.P is not None or args.m is not None or getattr(args, "instance", None) is not None:
        raise CLIError("give either instance flags (or --instance) or --batch, not both")
    return [batch_result(raw, inst, err, report) for raw, inst, err in read_batch(args.batch)]


def batch_result(raw: Any, inst: Instance | None, err: str | None, report) -> dict:
    """The result object of one ``--batch`` line (its error, or ``report(inst)``)."""
    if err is not None or inst is None:
        return {"instance": raw, "error": err}
    try:
        return {"instance": inst.to_dict(), **report(inst)}
    except (CLIError, ValueError, ArithmeticError) as exc:
        return {"instance": inst.to_dict(), "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - one failing line must not stop the others
        return {"instance": inst.to_dict(),
                "error": f"internal error (please report): {type(exc).__name__}: {exc}"}


def add_progress_flags(p: argparse.ArgumentParser, what: str = "progress") -> None:
    """``--progress`` (a bar on stderr even when it is not a terminal) and ``--quiet`` (none);
    without either the bar shows only when stderr is a terminal."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", action="store_true",
                   help=f"{what} on stderr even when it is not a terminal (default: only on a "
                        "terminal)")
    g.add_argument("--quiet", action="store_true", help=f"no {what} on stderr")


def progress_arg(args: argparse.Namespace):
    """The library's ``progress`` argument for :func:`add_progress_flags`' flags
    (:mod:`schedules.progress`): ``ALWAYS``, ``True`` (on a terminal) or ``False``."""
    from schedules.progress import ALWAYS

    if getattr(args, "quiet", False):
        return False
    return ALWAYS if getattr(args, "progress", False) else True


def jsonable(x: Any) -> Any:
    """Fractions become ints or ``"p/q"`` strings; containers are converted recursively."""
    if isinstance(x, Fraction):
        return fraction_json(x)
    if isinstance(x, Decimal):  # a JSON number with a fraction or exponent, echoed back
        return float(x) if x.is_finite() and -300 < x.adjusted() < 300 else str(x)
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        if all(type(v) is str or type(v) is int for v in x):  # action lists: nothing to convert
            return list(x)
        return [jsonable(v) for v in x]
    return x


def print_json(obj: Any) -> None:
    json.dump(jsonable(obj), sys.stdout, indent=None)
    sys.stdout.write("\n")


def add_document_arg(p: argparse.ArgumentParser) -> None:
    """The positional orders document of ``simulate``, ``gantt``, ``export``, ``remat`` and
    ``execute`` (read by :func:`read_one_schedule` and the commands' readers)."""
    p.add_argument("file", help="orders document (JSON), or - for standard input")


def add_budget_flags(p: argparse.ArgumentParser) -> None:
    """``--budget-bytes X`` and ``--memory JSON|FILE`` of ``best`` and ``synthesize`` (read by
    :func:`memory_limit`)."""
    p.add_argument("--budget-bytes", type=str, default=None, metavar="X",
                   help="bytes per GPU (needs --memory, or memory in --instance); replaces -K")
    p.add_argument("--memory", type=str, default=None, metavar="JSON|FILE",
                   help="the memory model (CLI.md 'memory' object), inline JSON or a file")


def memory_arg(text: str):
    """The ``--memory`` argument: a ``memory`` object (CLI.md), inline JSON or a file, read
    through the one reader at the door (:func:`read_text`, :func:`schedules.io.parse_json`:
    size, depth and digit limits; deep nesting is refused, never a RecursionError)."""
    from schedules.memory import MemoryModelError, memory_from_json

    raw = text if text.lstrip().startswith("{") else read_text(text)
    try:
        return memory_from_json(parse_json(raw))
    except DocumentError as exc:
        raise CLIError(f"--memory: {exc}") from None
    except MemoryModelError as exc:
        raise CLIError(f"--memory: {exc}") from None


def memory_limit(args: argparse.Namespace, inst: Instance, command: str):
    """``(instance, budget_bytes)`` from ``-K`` or ``--budget-bytes X --memory JSON|FILE``
    (an instance object's own ``memory`` serves when ``--memory`` is absent); CLIError when
    neither limit is given or both are."""
    budget = None
    if args.memory is not None:
        try:
            inst = inst.with_(memory=memory_arg(args.memory))
        except InstanceError as exc:
            raise CLIError(str(exc)) from None
    if args.budget_bytes is not None:
        if inst.K is not None:
            raise CLIError("give either -K or --budget-bytes, not both")
        if inst.memory is None:
            raise CLIError("--budget-bytes needs --memory (the bytes of each stage)")
        from schedules.instance import to_fraction

        try:
            budget = to_fraction(args.budget_bytes, "--budget-bytes")
        except InstanceError as exc:
            raise CLIError(str(exc)) from None
    elif inst.K is None and (inst.memory is None or inst.memory.budget is None):
        raise CLIError(f"{command} needs a memory limit: -K N or --budget-bytes X")
    elif inst.K is None:
        budget = inst.memory.budget
    return inst, budget
