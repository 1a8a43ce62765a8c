"""``pipebounds bound --batch`` without ``--certify``: JSON lines in, a JSON list out, fast.

The lines are parsed in one ``json.loads`` call; every line with integer fields in the ranges of
:data:`bounds.batch.LIMITS` (named placement, integer durations, no delay) goes through the
array evaluation :func:`bounds.batch.lower_bounds` and the lookups of
:mod:`pipebounds.certify` (the checked ranges' vectorised twin
:func:`pipebounds.certify.checked.checked_rows`, pipebounds/data/optima.jsonl by an integer key);
any other line (a rational duration, ``stage_to_rank``, ``c``, a bad value, ...) through the
per-instance path of :func:`pipebounds.cli.bound.bound_report`, which also writes the error of a
bad line. The output objects are the same either way (tests/test_cli_bound.py compares them);
they are written as text directly (the JSON encoder would cost more than the bounds).
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Callable, Iterable, Optional

import numpy as np

from bounds.batch import Rows, lower_bounds, supported
from bounds.evaluate import TERM_IDS

from .common import batch_result, jsonable, read_batch_line
from ..certify.checked import checked_rows
from ..certify.optima import table_optima_rows

_VEC_KEYS = {"P", "m", "K", "v", "placement", "f", "b", "b_input", "b_weight"}


def _int_column(values: list) -> tuple[np.ndarray, np.ndarray]:
    """``(int64 array, ok)``: ``ok`` where the value is an int (not a bool) in ``[1, 2^62)``."""
    if set(map(type, values)) == {int}:
        try:
            arr = np.array(values, dtype=np.int64)
            return arr, arr >= 1
        except OverflowError:
            pass
    ok = np.array([type(x) is int and 0 < x < (1 << 62) for x in values], bool)
    arr = np.array([x if k else 0 for x, k in zip(values, ok.tolist())], dtype=np.int64)
    return arr, ok & (arr >= 1)


def _fast_columns(raws: list) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, fields)``: the lines whose fields the array path takes, and their
    ``(P, m, K, v, vshape, f, b, bI, bW)`` (``K`` 0: unconstrained; ``vshape``: the placement
    named, also for ``v = 1``). A line is taken when it is a JSON object with only the keys of
    :data:`_VEC_KEYS`, whole numbers >= 1 that :func:`bounds.batch.supported` takes (``K`` also null
    or ``"inf"``), a named placement, and ``b = b_input + b_weight`` when all three are given;
    any other line (an alias key, ``c``, a rational duration, a fault) goes to the per-instance
    path, which reads it as a single ``bound`` would."""
    n = len(raws)
    plain = np.array([type(d) is dict and d.keys() <= _VEC_KEYS for d in raws], bool)
    rows = np.flatnonzero(plain)
    ds = raws if rows.size == n else [raws[i] for i in rows.tolist()]
    P, okP = _int_column([d.get("P") for d in ds])
    m, okm = _int_column([d.get("m") for d in ds])
    v, okv = _int_column([d.get("v", 1) for d in ds])
    f, okf = _int_column([d.get("f", 1) for d in ds])
    Kraw = [d.get("K") for d in ds]
    unbounded = np.array([x is None or x == "inf" for x in Kraw], bool)
    K, okK = _int_column([1 if u else x for x, u in zip(Kraw, unbounded.tolist())])
    K[unbounded] = 0
    pl = np.array([d.get("placement", "looped") for d in ds], dtype=object)
    vshape = pl == "vshape"
    okpl = vshape | (pl == "looped")
    has_I = np.array(["b_input" in d for d in ds], bool)
    has_W = np.array(["b_weight" in d for d in ds], bool)
    has_split = has_I | has_W
    bI, okI = _int_column([d.get("b_input", 1) for d in ds])
    bW, okW = _int_column([d.get("b_weight", 1) for d in ds])
    bs = [d.get("b") for d in ds]
    b_given = np.array([x is not None for x in bs], bool)
    b, okb = _int_column([2 if x is None else x for x in bs])
    split_ok = okI & okW & has_I & has_W & (~b_given | (okb & (b == bI + bW)))
    b = np.where(has_split, bI + bW, b)
    bI = np.where(has_split, bI, 0)
    bW = np.where(has_split, bW, 0)
    ok = (okP & okm & okv & okf & okK & okpl & np.where(has_split, split_ok, okb)
          & supported(P, m, K, v, f, b, bI, bW))
    fields = np.stack([P, m, K, v, vshape.astype(np.int64), f, b, bI, bW], 1)
    return rows[ok], fields[ok]


