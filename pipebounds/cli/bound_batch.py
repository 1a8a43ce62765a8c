"""``pipebounds bound --batch`` without ``--certify``: JSON lines in, a JSON list out, fast.

The lines are read a column at a time: the lines of a common shape (the same bytes but for
their digits, :mod:`pipebounds.cli.json_lines`) by numpy, the others by ``json.loads`` line by
line. Every line with integer fields in the ranges of :data:`bounds.batch.LIMITS` (named
placement, integer durations, no delay) goes through the array evaluation
:func:`bounds.batch.lower_bounds` and the lookups of :mod:`pipebounds.certify` (the checked
ranges' vectorised twin :func:`pipebounds.certify.checked.checked_range_rows`,
pipebounds/data/optima.jsonl by an integer key); any other line (a rational duration,
``stage_to_rank``, ``c``, a bad value, ...) through the per-instance path of
:func:`pipebounds.cli.bound.bound_report`, which also writes the error of a bad line. The
output objects are the same either way (tests/test_cli_bound.py compares them), and so are
the bytes: the array path writes the text ``json.dumps`` would write, directly (the encoder
would cost more than the bounds). Result rows of one pattern (the same terms applying, the
same fractions, the same binding terms, fused or split, the same basis and its detail) are one
sequence of constant and value pieces, joined per row; ints become text through a table of
small ints.
benchmarks/bench_bound_batch_command.py measures the command end to end.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from typing import Any, Callable, Optional

import numpy as np

from bounds.batch import Rows, lower_bounds, supported
from bounds.evaluate import TERM_IDS, exact_theorem

from .common import batch_result, jsonable, read_batch_line
from .json_lines import Shape, read_shapes
from ..certify.checked import CHECKED_RANGES, checked_range_rows
from ..certify.optima import RESOURCE, table_optima_rows

MIN_SHAPE_LINES = 64
"""Lines of one shape read a column at a time when at least this many (fewer: ``json.loads``
line by line is cheaper than the shape's few hundred microseconds of numpy calls)."""
_VEC_KEYS = {"P", "m", "K", "v", "placement", "f", "b", "b_input", "b_weight"}


def _int_column(values) -> tuple[np.ndarray, np.ndarray]:
    """``(int64 array, ok)``: ``ok`` where the value is an int (not a bool) in ``[1, 2^62)``.
    ``values``: a list of JSON values, or an int64 array of integers in ``[0, 2^62)`` (a
    column of digit runs, :func:`pipebounds.cli.json_lines.read_shapes`)."""
    if type(values) is np.ndarray:
        return values, values >= 1
    if set(map(type, values)) == {int}:
        try:
            arr = np.array(values, dtype=np.int64)
            return arr, arr >= 1
        except OverflowError:
            pass
    ok = np.array([type(x) is int and 0 < x < (1 << 62) for x in values], bool)
    arr = np.array([x if k else 0 for x, k in zip(values, ok.tolist())], dtype=np.int64)
    return arr, ok & (arr >= 1)


_ABSENT = object()
_PLACEMENTS = {"looped": 0, "vshape": 1}


def _K_column(values) -> tuple[np.ndarray, np.ndarray]:
    """``(K, ok)``: :func:`_int_column`, with null and ``"inf"`` read as 0 (unconstrained)."""
    if type(values) is np.ndarray or set(map(type, values)) == {int}:
        return _int_column(values)
    unbounded = np.array([x is None or x == "inf" for x in values], bool)
    K, ok = _int_column([1 if x is None or x == "inf" else x for x in values])
    K[unbounded] = 0
    return K, ok


def _placement_column(values) -> tuple[np.ndarray, np.ndarray]:
    """``(vshape, ok)``: the placement named vshape; ``ok`` where it is looped or vshape."""
    if type(values) is np.ndarray:           # integers: never a placement
        return np.zeros(values.shape, bool), np.zeros(values.shape, bool)
    if set(map(type, values)) == {str}:
        codes = list(map(_PLACEMENTS.get, values))
        if None not in codes:
            vs = np.array(codes, dtype=bool)
            return vs, np.ones(vs.shape, bool)
    vs = np.array([type(x) is str and x == "vshape" for x in values], bool)
    return vs, vs | np.array([type(x) is str and x == "looped" for x in values], bool)


def _optional_int_column(values, absent, default: int) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """``(int64 array, ok, given)``: :func:`_int_column` with ``default`` where the value is
    ``absent`` (compared by identity), and where it is not."""
    if type(values) is np.ndarray:
        return values, values >= 1, np.ones(values.shape, bool)
    given = np.array([x is not absent for x in values], bool)
    if not given.all():
        values = [default if x is absent else x for x in values]
    return (*_int_column(values), given)


@dataclass(frozen=True)
class _Repeated:
    """A column holding one value ``n`` times (a constant key of a plain shape)."""

    value: Any
    n: int


def _each(convert: Callable, values) -> tuple:
    """``convert(values)``; a :class:`_Repeated` column is converted once and repeated."""
    if type(values) is _Repeated:
        return tuple(np.repeat(x, values.n) for x in convert([values.value]))
    return convert(values)


def _dict_columns(raws: list) -> tuple[np.ndarray, Callable]:
    """``(rows, column)``: the JSON objects among ``raws`` with only the keys of
    :data:`_VEC_KEYS`, and ``column(key, *default)`` the list of their values of ``key``
    (``dict.get``)."""
    n = len(raws)
    if set(map(type, raws)) == {dict} and set().union(*raws) <= _VEC_KEYS:
        rows = np.arange(n)
        ds = raws
    else:
        plain = np.array([type(d) is dict and d.keys() <= _VEC_KEYS for d in raws], bool)
        rows = np.flatnonzero(plain)
        ds = [raws[i] for i in rows.tolist()]

    def column(key, *default):
        return list(map(dict.get, ds, repeat(key), *(repeat(x) for x in default)))

    return rows, column


def _shape_columns(shape: Shape) -> tuple[np.ndarray, Callable]:
    """:func:`_dict_columns` of the lines of one plain shape (:mod:`.json_lines`): the lines,
    and per key an integer column where its value is a digit run, else its constant
    (:class:`_Repeated`)."""
    n = shape.lines.size

    def column(key, *default):
        if key in shape.ints:
            return shape.ints[key]
        return _Repeated(shape.consts.get(key, *default), n)

    return shape.lines, column


def _fields(column: Callable, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ok, fields)``: the lines whose fields the array path takes, and their
    ``(P, m, K, v, vshape, f, b, bI, bW)`` (``K`` 0: unconstrained; ``vshape``: the placement
    named, also for ``v = 1``), for the ``n`` JSON objects (with only keys of
    :data:`_VEC_KEYS`) whose values ``column(key, *default)`` gives (:func:`_dict_columns`,
    :func:`_shape_columns`). A line is taken when its values are whole numbers >= 1 that
    :func:`bounds.batch.supported` takes (``K`` also null or ``"inf"``), a named placement, and
    ``b = b_input + b_weight`` when all three are given (``b`` null reads as not given); any
    other line (an alias key, ``c``, a rational duration, a fault) goes to the per-instance
    path, which reads it as a single ``bound`` would. The fields are read and checked a column
    at a time."""
    if not n:
        return np.zeros(0, bool), np.zeros((0, 9), np.int64)
    P, okP = _each(_int_column, column("P"))
    m, okm = _each(_int_column, column("m"))
    K, okK = _each(_K_column, column("K"))
    v, okv = _each(_int_column, column("v", 1))
    vshape, okpl = _each(_placement_column, column("placement", "looped"))
    f, okf = _each(_int_column, column("f", 1))
    b, okb, b_given = _each(partial(_optional_int_column, absent=None, default=2),
                            column("b"))
    bI, okI, has_I = _each(partial(_optional_int_column, absent=_ABSENT, default=1),
                           column("b_input", _ABSENT))
    bW, okW, has_W = _each(partial(_optional_int_column, absent=_ABSENT, default=1),
                           column("b_weight", _ABSENT))
    if not has_I.any() and not has_W.any():   # all fused
        bI = bW = np.zeros(n, np.int64)
        ok = okb
    else:
        has_split = has_I | has_W
        split_ok = okI & okW & has_I & has_W & (~b_given | (okb & (b == bI + bW)))
        b = np.where(has_split, bI + bW, b)
        bI = np.where(has_split, bI, 0)
        bW = np.where(has_split, bW, 0)
        ok = np.where(has_split, split_ok, okb)
    ok = ok & okP & okm & okv & okf & okK & okpl & supported(P, m, K, v, f, b, bI, bW)
    fields = np.stack([P, m, K, v, vshape.astype(np.int64), f, b, bI, bW], 1)
    return ok, fields


def _num(n: int, d: int, key: str) -> str:
    """A JSON number for ``n / d`` (reduced), then ``key`` with the exact string."""
    if d == 1:
        return f'{n}, "{key}": "{n}"'
    return f'{json.dumps(n / d)}, "{key}": "{n}/{d}"'


_BASIS_TEXT = {1: '"theorem"', 2: '"checked"'}
_SMALL = 1 << 16
_TABLES: dict = {}


def _int_texts(x: np.ndarray, key: Optional[str] = None) -> np.ndarray:
    """The text of each int ``k >= 0`` of ``x`` (an object array of the same shape): ``str(k)``,
    or with ``key`` the number and the start of its exact string, ``k, "key": "k`` (the pair
    that ``json.dumps`` writes for a quantity and its ``_exact``; the caller closes the quote).
    Looked up in a table per ``key``, grown on demand up to the ints below ``2^16`` (a lookup
    costs a tenth of a conversion); larger ints are converted one by one."""
    if not x.size:
        return np.empty(x.shape, dtype=object)
    top = int(x.max())
    if top >= _SMALL:
        fmt = (lambda k: str(k)) if key is None else (lambda k: f'{k}, "{key}": "{k}')
        return np.array([fmt(k) for k in x.ravel().tolist()], dtype=object).reshape(x.shape)
    table = _TABLES.get(key)
    if table is None or table.size <= top:
        size = min(_SMALL, max(1024, 1 << top.bit_length()))
        table = np.array([str(k) if key is None else f'{k}, "{key}": "{k}' for k in range(size)],
                         dtype=object)
        _TABLES[key] = table
    return table[x]


def _fraction_pairs(num: np.ndarray, den: np.ndarray, key: str) -> list:
    """:func:`_int_texts`' pairs for the fractions ``num / den`` (``den > 1``): the JSON number
    (the float ``json.dumps`` writes) and the start of the exact string ``p/q``."""
    return [f'{a / c!r}, "{key}": "{a}/{c}' for a, c in zip(num.tolist(), den.tolist())]


def _instance_tails(cols: np.ndarray) -> np.ndarray:
    """Per row, the text of its instance object after ``m`` (``, "K": ..., "b": ...}``, the keys
    of ``Instance.to_dict``), written once per distinct ``(K, v, placement, f, b, b_I, b_W)``."""
    sub = cols[:, 2:]                                  # K, v, vshape, f, b, bI, bW
    sizes = sub.max(0) + 1
    if float(np.prod(sizes.astype(float))) < 2.0 ** 62:
        key = np.zeros(sub.shape[0], np.int64)
        for j in range(sub.shape[1]):
            key = key * sizes[j] + sub[:, j]
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(sub, axis=0, return_index=True, return_inverse=True)
    texts = []
    for K, v, vshape, f, b, bI, bW in sub[first].tolist():
        durs = (f', "b_input": {bI}, "b_weight": {bW}, "b": {b}}}' if bI > 0 else
                f', "b": {b}}}')
        texts.append(f', "K": {K if K else "null"}, "v": {v}, "placement": '
                     f'"{"vshape" if vshape else "looped"}", "f": {f}' + durs)
    return np.array(texts, dtype=object)[inv.reshape(-1)]


def _joined(pieces: list, n: int) -> list[str]:
    """Per row ``k < n``, the concatenation of the ``pieces``: a str (the same for every row)
    or a list of ``n`` strs (one per row); adjacent constant pieces are merged first."""
    merged: list = []
    for p in pieces:
        if type(p) is str and merged and type(merged[-1]) is str:
            merged[-1] += p
        else:
            merged.append(p)
    return list(map("".join, zip(*(repeat(p, n) if type(p) is str else p for p in merged))))


def _rows_text(cols: np.ndarray, res, basis: np.ndarray, table_mid: dict, detail: np.ndarray,
               details: list) -> list[str]:
    """The JSON text of each row of the array path. Rows of the same pattern (group of terms,
    the terms that apply, which values are fractions, which terms bind, basis and its detail)
    are written together: the row's text is a fixed sequence of constant pieces and value
    pieces, joined per row (:func:`_joined`), the values converted to text a column at a time
    (a number and its exact string as one piece, :func:`_int_texts`; the instance after ``m``
    as one piece, :func:`_instance_tails`).

    ``cols``: the rows' ``(P, m, K, v, vshape, f, b, bI, bW)``; ``res``: their
    :class:`bounds.batch.Result`; ``basis``: per row 0 none, 1 theorem, 2 checked, 3 table;
    ``table_mid``: per table row, the text of its exact flag and optimum; ``detail``: per row
    an index into ``details``, the ``basis_detail`` texts (``details[0]`` is ``null``)."""
    N = cols.shape[0]
    # per row: P, m, the instance's tail, the bound and the optimum (= the bound, theorem and
    # checked rows) as pairs with their exact strings, the table's part (table rows)
    G = np.empty((N, 6), dtype=object)
    G[:, 0] = _int_texts(cols[:, 0])
    G[:, 1] = _int_texts(cols[:, 1])
    G[:, 2] = _instance_tails(cols)
    whole = np.where(res.den == 1, res.num, 0)
    G[:, 3] = _int_texts(whole, "lower_bound_exact")
    G[:, 4] = _int_texts(whole, "optimum_exact")
    frac = np.flatnonzero(res.den != 1)
    if frac.size:
        G[frac, 3] = _fraction_pairs(res.num[frac], res.den[frac], "lower_bound_exact")
        G[frac, 4] = _fraction_pairs(res.num[frac], res.den[frac], "optimum_exact")
    for k, text in table_mid.items():
        G[k, 5] = text
    # the pattern's row part: basis (2 bits), detail (8 bits)
    other = basis.astype(np.int64) + 4 * detail.astype(np.int64)
    perm, out = [], []
    for g in res.groups:
        J = len(g.names)
        assert J <= 16 and len(details) <= 256       # the pattern key fits in 63 bits
        fr = g.mask & (g.den != 1)
        bind = g.mask & (g.num == res.num[g.idx, None]) & (g.den == res.den[g.idx, None])
        bits = ((g.mask.astype(np.int64) << (3 * np.arange(J))).sum(1)
                + (fr.astype(np.int64) << (3 * np.arange(J) + 1)).sum(1)
                + (bind.astype(np.int64) << (3 * np.arange(J) + 2)).sum(1))
        patterns, inv = np.unique(bits * 1024 + other[g.idx], return_inverse=True)
        inv = inv.reshape(-1)
        order = np.argsort(inv, kind="stable")
        ends = np.searchsorted(inv[order], np.arange(patterns.size + 1)).tolist()
        idx = g.idx[order]
        perm.append(idx)
        Gg = G[idx]                                           # this group, in pattern order
        num, den = g.num[order], g.den[order]
        texts = _int_texts(np.where(g.mask[order], num, 0), "value_exact").T  # (term, row)
        for u, pattern in enumerate(patterns.tolist()):
            s, e = ends[u], ends[u + 1]
            bs, dt, term_bits = pattern & 3, (pattern >> 2) & 255, pattern >> 10
            c = Gg[s:e].T.tolist()
            pieces: list = ['{"instance": {"P": ', c[0], ', "m": ', c[1], c[2],
                            ', "lower_bound": ', c[3], '", ']
            if bs == 0:
                pieces.append(_NO_OPTIMUM)
            elif bs == 3:
                pieces.append(c[5])
            else:
                pieces += [f'"exact": true, "exact_basis": {_BASIS_TEXT[bs]}, "optimum": ',
                           c[4], f'", "optimum_basis": {_BASIS_TEXT[bs]}']
            pieces.append(f', "basis_detail": {details[dt]}, "terms": [')
            sep = ""
            binding = []
            for j, name in enumerate(g.names):
                if not term_bits >> (3 * j) & 1:
                    continue
                if term_bits >> (3 * j + 1) & 1:
                    value = _fraction_pairs(num[s:e, j], den[s:e, j], "value_exact")
                else:
                    value = texts[j, s:e].tolist()
                pieces += [f'{sep}{{"name": "{name}", "id": "{TERM_IDS[name]}", "value": ', value,
                           '"}']
                sep = ", "
                if term_bits >> (3 * j + 2) & 1:
                    binding.append(f'"{name}"')
            pieces.append(f'], "binding": [{", ".join(binding)}]}}')
            out += _joined(pieces, e - s)
    back = np.empty(N, dtype=np.int64)
    back[np.concatenate(perm)] = np.arange(N)
    return list(map(out.__getitem__, back.tolist()))


def slow_line(line: bytes, lineno: int, report: Callable) -> dict:
    """One line through the per-instance path, with the reader and messages of
    :func:`pipebounds.cli.common.batch_results` (limits, types, any fault on its own line)."""
    return batch_result(*read_batch_line(line, lineno), report)


def batch_bound_json(data: bytes, report: Callable, min_lines: int = MIN_SHAPE_LINES) -> str:
    """The JSON list of ``bound --batch`` for the JSON lines ``data`` (split on ``\\n`` only);
    ``report(inst)`` is the per-instance report for the lines the array path does not take."""
    return "[" + ", ".join(batch_bound_rows(data, report, min_lines)) + "]"


def write_batch_bound_json(data: bytes, report: Callable, stream, chunk: int = 2048) -> None:
    """Write :func:`batch_bound_json`'s text and a newline to ``stream``, ``chunk`` rows at a
    time (pieces of about a megabyte: no copy of the whole output)."""
    rows = batch_bound_rows(data, report)
    stream.write("[")
    for k in range(0, len(rows), chunk):
        stream.write((", " if k else "") + ", ".join(rows[k:k + chunk]))
    stream.write("]\n")


def _json_or_none(line: bytes):
    """``json.loads(line)``, or None where the line is not JSON (the per-instance reader names
    the fault)."""
    try:
        return json.loads(line)
    except Exception:  # noqa: BLE001 - malformed, not UTF-8, too deep...
        return None


def _read_columns(data: bytes, min_lines: int) -> tuple[Sequence[bytes], list[int], np.ndarray,
                                                      np.ndarray]:
    """``(texts, linenos, rows, fields)``: the non-blank lines of ``data`` (split on ``\n``),
    their 1-based line numbers, the lines the array path takes (ascending indices into
    ``texts``) and their fields (:func:`_fields`). Lines of a plain shape are read a column
    at a time (:func:`pipebounds.cli.json_lines.read_shapes`, the shapes of at least
    ``min_lines`` lines), the others by ``json.loads`` line by line."""
    shapes, texts, rest, linenos = read_shapes(data, min_lines, _VEC_KEYS)
    parts = []
    for shape in shapes:
        rows, column = _shape_columns(shape)
        ok, fields = _fields(column, rows.size)
        parts.append((rows[ok], fields[ok]))
    if rest.size:
        rows, column = _dict_columns([_json_or_none(texts[i]) for i in rest.tolist()])
        ok, fields = _fields(column, rows.size)
        parts.append((rest[rows[ok]], fields[ok]))
    if not parts:
        return texts, linenos, np.zeros(0, np.int64), np.zeros((0, 9), np.int64)
    rows = np.concatenate([p[0] for p in parts])
    fields = np.concatenate([p[1] for p in parts])
    if len(parts) > 1:
        order = np.argsort(rows, kind="stable")
        rows, fields = rows[order], fields[order]
    return texts, linenos, rows, fields


_TABLE = '"table"'
_NO_OPTIMUM = ('"exact": false, "exact_basis": null, "optimum": null, "optimum_exact": null, '
               '"optimum_basis": null')


def batch_bound_rows(data: bytes, report: Callable,
                     min_lines: int = MIN_SHAPE_LINES) -> list[str]:
    """The JSON text of each result of ``bound --batch`` (one per non-blank line of ``data``);
    ``min_lines``: the least number of lines of one shape read a column at a time
    (:func:`_read_columns`; tests set 1)."""
    texts, linenos, vec_rows, cols = _read_columns(data, min_lines)
    out: list[Optional[str]] = [None] * len(texts)
    taken = np.zeros(len(texts), bool)
    taken[vec_rows] = True
    slow = np.flatnonzero(~taken).tolist()
    if slow:
        for i in slow:
            out[i] = json.dumps(jsonable(slow_line(texts[i], linenos[i], report)))
    if not vec_rows.size:
        return out  # type: ignore[return-value]
    r = Rows(cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3],
             cols[:, 4].astype(bool) & (cols[:, 3] > 1), cols[:, 5], cols[:, 6], cols[:, 7],
             cols[:, 8])
    res = lower_bounds(r)
    # the basis of a known optimum: a theorem's exact case, a checked range, the table; and
    # its detail (certify's: the theorem id, the range's id, the table's file name)
    details = ["null"]
    code: dict = {}

    def detail_code(text: str) -> int:
        if text not in code:
            code[text] = len(details)
            details.append(json.dumps(text))
        return code[text]

    basis = np.zeros(cols.shape[0], np.int8)           # 0 none, 1 theorem, 2 checked, 3 table
    detail = np.zeros(cols.shape[0], np.int64)
    in_range = checked_range_rows(r)
    basis[in_range >= 0] = 2
    range_codes = np.array([detail_code(rng.id) for rng in CHECKED_RANGES] + [0], np.int64)
    detail[:] = range_codes[in_range]
    for g in res.groups:
        theorems = [exact_theorem(name) for name in g.names]
        lut = np.array([-1 if t is None else detail_code(t) for t in theorems] + [-1], np.int64)
        hit = lut[g.first]
        basis[g.idx[hit >= 0]] = 1
        detail[g.idx] = np.where(hit >= 0, hit, detail[g.idx])
    table_mid = {}
    candidates = np.flatnonzero(basis == 0)
    if candidates.size:
        table_detail = detail_code(RESOURCE[-1])
        for k, known in table_optima_rows(cols, candidates).items():
            ex = known * int(res.den[k]) == int(res.num[k])
            basis[k] = 3
            detail[k] = table_detail
            table_mid[k] = (f'"exact": {"true" if ex else "false"}, '
                            f'"exact_basis": {_TABLE if ex else "null"}, '
                            f'"optimum": {_num(known.numerator, known.denominator, "optimum_exact")}, '
                            f'"optimum_basis": {_TABLE}')
    rows = _rows_text(cols, res, basis, table_mid, detail, details)
    if not slow:
        return rows
    for i, row in zip(vec_rows.tolist(), rows):
        out[i] = row
    return out  # type: ignore[return-value]
