"""Property 3: every mutation class of a valid schedule is rejected, naming the broken rule.

Each class is its own test; the mutated schedule must break the expected rule
(``SimulationResult.violations[i].rule``) and no rule outside the class's allowed set.
"""

from __future__ import annotations

import json

from hypothesis import given, note

from schedules import document_from_schedule, simulate
from strategies import mutations


def _check(mut):
    note(f"{mut.what}; mutated orders document: "
         f"{json.dumps(document_from_schedule(mut.schedule))}")
    assert simulate(mut.original).valid
    res = simulate(mut.schedule)
    rules = {v.rule for v in res.violations}
    assert not res.valid
    assert mut.expected in rules, res.errors
    assert rules <= mut.allowed, res.errors
    for v in res.violations:
        assert v.message  # every violation says what is wrong


@given(mutations("move_gpu"))
def test_op_moved_to_another_gpu_is_a_placement_violation(mut):
    _check(mut)


@given(mutations("swap_precedence"))
def test_swap_against_a_precedence_is_a_deadlock(mut):
    _check(mut)


@given(mutations("drop"))
def test_dropped_op_is_missing_or_half_a_backward(mut):
    _check(mut)


@given(mutations("duplicate"))
def test_duplicated_op_is_a_duplicate(mut):
    _check(mut)


@given(mutations("drop_R_tight"))
def test_dropped_recompute_where_memory_is_tight_exceeds_K(mut):
    _check(mut)


@given(mutations("change_microbatch"))
def test_changed_microbatch_id_is_a_duplicate_or_broken_backward(mut):
    _check(mut)


@given(mutations("microbatch_out_of_range"))
def test_microbatch_out_of_range_is_a_range_violation(mut):
    _check(mut)


@given(mutations("exceed_K"))
def test_K_below_peak_memory_is_a_memory_violation(mut):
    _check(mut)


@given(mutations("split_on_fused"))
def test_split_ops_on_a_fused_instance_are_a_durations_violation(mut):
    _check(mut)


# ============================================================================ bound mutations
# Every proofs_check must be able to fail: plant an error in each bound (its value too large by
# a little, +1/64 or a factor 1 + 1/64, or a wrong exact flag) and show that a registered check
# catches it. The catching check is proofs_checks.table.table_rows (LB <= OPT and exact flags
# on the table of independent optima), run on the rows of the bound's domain (the table is read
# once; restricting it keeps the test fast), or a check aimed at the bound. Each case first
# runs the same check unmutated on the same rows and requires it to pass.

from fractions import Fraction  # noqa: E402

import pytest  # noqa: E402

import bounds.evaluate as bev  # noqa: E402
import bounds.multi_wave as bmw  # noqa: E402
import bounds.single_wave as bsw  # noqa: E402
import proofs_checks.table as ptable  # noqa: E402
from proofs_checks.registry import Context  # noqa: E402

EPS = Fraction(1, 64)


def _plus(fn):
    def mutated(*a, **k):
        val = fn(*a, **k)
        return None if val is None else val + EPS
    return mutated


def _times(fn):
    def mutated(*a, **k):
        val = fn(*a, **k)
        return None if val is None else val * (1 + EPS)
    return mutated


def _v1_fused(i):
    return i.v == 1 and not i.split


def _v1_split(i):
    return i.v == 1 and i.split


def _mw_fused(i):
    return i.v >= 2 and not i.split