_OPT_NULL = 'null, "optimum_exact": null'


def _num(n: int, d: int, key: str) -> str:
    """A JSON number for ``n / d`` (reduced), then ``key`` with the exact string."""
    if d == 1:
        return f'{n}, "{key}": "{n}"'
    return f'{json.dumps(n / d)}, "{key}": "{n}/{d}"'


def _terms_text(res) -> list[str]:
    """Per row of ``res`` (:class:`bounds.batch.Result`), the JSON text of its terms list
    (without brackets): each distinct value of a term (over all groups of rows) is written
    once, then gathered per row in the group's term order."""
    groups = res.groups
    places: dict = {}                       # term name -> [(group, column)] where it applies
    for gi, g in enumerate(groups):
        for j, nm in enumerate(g.names):
            if g.mask[:, j].any():
                places.setdefault(nm, []).append((gi, j))
    cols: list[dict] = [{} for _ in groups]  # per group: column -> texts per row
    for nm, where in places.items():
        num = np.concatenate([groups[gi].num[:, j] for gi, j in where])
        den = np.concatenate([groups[gi].den[:, j] for gi, j in where])
        mask = np.concatenate([groups[gi].mask[:, j] for gi, j in where])
        pairs: Iterable[tuple]
        if (den == 1).all():
            u_num, inv = np.unique(num, return_inverse=True)
            pairs = zip(u_num.tolist(), [1] * u_num.size)
        else:
            u_nd, inv = np.unique(np.stack([num, den], 1), axis=0, return_inverse=True)
            pairs = map(tuple, u_nd.tolist())
        head = f'{{"name": "{nm}", "id": "{TERM_IDS[nm]}", "value": '
        texts = [f'{head}{_num(a, d, "value_exact")}}}, ' for a, d in pairs] + [""]
        picked = np.array(texts, dtype=object)[np.where(mask, inv.reshape(-1), -1)]
        start = 0
        for gi, j in where:
            size = groups[gi].idx.size
            cols[gi][j] = picked[start:start + size].tolist()
            start += size
    out: list = [None] * res.num.shape[0]
    for g, by_col in zip(groups, cols):
        ordered = [by_col[j] for j in sorted(by_col)]
        for row, txt in zip(g.idx.tolist(), map("".join, zip(*ordered))):
            out[row] = txt[:-2]
    return out


def slow_line(line: bytes, lineno: int, report: Callable) -> dict:
    """One line through the per-instance path, with the reader and messages of
    :func:`pipebounds.cli.common.batch_results` (limits, types, any fault on its own line)."""
    return batch_result(*read_batch_line(line, lineno), report)


def _number_texts(num: np.ndarray, den: np.ndarray) -> tuple[list, list]:
    """Per row, the JSON number and the exact string of ``num / den`` (reduced)."""
    value = list(map(str, num.tolist()))
    exact = value.copy()
    for k in np.flatnonzero(den != 1).tolist():
        n, d = int(num[k]), int(den[k])
        value[k], exact[k] = json.dumps(n / d), f"{n}/{d}"
    return value, exact


def batch_bound_json(data: bytes, report: Callable) -> str:
    """The JSON list of ``bound --batch`` for the JSON lines ``data`` (split on ``\\n`` only);
    ``report(inst)`` is the per-instance report for the lines the array path does not take."""
    return "[" + ", ".join(batch_bound_rows(data, report)) + "]"


