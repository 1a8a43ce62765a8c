"""Lower bounds that hold over the full model, backward recomputation included (docs/theory.md
A.11).

MODEL.md, *Extensions*: in split form a pair may free its activation at the end of ``I(j,s)``
and store it again with an ``R(j,s)`` placed between ``I(j,s)`` and ``W(j,s)``. The memory
arguments of T3 split, S1, S3, MW1 at ``K = 1`` (MW8c), MW7 and MW9 assumed a kept activation
stays live from its store to its ``W``; this module gives the form of each that holds when
schedules may contain such ``R`` ops (the ids end in ``r``). The other terms use no memory
argument and hold as they are: T0 (work and chain; an ``R`` only adds work), S2, MW1 with
``K >= 2`` (heads and tails of the plain chain) and H1-H3.

* **S1r** (drain): ``T >= (P-1) f + m u + D((P-1) b_I, min(K, m), m)`` with
  ``D = bounds.single_wave.input_drain``. S1 itself is *false* here: at ``P = 3, m = 3, K = 2,
  f = 3, b_I = 3, b_W = 1`` S1 = 32 and the exact model with backward ``R`` has OPT = 31.
* **S3r** (memory-time): S3 with the slot edge ``E = k(k-1)/2 (f + min(b_I, b_W))`` (a hold may
  end with an ``I``).
* **T3r** (single slot, ``K = 1``): ``max_p [p f + min_x Λ_p(x) + D(p b_I, 1, m)]``.
* **MW1r** (``K = 1``): MW1 over the forced-recompute chain in which ``R(j,s)`` waits for the
  end of ``I(j,s')`` (not ``W(j,s')``) of the GPU's higher stages ``s'``.
* **MW7r**: MW7 with the slot edge of ``min(b_I, b_W)`` and the drain ``D(lo b_I, min(K, v m),
  v m)`` in its work branch.
* **MW9r** (``K = 1``): MW9 on MW1r's chain with the drain ``D(tail - b_W, 1, v m)``.
* **MW11r**: MW11 with the drain ``D(s_1 b_I, min(K, v m), v m)``.

Only the chain term's exact case (``m = 1, v = 1``) is claimed exact here: its schedule has no
``R`` and the chain is a bound for every schedule.
"""

from __future__ import annotations

from typing import Union

from fractions import Fraction

from schedules.instance import Instance

from . import multi_wave as mw
from . import single_wave as sw
from .theorems import SINGLE, theorem

Value = Union[int, Fraction]
Term = tuple[str, Value, bool]

DOC = SINGLE + ("A.11 Backward recomputation: Theorem 3 and S1, S3, MW1, MW7, MW9 "
                "(S1r, S3r, T3r, MW1r, MW7r, MW9r)")
"""The docs section of every theorem of this module."""


@theorem("S1r", "split drain with backward recomputation", DOC, terms=("split_drain_backward",))
def split_drain_backward_value(inst: Instance) -> Value:
    """S1r: ``max(m u, (P-1) f + m u + D((P-1) b_I, min(K, m), m))``.

    The GPU term ``q f + m u + D(q b_I, ...)`` is non-decreasing in ``q`` (``D`` is, in its
    first argument), so the last GPU's is the maximum.

    >>> split_drain_backward_value(Instance(P=3, m=3, K=2, f=3, b_I=3, b_W=1))
    Fraction(31, 1)
    """
    keep = inst.m if inst.K is None else min(inst.K, inst.m)
    work = inst.m * (inst.f + inst.b)
    q = inst.P - 1
    return max(work, q * inst.f + work
               + sw.input_drain(q * inst.b_I, keep, inst.m, inst.f, inst.b_W))


def single_slot_backward_gpu_value(inst: Instance, gpu: int) -> Value:
    """T3r for one GPU: ``p f + min_x Λ_p(x) + D(p b_I, 1, m)`` (split, ``K = 1``)."""
    return (gpu * inst.f + sw.single_slot_choice(inst, gpu)[1]
            + sw.input_drain(gpu * inst.b_I, 1, inst.m, inst.f, inst.b_W))


