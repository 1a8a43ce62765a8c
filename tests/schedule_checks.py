"""Shared assertion for generated schedules: valid, within the memory limit, the same makespan in
the reference simulator, and never below the lower bound (exact Fractions)."""

from __future__ import annotations

from fractions import Fraction

from bounds import lower_bound
from schedules import Instance, Schedule, simulate, validate
from tests.reference_sim import reference_simulate


def assert_valid_within_K(sched: Schedule, inst: Instance) -> None:
    """``sched`` passes the validator and the simulator, its peak is at most ``inst.K`` on every
    GPU (in both simulators), the reference simulator agrees on its makespan, and that makespan
    is at least ``bounds.lower_bound(inst)``."""
    res = simulate(sched)
    assert res.valid, res.errors[:3]
    assert not validate(sched)
    assert max(res.peak_memory) <= inst.K
    ref = reference_simulate(sched)
    assert not ref.deadlock and ref.makespan == res.makespan
    assert max(ref.order_peak) <= inst.K
    assert isinstance(res.makespan, Fraction) and res.makespan >= lower_bound(inst).value
