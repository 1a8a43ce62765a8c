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
