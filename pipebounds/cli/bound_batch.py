"""``pipebounds bound --batch`` without ``--certify``: JSON lines in, a JSON list out, fast.

The lines are parsed in one ``json.loads`` call; every line with integer fields in the ranges of
:data:`bounds.batch.LIMITS` (named placement, integer durations, no delay) goes through the
array evaluation :func:`bounds.batch.lower_bounds` and the lookups of
:mod:`pipebounds.certify` (checked ranges vectorised, data/optima.jsonl by an integer key);
any other line (a rational duration, ``stage_to_rank``, ``c``, a bad value, ...) through the
per-instance path of :func:`pipebounds.cli.bound.bound_report`, which also writes the error of a
bad line. The output objects are the same either way (tests/test_cli_bound.py compares them);
they are written as text directly (the JSON encoder would cost more than the bounds).
"""

from __future__ import annotations

import json
from typing import Callable, Optional

import numpy as np

from bounds.batch import Rows, lower_bounds, supported
from bounds.evaluate import TERM_IDS

from .common import batch_result, jsonable, read_batch_line
from ..certify import (SINGLE_SLOT_CHECKED, SPLIT_SINGLE_SLOT_CHECKED, int_key,
                       optimum_by_int_key, table_sizes)

_FAST_KEYS = {"P", "m", "K", "v", "placement", "f", "b", "b_input", "b_weight", "b_I", "b_W",
              "c"}


def _fast_fields(raw) -> Optional[tuple]:
    """``(P, m, K, v, vshape, f, b, bI, bW)`` of a line the array path takes, else None
    (``K`` 0: unconstrained; ``vshape``: the placement named, also for ``v = 1``)."""
    if type(raw) is not dict or not raw.keys() <= _FAST_KEYS:
        return None
    g = raw.get
    P, m, K, v, f, b = g("P"), g("m"), g("K"), g("v", 1), g("f", 1), g("b")
    if K is None or K == "inf":
        K = 0
    elif type(K) is not int or K < 1:
        return None
    if not (type(P) is int and type(m) is int and type(v) is int and type(f) is int
            and P >= 1 and m >= 1 and v >= 1 and f >= 1):
        return None
    if "c" in raw and (type(raw["c"]) is not int or raw["c"] != 0):
        return None
    pl = g("placement", "looped")
    if pl != "looped" and pl != "vshape":
        return None
    bI, bW = g("b_input", g("b_I")), g("b_weight", g("b_W"))
    if bI is not None or bW is not None:
        if not (type(bI) is int and type(bW) is int and bI >= 1 and bW >= 1):
            return None
        if b is not None and (type(b) is not int or b != bI + bW):
            return None
        b = bI + bW
    else:
        bI = bW = 0
        if b is None:
            b = 2
        elif type(b) is not int or b < 1:
            return None
    if not supported(P, m, K, v, f, b, bI, bW):
        return None
    return P, m, K, v, pl == "vshape", f, b, bI, bW


def _checked(r: Rows) -> np.ndarray:
    """Rows in a checked range of :mod:`pipebounds.certify` (T3 = OPT at ``K = 1``)."""
    base = (r.v == 1) & (r.K == 1)
    fused = base & ~r.split & (r.P <= SINGLE_SLOT_CHECKED["P"]) & (r.m <= SINGLE_SLOT_CHECKED["m"])
    split = (base & r.split & (r.P <= SPLIT_SINGLE_SLOT_CHECKED["P"])
             & (r.m <= SPLIT_SINGLE_SLOT_CHECKED["m"]))
    ok = np.zeros(r.P.shape, bool)
    g = SINGLE_SLOT_CHECKED["durations"]
    for a in g:
        for c in g:
            ok |= fused & (r.b * a == r.f * c)
    g = SPLIT_SINGLE_SLOT_CHECKED["durations"]
    for a in g:
        for c in g:
            for d in g:
                ok |= split & (r.bI * a == r.f * c) & (r.bW * a == r.f * d)
    return ok


_BASIS = {None: "null", "theorem": '"theorem"', "checked": '"checked"', "table": '"table"'}
_OPT_NULL = 'null, "optimum_exact": null'


