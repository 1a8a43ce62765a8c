"""The input limits of the toolkit, in one place (docs/reliability.md states them for users).

Every input is checked against these limits at the door (the instance, the orders document, the
JSON text, the command-line flags), before any allocation or computation whose size depends on
the value, so that a small hostile input can neither exhaust memory nor hang a process. Beyond a
limit the library raises :class:`LimitError` (a ``ValueError``) whose one-line message names the
limit, and the CLI exits 2 with that line.

The numbers are chosen so that everything the toolkit allocates for an instance at the limit fits
in well under a few GiB and every time it computes fits in an int64 (and a double) exactly.

>>> check_limit("MAX_STAGES", 10)
>>> check_limit("MAX_STAGES", 10**6, "P·v")
Traceback (most recent call last):
...
schedules.limits.LimitError: P·v = 1000000 is above the limit MAX_STAGES = 65536 (docs/reliability.md)
"""

from __future__ import annotations
from .errors import InputError

MAX_STAGES = 1 << 16
"""``S = P·v``: stages of an instance (so ``P`` and ``v`` too)."""

MAX_PAIRS = 1 << 22
"""``P·v·m``: stage-microbatch pairs of an instance (4,194,304); a schedule has at most five ops
per pair (``F``, ``R``, ``B`` or ``I`` + ``W``, a backward ``R``), about 21 million ops."""

MAX_ORDER_ITEMS = 1 << 19
"""Ops of one schedule that is read (action strings an orders document lists in all) or written
(``generate``): 524,288, about 0.25 GiB and seconds to read, simulate, draw or write, so every
command on a schedule stays within 1 GiB and seconds (a 1F1B schedule of ``P = 64, m = 4096``,
the benchmarks' largest)."""

MAX_DOCUMENTS = 256
"""Orders documents in one input (a JSON list of documents)."""

MAX_JSON_VALUES = 1 << 22
"""Values of one JSON input, bounded before it is parsed by the commas of its text (strings
included): 4,194,304, room for a schedule at ``MAX_ORDER_ITEMS`` and its send/receive order."""

MAX_REPORT_PAIRS = 32
"""``P·m`` of ``pipebounds report``'s default settings (it fits every family to every ``K`` of
four settings, a cost that grows steeply: 7 s at ``P = 4, m = 8``, 24 s at ``8, 8`` and 98 s at
``8, 16`` on the shared two-core machine); larger studies are sweeps (docs/sweep.md)."""

MAX_GRID_ITEMS = 100_000
"""Items of one sweep grid (the product of its lists' lengths, computed before expanding)."""

MAX_INTEGER = 1 << 53
"""``K`` and every whole number an input gives (beyond ``P``, ``m``, ``v``, which have smaller
limits through ``MAX_STAGES`` and ``MAX_PAIRS``)."""

MAX_NUMBER_DIGITS = 40
"""Digits of an integer, of a numerator or a denominator, in the text of a number (a decimal or
scientific form counts the digits the exact value would have, so ``1e5000`` is refused before
it is computed)."""

MAX_TIME_UNITS = 1 << 53
"""Every time of every schedule of an instance, in units of the common denominator of the
durations (``Instance.unit``), stays below this: ``5·P·v·m · (max duration + c)`` in units. So
the integer simulator (int64), CP-SAT and float conversions never overflow or round."""

MAX_SECONDS = 10 ** 9
"""A time limit in seconds (about 31 years): larger values are refused rather than overflowing a
deadline; ``inf`` is the spelling of no limit where a command allows it."""

MAX_JSON_DEPTH = 64
"""Nesting of arrays and objects in any JSON input, ignored keys included."""

MAX_INPUT_BYTES = 1 << 25
"""Size of one input file or of standard input (32 MiB, read in 1 MiB chunks and refused as soon
as it is passed: an endless stream such as ``/dev/zero`` costs 32 MiB and a few milliseconds).
A document at ``MAX_ORDER_ITEMS`` takes about 12 MiB; the parsed form of any 32 MiB input stays
below 0.5 GiB with ``MAX_JSON_VALUES``."""

DOCS = "docs/reliability.md"


class LimitError(InputError):
    """An input is beyond one of the limits of this module; the message names the limit."""


def limit_message(name: str, value, what: str | None = None) -> str:
    """The one-line message for ``value`` above the limit ``name`` (``what`` says what was counted)."""
    return (f"{what or name} = {value} is above the limit {name} = {globals()[name]} ({DOCS})")


def check_limit(name: str, value: int, what: str | None = None,
                error: type[LimitError] = LimitError) -> None:
    """Raise ``error`` (a :class:`LimitError`) when ``value`` exceeds the limit called ``name``."""
    if value > globals()[name]:
        raise error(limit_message(name, value, what))
