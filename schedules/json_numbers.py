"""Writing exact numbers into JSON output: the one number convention of every command.

A quantity ``X`` is written as two keys (docs/CLI.md, "JSON numbers"): ``X``, a JSON number
(an integer when ``X`` is integral, else the nearest float), and ``X_exact``, its exact value as
a string (``"33"``, ``"10/3"``). A list of quantities gives a list of numbers and a list of exact
strings; ``None`` (unknown) gives ``null`` for both. Counts are plain integers (no ``_exact``).
Orders documents and instance objects keep their input format (integers or ``"p/q"``), since
they are read back by the tools.

>>> quantity("makespan", Fraction(10, 3))
{'makespan': 3.3333333333333335, 'makespan_exact': '10/3'}
>>> quantity("peak", [2, Fraction(3, 2)])
{'peak': [2, 1.5], 'peak_exact': ['2', '3/2']}
>>> quantity("optimum", None)
{'optimum': None, 'optimum_exact': None}
"""

from __future__ import annotations

from fractions import Fraction


def number(x) -> int | float:
    """A JSON number for an exact value ``x``: ``int`` when whole, else the nearest ``float``."""
    x = Fraction(x)
    return x.numerator if x.denominator == 1 else float(x)


def exact_string(x) -> str:
    """The exact string of ``x``: ``"p"`` when whole, else ``"p/q"`` in lowest terms."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def number_or_none(x):
    """:func:`number` of ``x``, a list of them for a list, ``None`` for ``None``."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [number_or_none(y) for y in x]
    return number(x)


def exact_or_none(x):
    """:func:`exact_string` of ``x``, a list of them for a list, ``None`` for ``None``."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [exact_or_none(y) for y in x]
    return exact_string(x)


def quantity(key: str, x) -> dict:
    """``{key: number, key + "_exact": exact string}`` of ``x`` (a value, a list, or None)."""
    return {key: number_or_none(x), f"{key}_exact": exact_or_none(x)}


def quantities(**values) -> dict:
    """:func:`quantity` of each keyword, merged in order."""
    out: dict = {}
    for key, x in values.items():
        out.update(quantity(key, x))
    return out