# theorem id -> (module, value function, domain of the rows that can catch it)
VALUE_BOUNDS = {
    "T1": (bsw, "fill_drain_value", _v1_fused),
    "T2": (bsw, "memory_time_value", lambda i: _v1_fused(i) and i.K is not None and i.K < i.P),
    "T3": (bsw, "single_slot_value", lambda i: _v1_fused(i) and i.K == 1),
    "T3 split": (bsw, "single_slot_value", lambda i: _v1_split(i) and i.K == 1),
    "S1": (bsw, "split_drain_value", _v1_split),
    "S2": (bsw, "split_first_input_value", _v1_split),
    "S3": (bsw, "split_memory_time_value",
           lambda i: _v1_split(i) and i.K is not None and i.K < i.m),
    "S4": (bsw, "split_window_fill_value", lambda i: _v1_split(i) and i.K == 2 and i.m > 2),
    "MW1": (bmw, "gpu_subset_value", lambda i: i.v >= 2),
    "MW2": (bmw, "fill_drain_value", _mw_fused),
    "MW3": (bmw, "last_stage_value", _mw_fused),
    "MW4": (bmw, "vshape_pair_value", lambda i: _mw_fused(i) and i.placement == "vshape"),
    "MW5": (bmw, "looped_opt_value", lambda i: _mw_fused(i) and i.placement == "looped"
            and (i.K is None or i.K >= i.v * i.m)),
    "MW7": (bmw, "memory_slots_value", lambda i: i.v >= 2 and i.K is not None),
    "MW8a": (bmw, "forced_remat_value", lambda i: _mw_fused(i) and i.K is not None and i.K < i.v),
    "MW8b": (bmw, "vshape_forced_remat_value",
             lambda i: _mw_fused(i) and i.placement == "vshape" and i.K == 1),
    "MW9": (bmw, "single_slot_value", lambda i: i.v >= 2 and i.K is not None and i.K <= i.v),
    "MW11": (bmw, "first_backward_value", lambda i: i.v >= 2 and i.K is not None),
    "MW12": (bmw, "last_forward_value", lambda i: _mw_fused(i) and i.K is not None),
}

_ROWS = []


def _table():
    if not _ROWS:
        _ROWS.extend((i, o, s) for i, o, s in ptable.table_rows_all())
    return _ROWS


def _run_table_check(monkeypatch, rows):
    monkeypatch.setattr(ptable, "table_rows_all", lambda: rows)
    return ptable.table_rows(Context())


def _tight_rows(fn, domain, limit=4):
    """Rows of the domain where the (unmutated) bound equals the optimum."""
    out = []
    for inst, opt, status in _table():
        if status == "optimal" and domain(inst):
            val = fn(inst)
            if val is not None and val == opt:
                out.append((inst, opt, status))
                if len(out) >= limit:
                    break
    return out


@pytest.mark.parametrize("how", [_plus, _times], ids=["plus_eps", "times_1_plus_eps"])
@pytest.mark.parametrize("theorem", sorted(VALUE_BOUNDS))
def test_a_bound_too_large_is_caught(monkeypatch, theorem, how):
    module, name, domain = VALUE_BOUNDS[theorem]
    rows = _tight_rows(getattr(module, name), domain)
    assert rows, f"{theorem}: no row of pipebounds/data/optima.jsonl where the bound is tight"
    assert _run_table_check(monkeypatch, rows).ok  # unmutated: passes
    monkeypatch.setattr(module, name, how(getattr(module, name)))
    res = _run_table_check(monkeypatch, rows)
    assert not res.ok, f"{theorem} planted +eps was not caught"
    assert "LB" in res.detail


def _terms_plus(name):
    orig = bev.basic_terms

    def mutated(inst):
        return [(n, v + EPS if n == name else v, e) for n, v, e in orig(inst)]
    return mutated


@pytest.mark.parametrize("term", ["work", "critical_path"], ids=["T0 work", "T0 chain"])
def test_theorem_0_too_large_is_caught(monkeypatch, term):
    orig = bev.basic_terms
    rows = _tight_rows(lambda i: dict((n, v) for n, v, _ in orig(i))[term], lambda i: True)
    assert rows and _run_table_check(monkeypatch, rows).ok
    monkeypatch.setattr(bev, "basic_terms", _terms_plus(term))
    assert not _run_table_check(monkeypatch, rows).ok


