"""The table check of proofs_checks (every bound on every row of pipebounds/data/optima.jsonl) holds, and
fails when a bound is wrong: it is a check that can fail."""

from __future__ import annotations

import dataclasses

import bounds
from proofs_checks.registry import Context
from proofs_checks.table import table_rows, table_rows_all


def test_every_row_respects_the_bounds():
    res = table_rows(Context(mode="quick"))
    assert res.ok, res.detail
    assert res.instances == len(table_rows_all()) > 3000


def test_a_bound_one_unit_too_high_is_caught(monkeypatch):
    true_lb = bounds.lower_bound
    def too_high(inst):
        lb = true_lb(inst)
        return dataclasses.replace(lb, value=lb.value + 1)

    monkeypatch.setattr(bounds, "lower_bound", too_high)
    res = table_rows(Context(mode="quick"))
    assert not res.ok and "> OPT" in res.detail


def test_a_wrong_exact_flag_is_caught(monkeypatch):
    true_lb = bounds.lower_bound
    monkeypatch.setattr(bounds, "lower_bound",
                        lambda inst: dataclasses.replace(true_lb(inst), exact=True))
    res = table_rows(Context(mode="quick"))
    assert not res.ok and "claimed exact" in res.detail


def test_a_checked_range_claimed_too_wide_is_caught(monkeypatch):
    """Exactness by a checked range (pipebounds.certify.checked.CHECKED_RANGES) is checked too: a
    range that claims every K = 1 instance includes P = 3, m = 12, f = 5, b = 3 (T3 144 < OPT 146)."""
    from pipebounds.certify import checked as cf

    wide = dataclasses.replace(cf.CHECKED_RANGES[0], contains=lambda inst: inst.K == 1)
    monkeypatch.setattr(cf, "CHECKED_RANGES", (wide,))
    res = table_rows(Context(mode="quick"))
    assert not res.ok and "claimed exact" in res.detail
