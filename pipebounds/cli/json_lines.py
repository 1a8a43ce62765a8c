"""JSON lines of a common shape read a column at a time, without a JSON parser per line.

A line's *shape* is its bytes with every decimal digit replaced by NUL (``bytes.translate``:
the length and every other byte are kept). Lines of one shape differ only in their digits, at
the same offsets. A shape is *plain* when its *template* (each run of NULs replaced by a
distinct marker integer) is a JSON object whose keys are distinct and each run is one whole
integer value: not inside a string or a key, without a sign, fraction or exponent. Then, for
every line of that shape whose runs have no leading zero, ``json.loads(line)`` is the template
object with each marker replaced by the integer its run spells (the bytes around every run are
the template's, so the line parses the same way, and a digit run without a leading zero is a
JSON integer with that value). The runs are read with numpy, one column per run, over the
lines of the shape at once.

:func:`read_shapes` returns the plain shapes with enough lines (each as its constant keys and
its integer columns) and the lines left over, for the caller's general path (``json.loads``
line by line). Nothing is guessed: a line is taken only through the equality above, and a
batch containing a NUL byte (which a shape could not tell from a digit) is left entirely to
the general path.
"""

from __future__ import annotations

import json
from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

_DIGITS_TO_NUL = bytes.maketrans(b"0123456789", b"\0" * 10)
_MAX_RUN = 18
"""Longest digit run read (``10^18 < 2^62``: int64, and the callers' integer range)."""
_MARKER = 9_000_000_000_000_000_000
"""Marker ``j`` of a template is ``_MARKER + j``: larger than any run read, so no constant of
a template can equal one."""
_POW10 = 10 ** np.arange(_MAX_RUN - 1, -1, -1, dtype=np.int64)


@dataclass(frozen=True)
class Shape:
    """The lines ``lines`` (indices among the non-blank lines) of one plain shape: ``consts``
    the keys whose value is the same on every line (the template's, no digit in it),
    ``ints`` the keys whose value is an integer run, as int64 columns (one value per line,
    ``>= 0``, in the order of ``lines``)."""

    lines: np.ndarray
    consts: dict
    ints: dict


def _unique_pairs(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def _template(shape: bytes, keys: Optional[Set[str]]) -> Optional[tuple[dict, list]]:
    """``(consts, runs)`` of a plain shape whose keys are among ``keys`` (None: any), else
    None: ``consts`` maps the keys with constant values to them; ``runs`` lists ``(key,
    offset, length)`` of each NUL run, in line order."""
    runs = []
    k = shape.find(b"\0")
    while k >= 0:
        e = k
        while e < len(shape) and shape[e] == 0:
            e += 1
        runs.append((k, e - k))
        k = shape.find(b"\0", e)
    if any(n > _MAX_RUN for _, n in runs):
        return None
    parts, last = [], 0
    for j, (o, n) in enumerate(runs):
        parts += [shape[last:o], str(_MARKER + j).encode()]
        last = o + n
    parts.append(shape[last:])
    try:
        obj = json.loads(b"".join(parts), object_pairs_hook=_unique_pairs)
    except (ValueError, RecursionError):
        return None
    if type(obj) is not dict or (keys is not None and not obj.keys() <= keys):
        return None
    consts, where = {}, {}
    for key, val in obj.items():
        if type(val) is int and val >= _MARKER:
            where[val - _MARKER] = key
        else:
            consts[key] = val
    if sorted(where) != list(range(len(runs))):
        return None  # a run inside a string or a key, signed, a fraction, an exponent...
    return consts, [(where[j], o, n) for j, (o, n) in enumerate(runs)]


class Lines(Sequence):
    """The non-blank lines of a text, sliced from it on demand (``lines[k]`` is the ``k``-th
    non-blank line, without its ``\\n``)."""

    def __init__(self, data: bytes, starts: np.ndarray, lens: np.ndarray):
        self._data, self._starts, self._lens = data, starts.tolist(), lens.tolist()

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, k):  # type: ignore[override]
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        s = self._starts[k]
        return self._data[s:s + self._lens[k]]


def read_shapes(data: bytes, min_lines: int = 64, keys: Optional[Set[str]] = None
                ) -> tuple[list[Shape], Lines, np.ndarray, list[int]]:
    """``(shapes, texts, rest, linenos)`` of the JSON lines ``data`` (split on ``\\n``; blank
    lines, only ASCII whitespace, skipped): the plain shapes of at least ``min_lines`` lines
    whose keys are among ``keys`` (None: any) (:class:`Shape`), the text of every non-blank
    line (:class:`Lines`), the indices (into ``texts``) of the lines no shape took
    (ascending), and the 1-based line number of each non-blank line."""
    shapes_of = data.translate(_DIGITS_TO_NUL).split(b"\n")
    N = len(shapes_of)
    lens = np.fromiter(map(len, shapes_of), np.int64, N)   # a shape is as long as its line
    starts = np.cumsum(lens + 1) - (lens + 1)
    distinct: dict[bytes, Any] = dict.fromkeys(shapes_of)
    for u, s in enumerate(distinct):
        distinct[s] = u
    ids = np.fromiter(map(distinct.__getitem__, shapes_of), np.int64, N)
    blank = [u for s, u in distinct.items() if not s.strip()]
    keep = np.flatnonzero(~np.isin(ids, blank)) if blank else np.arange(N)
    texts = Lines(data, starts[keep], lens[keep])
    linenos = (keep + 1).tolist()
    n = keep.size
    if b"\0" in data or not n:
        return [], texts, np.arange(n), linenos
    if blank:
        ids, starts = ids[keep], starts[keep]
    counts = np.bincount(ids, minlength=len(distinct))
    taken = np.zeros(n, bool)
    found: list[Shape] = []
    order = np.argsort(ids, kind="stable")
    ends = np.concatenate([[0], np.cumsum(counts)])
    buf = np.frombuffer(data, np.uint8)
    for s, u in distinct.items():
        if counts[u] < min_lines:
            continue
        tpl = _template(s, keys)
        if tpl is None:
            continue
        consts, runs = tpl
        rows = order[ends[u]:ends[u + 1]]
        at = starts[rows]
        good = np.ones(rows.size, bool)
        ints = {}
        for key, o, w in runs:
            digits = buf[(at + o)[:, None] + np.arange(w)].astype(np.int64) - 48
            if w > 1:
                good &= digits[:, 0] != 0            # a leading zero is not JSON
            ints[key] = digits @ _POW10[_MAX_RUN - w:]
        if not good.all():
            rows = rows[good]
            ints = {k: c[good] for k, c in ints.items()}
        if rows.size:
            taken[rows] = True
            found.append(Shape(rows, consts, ints))
    return found, texts, np.flatnonzero(~taken), linenos


__all__ = ["Lines", "Shape", "read_shapes"]
