"""Reading exact numbers from input: the one reader under every field of the model.

:func:`read_fraction` and :func:`read_whole` turn an input value (a JSON number, a string such
as ``"3/2"``, ``"1.5"`` or ``"2e3"``, a float, a numpy or sympy number) into an exact
``Fraction`` or ``int``, never rounding silently, and bound the digits *before* computing
(``"1e100000000"`` is refused at once, :data:`schedules.limits.MAX_NUMBER_DIGITS`). The caller
names the field and the error classes, so an instance field raises ``InstanceError`` and a
memory-model field ``MemoryModelError`` (:mod:`schedules.instance`, :mod:`schedules.memory`).

This module is the model layer's bottom with :mod:`schedules.limits`: it imports nothing else.

>>> read_fraction("3/2", "b")
Fraction(3, 2)
>>> read_fraction(1.5, "b")
Fraction(3, 2)
>>> read_whole("8", "P")
8
>>> read_limit("inf", "K") is None
True
>>> read_seconds("2.5", "--time-limit")
2.5
"""

from __future__ import annotations

import numbers
import operator
import re
from decimal import Decimal
from fractions import Fraction

from .limits import DOCS, LimitError, MAX_NUMBER_DIGITS, MAX_SECONDS

INT_TEXT = re.compile(r"\s*([+-]?)([0-9]+)\s*\Z")
_FRACTION_TEXT = re.compile(r"\s*([+-]?)([0-9]+)\s*/\s*([0-9]+)\s*\Z")
_DECIMAL_TEXT = re.compile(r"\s*([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,12}))?\s*\Z")
_BIG = 10 ** MAX_NUMBER_DIGITS  # an integer of MAX_NUMBER_DIGITS + 1 digits


def show(value, width: int = 60) -> str:
    """A short printable form of an input value for an error message."""
    text = str(value) if isinstance(value, Decimal) else repr(value)
    return text if len(text) <= width else text[:width] + "..."


def digits_limit(name: str, digits: int, limit_error: type = LimitError) -> None:
    """Raise ``limit_error`` if a number of ``digits`` digits is above MAX_NUMBER_DIGITS."""
    if digits > MAX_NUMBER_DIGITS:
        raise limit_error(f"{name}: a number with {digits} digits is above the limit "
                          f"MAX_NUMBER_DIGITS = {MAX_NUMBER_DIGITS} ({DOCS})")


def bounded_int(n: int, name: str, limit_error: type = LimitError) -> int:
    """``n`` if it has at most MAX_NUMBER_DIGITS digits (else ``limit_error``)."""
    if -_BIG < n < _BIG:
        return n
    digits_limit(name, MAX_NUMBER_DIGITS + 1 if n.bit_length() > 60000 else len(str(abs(n))),
                 limit_error)
    return n


def _from_text(text: str, name: str, error: type, limit_error: type) -> Fraction:
    """Exact value of ``"7"``, ``"3/2"``, ``"1.5"``, ``"2e3"``, digits bounded *before* computing."""
    if len(text) > 4 * MAX_NUMBER_DIGITS:
        digits_limit(name, len(text), limit_error)
    m = _FRACTION_TEXT.match(text)
    if m:
        sign, p, q = m.groups()
        digits_limit(name, max(len(p.lstrip("0")), len(q.lstrip("0"))), limit_error)
        if int(q) == 0:
            raise error(f"{name} must be a number such as 2 or 3/2, got {text!r} "
                        f"(zero denominator)")
        return Fraction(int(sign + p), int(q))
    m = _DECIMAL_TEXT.match(text)
    if m and (m.group(2) or m.group(3)):
        sign, whole, frac, exp = m.groups()
        frac = frac or ""
        digits = (whole + frac).lstrip("0")
        if not digits:
            return Fraction(0)
        shift = (int(exp) if exp else 0) - len(frac)
        digits_limit(name, len(digits) + max(shift, 0), limit_error)
        digits_limit(name, max(-shift, 0) + 1, limit_error)
        value = Fraction(int(digits) * 10 ** max(shift, 0), 10 ** max(-shift, 0))
        return -value if sign == "-" else value
    raise error(f"{name} must be a number such as 2 or 3/2, got {show(text)}")