def test_MW8c_chain_too_long_is_caught(monkeypatch):
    """MW8c: every head of the K = 1 chain one eps later raises MW1 at K = 1 above OPT."""
    rows = _tight_rows(bmw.gpu_subset_value, lambda i: i.v >= 2 and i.K == 1)
    assert rows and _run_table_check(monkeypatch, rows).ok
    orig = bmw.single_slot_chain

    def longer(inst, *args, **kwargs):
        return {k: (h + EPS, t, d) for k, (h, t, d) in orig(inst, *args, **kwargs).items()}
    monkeypatch.setattr(bmw, "single_slot_chain", longer)
    assert not _run_table_check(monkeypatch, rows).ok


# exact flags: (module, function, domain); the mutation claims exactness everywhere
FLAG_MUTATIONS = {
    "T1 exact (K >= min(m, P))": (bsw, "nonbinding_memory", lambda *_: True,
                                  lambda i: _v1_fused(i) and i.K is not None and i.K >= 2),
    "T3 exact (checked range / certificate)": (bsw, "single_slot_exact", lambda *_: True,
                                               lambda i: _v1_fused(i) and i.K == 1),
    # (the split non-binding certificate is no longer a flag of bounds/: pipebounds.certify
    # simulates the schedule it offers, so no formula can be planted wrong there)
    "MW5/MW6 exact": (bmw, "exact_case",
                      lambda i: "looped" if i.placement == "looped" else "vshape",
                      lambda i: _mw_fused(i) and i.K is not None),
    "MW8d exact (m = 1, K = 1)": (bmw, "single_microbatch_exact", lambda *_: True,
                                  lambda i: i.v >= 2 and i.K == 1),
}


FLAG_VALUES = {"T3 exact (checked range / certificate)": bsw.single_slot_value}
"""The term a flag claims exact, where it is not the whole lower bound (default: the bound)."""


@pytest.mark.parametrize("flag", sorted(FLAG_MUTATIONS))
def test_a_wrong_exact_flag_is_caught(monkeypatch, flag):
    module, name, wrong, domain = FLAG_MUTATIONS[flag]
    rows = [r for r in _table() if r[2] == "optimal" and domain(r[0])]
    from bounds import lower_bound

    # rows where the bound is below the optimum (a claim of exactness there is false); T3's
    # flag claims T3 itself exact, which is false where T3 < OPT even when T3d reaches OPT
    value = FLAG_VALUES.get(flag, lambda i: lower_bound(i).value)
    gaps = [r for r in rows if value(r[0]) < r[1]][:4]
    assert gaps, f"{flag}: the table has no gap in this domain"
    assert _run_table_check(monkeypatch, gaps).ok
    monkeypatch.setattr(module, name, wrong)
    res = _run_table_check(monkeypatch, gaps)
    assert not res.ok and "claimed exact" in res.detail


def test_a_slot_edge_too_large_is_caught(monkeypatch):
    """T2, S3 and MW7 share the slot edge; the slot-edge check sees it attained."""
    from proofs_checks.single_wave import slot_edge_lemma

    assert slot_edge_lemma(Context()).ok
    orig = bsw.slot_edge
    monkeypatch.setattr(bsw, "slot_edge", lambda k, f, b: orig(k, f, b) * (1 + EPS))
    assert not slot_edge_lemma(Context()).ok


def test_MW2_expression_error_is_caught_by_the_symbolic_check(monkeypatch):
    from proofs_checks.multi_wave import closed_forms_are_subset_bounds

    assert closed_forms_are_subset_bounds(Context()).ok
    orig = bmw.fill_drain_expr
    monkeypatch.setattr(bmw, "fill_drain_expr", lambda: orig() + 1)
    assert not closed_forms_are_subset_bounds(Context()).ok


def test_S1_published_form_is_caught(monkeypatch):
    """Replacing S1 by the published ZB form (valid only for b_I >= 2 b_W) fails the check."""
    from proofs_checks.single_wave import split_reductions

    def published(inst):
        c = 1 if inst.K == inst.P else 2
        return inst.m * (inst.f + inst.b) + (inst.P - 1) * (inst.f + inst.b_I - c * inst.b_W)
    monkeypatch.setattr(bsw, "split_drain_value", published)
    assert not split_reductions(Context()).ok