def write_batch_bound_json(data: bytes, report: Callable, stream, chunk: int = 64) -> None:
    """Write :func:`batch_bound_json`'s text and a newline to ``stream``, ``chunk`` rows at a
    time (small pieces: no copy of the whole output, which costs more than the bounds)."""
    rows = batch_bound_rows(data, report)
    stream.write("[")
    for k in range(0, len(rows), chunk):
        stream.write((", " if k else "") + ", ".join(rows[k:k + chunk]))
    stream.write("]\n")


def batch_bound_rows(data: bytes, report: Callable) -> list[str]:
    """The JSON text of each result of ``bound --batch`` (one per non-blank line of ``data``)."""
    lines = [(k, ln) for k, ln in enumerate(data.split(b"\n"), 1) if ln.strip()]
    try:
        raws = json.loads(b"[" + b",".join(ln for _, ln in lines) + b"]")
    except Exception:  # noqa: BLE001 - malformed, not UTF-8, too deep...: line by line
        raws = None
    if raws is not None and len(raws) != len(lines):
        raws = None  # a line held several values (a comma inside): line by line
    if raws is None:
        raws = []
        for _, ln in lines:
            try:
                raws.append(json.loads(ln))
            except Exception:  # noqa: BLE001 - the per-instance reader names the fault
                raws.append(None)
    out: list[Optional[str]] = [None] * len(lines)
    vec_rows, vec_fields = _fast_columns(raws)
    taken = np.zeros(len(lines), bool)
    taken[vec_rows] = True
    fast_idx = vec_rows.tolist()
    for i in np.flatnonzero(~taken).tolist():
        out[i] = json.dumps(jsonable(slow_line(lines[i][1], lines[i][0], report)))
    if not fast_idx:
        return out  # type: ignore[return-value]
    cols = vec_fields
    fields = cols.tolist()
    r = Rows(cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3],
             cols[:, 4].astype(bool) & (cols[:, 3] > 1), cols[:, 5], cols[:, 6], cols[:, 7],
             cols[:, 8])
    res = lower_bounds(r)
    terms = _terms_text(res)
    lb_value, lb_exact = _number_texts(res.num, res.den)
    # the basis of a known optimum: a theorem's exact case, a checked range, the table
    basis = np.full(len(fields), "null", dtype=object)
    basis[checked_rows(r)] = '"checked"'
    basis[np.array([t is not None for t in res.theorem.tolist()], bool)] = '"theorem"'
    opt_text = np.full(len(fields), None, dtype=object)
    exact = basis != "null"
    for k, known in table_optima_rows(fields, np.flatnonzero(~exact)).items():
        basis[k] = '"table"'
        opt_text[k] = _num(known.numerator, known.denominator, "optimum_exact")
        exact[k] = known == Fraction(lb_exact[k])
    basis_l, exact_l, opt_l = basis.tolist(), exact.tolist(), opt_text.tolist()
    for k, i in enumerate(fast_idx):
        P, m, K, v, vs, f, b, bI, bW = fields[k]
        Ks = "null" if K == 0 else K
        pl = "vshape" if vs else "looped"
        durs = (f'"b_input": {bI}, "b_weight": {bW}, "b": {b}' if bI else f'"b": {b}')
        bs, ex = basis_l[k], exact_l[k]
        opt = opt_l[k]
        if opt is None:
            opt = (f'{lb_value[k]}, "optimum_exact": "{lb_exact[k]}"' if bs != "null"
                   else _OPT_NULL)
        out[i] = (f'{{"instance": {{"P": {P}, "m": {m}, "K": {Ks}, "v": {v}, "placement": '
                  f'"{pl}", "f": {f}, {durs}}}, "lower_bound": {lb_value[k]}, '
                  f'"lower_bound_exact": "{lb_exact[k]}", '
                  f'"exact": {"true" if ex else "false"}, '
                  f'"exact_basis": {bs if ex else "null"}, "optimum": {opt}, '
                  f'"optimum_basis": {bs}, "terms": [{terms[k]}]}}')
    return out  # type: ignore[return-value]