def _num(n: int, d: int, key: str) -> str:
    """A JSON number for ``n / d`` (reduced), then ``key`` with the exact string."""
    if d == 1:
        return f'{n}, "{key}": "{n}"'
    return f'{json.dumps(n / d)}, "{key}": "{n}/{d}"'


def _instance_text(P, m, K, v, vshape, f, b, bI, bW) -> str:
    Ks = "null" if K == 0 else str(K)
    pl = "vshape" if vshape else "looped"
    if bI:
        return (f'{{"P": {P}, "m": {m}, "K": {Ks}, "v": {v}, "placement": "{pl}", "f": {f}, '
                f'"b_input": {bI}, "b_weight": {bW}, "b": {b}}}')
    return f'{{"P": {P}, "m": {m}, "K": {Ks}, "v": {v}, "placement": "{pl}", "f": {f}, "b": {b}}}'


def slow_line(line: bytes, lineno: int, report: Callable) -> dict:
    """One line through the per-instance path, with the reader and messages of
    :func:`pipebounds.cli.common.batch_results` (limits, types, any fault on its own line)."""
    return batch_result(*read_batch_line(line, lineno), report)


def batch_bound_json(data: bytes, report: Callable) -> str:
    """The JSON list of ``bound --batch`` for the JSON lines ``data`` (split on ``\\n`` only);
    ``report(inst)`` is the per-instance report for the lines the array path does not take."""
    lines = [(k, ln) for k, ln in enumerate(data.split(b"\n"), 1) if ln.strip()]
    try:
        raws = json.loads(b"[" + b",".join(ln for _, ln in lines) + b"]")
    except Exception:  # noqa: BLE001 - malformed, not UTF-8, too deep...: line by line
        raws = None
    if raws is not None and len(raws) != len(lines):
        raws = None  # a line held several values (a comma inside): line by line
    fast_idx, fields = [], []
    out: list[Optional[str]] = [None] * len(lines)
    for i, (k, ln) in enumerate(lines):
        if raws is None:
            try:
                raw = json.loads(ln)
            except Exception:  # noqa: BLE001 - the per-instance reader names the fault
                raw = None
        else:
            raw = raws[i]
        fl = _fast_fields(raw) if raw is not None else None
        if fl is None:
            out[i] = json.dumps(jsonable(slow_line(ln, k, report)))
        else:
            fast_idx.append(i)
            fields.append(fl)
    if fields:
        cols = np.array(fields, dtype=np.int64)
        r = Rows(*(cols[:, j] for j in range(4)), cols[:, 4].astype(bool) & (cols[:, 3] > 1),
                 *(cols[:, j] for j in range(5, 9)))
        res = lower_bounds(r)
        checked = _checked(r).tolist()
        nums, dens = res.num.tolist(), res.den.tolist()
        in_table = table_sizes()
        term_text: dict = {}
        for k, i in enumerate(fast_idx):
            fl = fields[k]
            n, d = nums[k], dens[k]
            basis, opt = None, None
            if res.theorem[k] is not None:
                basis, opt = "theorem", (n, d)
            elif checked[k]:
                basis, opt = "checked", (n, d)
            elif (fl[0], fl[1]) in in_table:
                known = optimum_by_int_key(*int_key(*fl))
                if known is not None:
                    basis, opt = "table", (known.numerator, known.denominator)
            exact = opt is not None and opt == (n, d)
            parts = []
            for t in res.terms[k]:
                txt = term_text.get(t)
                if txt is None:
                    nm, a, b_ = t
                    txt = term_text[t] = (f'{{"name": "{nm}", "id": "{TERM_IDS[nm]}", "value": '
                                          f'{_num(a, b_, "value_exact")}}}')
                parts.append(txt)
            out[i] = (f'{{"instance": {_instance_text(*fl)}, "lower_bound": '
                      f'{_num(n, d, "lower_bound_exact")}, '
                      f'"exact": {"true" if exact else "false"}, '
                      f'"exact_basis": {_BASIS[basis] if exact else "null"}, '
                      f'"optimum": {_OPT_NULL if opt is None else _num(*opt, "optimum_exact")}, '
                      f'"optimum_basis": {_BASIS[basis]}, "terms": [{", ".join(parts)}]}}')
    return "[" + ", ".join(out) + "]"  # type: ignore[arg-type]