@theorem("T3r", "split single slot with backward recomputation (K = 1)", DOC,
         terms=("single_slot_backward",))
def single_slot_backward_value(inst: Instance) -> Value:
    """T3r: the maximum over GPUs of :func:`single_slot_backward_gpu_value`.

    >>> single_slot_backward_value(Instance(P=3, m=4, K=1, f=1, b_I=1, b_W=1))
    Fraction(17, 1)
    """
    return max(single_slot_backward_gpu_value(inst, q) for q in range(inst.P))


def release_min(inst: Instance) -> Value:
    """The shortest op that can end a hold with backward recomputation: ``min(b_I, b_W)``."""
    return min(inst.b_I, inst.b_W)


@theorem("S3r", "split memory-time with backward recomputation", DOC,
         terms=("split_memory_time_backward",))
def split_memory_time_backward_value(inst: Instance) -> Value:
    """S3r: S3 with the slot edge of ``min(b_I, b_W)``."""
    return sw.split_memory_time_value(inst, release_min(inst))


@theorem("MW1r", "GPU subset at K = 1 with backward recomputation", DOC,
         terms=("mw_gpu_subset_backward",))
def gpu_subset_backward_value(inst: Instance) -> Value:
    """MW1r: MW1 over the forced-recompute chain of A.11 (``R`` waits for the ``I`` above)."""
    return mw.gpu_subset_value(inst, backward=True)


@theorem("MW7r", "memory slots with backward recomputation", DOC,
         terms=("mw_memory_slots_backward",))
def memory_slots_backward_value(inst: Instance):
    """MW7r: MW7 with the slot edge of ``min(b_I, b_W)`` (None when ``K`` is None)."""
    return mw.memory_slots_value(inst, release=release_min(inst), backward=True)


@theorem("MW11r", "first backward with backward recomputation", DOC,
         terms=("mw_first_backward_backward",))
def first_backward_backward_value(inst: Instance):
    """MW11r: MW11 with the drain of Lemma D (None when ``K`` is None)."""
    return mw.first_backward_value(inst, backward=True)


@theorem("MW9r", "single slot per GPU with backward recomputation", DOC,
         terms=("mw_single_slot_backward",))
def single_slot_backward_mw_value(inst: Instance):
    """MW9r: MW9 on MW1r's chain with the drain of Lemma D (None outside ``K = 1``)."""
    return mw.single_slot_value(inst, backward=True)


def terms(inst: Instance) -> list[Term]:
    """The single- or multi-wave terms of a split instance whose schedules may contain
    backward recomputations: ``(name, exact value, exact?)``, never exact (the chain term's
    exact case is :func:`bounds.evaluate.basic_terms`')."""
    if not inst.split:
        raise ValueError("backward recomputation needs split backward (I and W)")
    out: list[Term] = []
    if inst.v == 1:
        out.append(("split_drain_backward", split_drain_backward_value(inst), False))
        out.append(("split_first_input", sw.split_first_input_value(inst), False))
        if inst.K is not None and inst.K < inst.m:
            out.append(("split_memory_time_backward", split_memory_time_backward_value(inst),
                        False))
        if inst.K == 1:
            out.append(("single_slot_backward", single_slot_backward_value(inst), False))
        return out
    if inst.K == 1:
        out.append(("mw_gpu_subset_backward", gpu_subset_backward_value(inst), False))
    else:
        out.append(("mw_gpu_subset", mw.gpu_subset_value(inst), False))
    mem = memory_slots_backward_value(inst)
    if mem is not None:
        out.append(("mw_memory_slots_backward", mem, False))
    slot = single_slot_backward_mw_value(inst)
    if slot is not None:
        out.append(("mw_single_slot_backward", slot, False))
    first = first_backward_backward_value(inst)
    if first is not None:
        out.append(("mw_first_backward_backward", first, False))
    return out


__all__ = ["DOC", "split_drain_backward_value", "single_slot_backward_gpu_value",
           "single_slot_backward_value", "release_min", "split_memory_time_backward_value",
           "gpu_subset_backward_value", "memory_slots_backward_value",
           "single_slot_backward_mw_value", "first_backward_backward_value", "terms"]