def read_fraction(value, name: str, error: type = ValueError,
                  limit_error: type = LimitError) -> Fraction:
    """Parse ``value`` into an exact Fraction, naming ``name`` on error.

    Accepted: ints (not bools), Fractions, decimal strings ``"7"``, ``"3/2"``, ``"1.5"``,
    ``"2e3"`` (and ``decimal.Decimal``, which JSON floats are read as), and floats, taken through
    their shortest decimal string (``1.5``), never silently rounded. Integers, numerators and
    denominators have at most ``MAX_NUMBER_DIGITS`` digits, checked before the value is
    computed. Bad values raise ``error``, too many digits ``limit_error``.
    """
    if isinstance(value, bool):
        raise error(f"{name} must be a number, got {value!r}")
    if isinstance(value, int):
        return Fraction(bounded_int(value, name, limit_error))
    if isinstance(value, Fraction):
        bounded_int(value.numerator, name, limit_error)
        bounded_int(value.denominator, name, limit_error)
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise error(f"{name} must be a finite number, got {value!r}")
        return _from_text(repr(value), name, error, limit_error)
    if isinstance(value, str):
        return _from_text(value, name, error, limit_error)
    if hasattr(type(value), "__index__"):  # numpy integers
        return Fraction(bounded_int(operator.index(value), name, limit_error))
    if isinstance(value, (Decimal, numbers.Rational)) or type(value).__module__.startswith(
            ("sympy", "numpy")):
        return _from_text(str(value), name, error, limit_error)
    raise error(f"{name} must be a number such as 2 or 3/2, got {type(value).__name__} "
                f"{show(value)}")


def read_whole(value, name: str, minimum: int = 1, error: type = ValueError,
               limit_error: type = LimitError) -> int:
    """``value`` as an exact whole number ``>= minimum``, naming ``name`` on error.

    Accepted: ints and numpy integers (not bools), and decimal text such as ``"8"`` (flags). A
    float, even ``2.0``, is not a whole number here; digits are bounded as in
    :func:`read_fraction`.
    """
    if isinstance(value, bool):
        raise error(f"{name} must be a whole number >= {minimum}, got {value!r} (a boolean)")
    if isinstance(value, int):
        n = value
    elif isinstance(value, str):
        m = INT_TEXT.match(value) if len(value) <= 4 * MAX_NUMBER_DIGITS else None
        if m is None and len(value) > 4 * MAX_NUMBER_DIGITS and value.strip().isdigit():
            digits_limit(name, len(value.strip()), limit_error)
        if m is None:
            raise error(f"{name} must be a whole number >= {minimum}, got {show(value)}")
        digits_limit(name, len(m.group(2).lstrip("0")), limit_error)
        n = int(m.group(1) + m.group(2))
    elif hasattr(type(value), "__index__") and not isinstance(value, float):
        n = operator.index(value)
    else:
        raise error(f"{name} must be a whole number >= {minimum}, got "
                    f"{type(value).__name__} {show(value)}")
    n = bounded_int(n, name, limit_error)
    if n < minimum:
        raise error(f"{name} must be >= {minimum}, got {n}")
    return n


INF_WORDS = ("inf", "infinity")
"""The spellings of "no limit" a text field accepts (any case); anything else must be a number."""


def read_limit(value, name: str, error: type = ValueError, limit_error: type = LimitError):
    """A limit such as ``K``: a whole number ``>= 1``, or None for no limit.

    No limit is ``None`` (JSON ``null``), the text ``"inf"``/``"infinity"`` (any case) or the
    float infinity. Every other text must be a whole number in ASCII digits
    (:func:`read_whole`): the empty text (an unset shell variable), ``"none"``, ``"1_0"`` or
    non-ASCII digits are refused, never read as "no limit" or as a number.
    """
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in INF_WORDS:
        return None
    if isinstance(value, float) and value == float("inf"):
        return None
    if isinstance(value, str) and not value.strip():
        raise error(f"{name} must be a whole number >= 1 or 'inf', got an empty text")
    return read_whole(value, name, 1, error, limit_error)


def read_seconds(value, name: str, allow_zero: bool = False, allow_inf: bool = False,
                 error: type[Exception] = ValueError, limit_error: type[Exception] = LimitError):
    """A time in seconds (a flag such as ``--time-limit``): an exact decimal read by
    :func:`read_fraction` (ASCII digits, no ``nan``, no ``1_0``), returned as a float.

    It must be ``> 0`` (``>= 0`` with ``allow_zero``); with ``allow_inf``, ``inf`` gives None
    (no limit). At most :data:`MAX_SECONDS`, so a deadline ``now + seconds`` is a float time.
    """
    text = value.strip().lower() if isinstance(value, str) else value
    if allow_inf and (text in INF_WORDS or text == float("inf")):
        return None
    what = "a number of seconds" + (" or 'inf'" if allow_inf else "")
    try:
        t = read_fraction(value, name, error, limit_error)
    except limit_error:
        raise
    except error:
        raise error(f"{name} must be {what}, got {show(value)}") from None
    if t < 0 or (t == 0 and not allow_zero):
        raise error(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {show(value)}")
    if t > MAX_SECONDS:
        raise limit_error(f"{name} = {show(value)} is above the limit MAX_SECONDS = "
                          f"{MAX_SECONDS} ({DOCS})")
    return float(t)
