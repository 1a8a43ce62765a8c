"""The certification package: the checked ranges' scalar predicate and its vectorised twin
agree, the batch table lookup agrees with the per-instance one, and the names other modules
import stay importable from :mod:`pipebounds.certify`."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from bounds.batch import Rows
from pipebounds import certify as cf
from pipebounds.certify import checked, optima
from schedules import Instance


def _rows(insts: list[Instance]) -> Rows:
    def col(get):
        return np.array([get(i) for i in insts], np.int64)

    return Rows(col(lambda i: i.P), col(lambda i: i.m), col(lambda i: i.K or 0), col(lambda i: i.v),
                np.array([i.placement == "vshape" and i.v > 1 for i in insts], bool),
                col(lambda i: int(i.f)), col(lambda i: int(i.b)),
                col(lambda i: int(i.b_I) if i.split else 0),
                col(lambda i: int(i.b_W) if i.split else 0))


def _grid() -> list[Instance]:
    """Every instance around the checked ranges' edges: P, m one past the limits, K in {1, 2,
    inf}, v in {1, 2}, fused durations 1..6 (6 is off the grid) and split 1..4; and split
    instances around S-nb's edges (P 7..9, m 15..17, K in {m - 1, m, inf}, durations 1..5)."""
    out = []
    for P, m, K, v in itertools.product(range(1, 7), (1, 2, 6, 7, 8, 9), (1, 2, None), (1, 2)):
        for f, b in itertools.product(range(1, 7), repeat=2):
            out.append(Instance(P=P, m=m, K=K, v=v, f=f, b=b))
        if m in (1, 6, 7) and v == 1:
            for f, bI, bW in itertools.product(range(1, 5), repeat=3):
                out.append(Instance(P=P, m=m, K=K, v=v, f=f, b_I=bI, b_W=bW))
    for P, m in itertools.product((7, 8, 9), (15, 16, 17)):
        for K, (f, bI, bW) in itertools.product((m - 1, m, None),
                                                itertools.product(range(1, 6), repeat=3)):
            out.append(Instance(P=P, m=m, K=K, f=f, b_I=bI, b_W=bW))
    return out


@pytest.mark.parametrize("k", range(len(checked.CHECKED_RANGES)))
def test_checked_rows_is_the_scalar_predicate(k):
    rng, insts = checked.CHECKED_RANGES[k], _grid()
    want = np.array([rng.contains(i) for i in insts], bool)
    assert want.sum() > 100 and (~want).sum() > 100   # both sides of every edge are present
    assert (rng.contains_rows(_rows(insts)) == want).all()


def test_checked_range_is_the_first_containing_range():
    insts = _grid()
    want = np.array([any(r.contains(i) for r in checked.CHECKED_RANGES) for i in insts], bool)
    assert (checked.checked_rows(_rows(insts)) == want).all()
    assert all((checked.checked_range(i) is not None) == w for i, w in zip(insts, want))


def test_proportional_durations():
    # (2, 4) is (1, 2) scaled; (6, 1) has no tuple of {1..5}: 6 : 1 is not a ratio of the grid
    g = checked.SINGLE_SLOT_CHECKED["durations"]
    assert checked._proportional((2, 4), g) and not checked._proportional((6, 1), g)
    assert checked._proportional((Fraction(1, 2), Fraction(5, 2)), g)


def test_table_rows_lookup_is_the_instance_lookup():
    """Every named-placement integer instance of the table's sizes: the batch lookup (integer
    key) and :func:`table_optimum` (Instance key) give the same optimum."""
    insts = [Instance(P=P, m=m, K=K, v=v, placement=pl, f=f, b=b)
             for P, m in sorted(optima.table_sizes())[:40]
             for K, v, pl, f, b in itertools.product((1, 2, None), (1, 2), ("looped", "vshape"),
                                                     (1, 2), (1, 2, 3))]
    r = _rows(insts)
    cols = np.stack([r.P, r.m, r.K, r.v, r.vshape.astype(np.int64), r.f, r.b, r.bI, r.bW], 1)
    got = optima.table_optima_rows(cols, np.arange(len(insts)))
    want = {k: o for k, i in enumerate(insts) if (o := optima.table_optimum(i)) is not None}
    assert len(want) > 20 and got == want


@pytest.mark.parametrize("name", ["BASES", "CHECKED_RANGES", "CheckedRange", "Certification",
                                  "certificate", "certify", "checked_range", "optima_table",
                                  "reaches", "single_slot_checked", "table_key", "table_optimum",
                                  "SINGLE_SLOT_CHECKED", "SPLIT_SINGLE_SLOT_CHECKED"])
def test_public_names(name):
    assert hasattr(cf, name) and name in cf.__all__


def test_one_reader_of_the_table():
    """The package data is read by :mod:`pipebounds.certify.optima` only: no other module of
    the library names the file in code (a string constant whose file name is ``optima.jsonl``,
    docstrings and messages aside, which are longer sentences; other files such as
    ``data/split_v1_midK_optima.jsonl`` are not the package table)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readers = set()
    for pkg in ("schedules", "bounds", "pipebounds", "proofs_checks"):
        for path in (root / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and node.value.rsplit("/", 1)[-1] == "optima.jsonl"
                        and " " not in node.value):
                    readers.add(path.relative_to(root).as_posix())
    assert readers == {"pipebounds/certify/optima.py"}
    assert optima.optima_rows() and optima.optima_table()
    assert all(r["independent"] is True for r in optima.independent_rows())
