"""Lower bounds that hold over the full model, backward recomputation included (docs/theory.md
A.11).

MODEL.md, *Extensions*: in split form a pair may free its activation at the end of ``I(j,s)``
and store it again with an ``R(j,s)`` placed between ``I(j,s)`` and ``W(j,s)``. The memory
arguments of T3 split, S1, S3, MW1 at ``K = 1`` (MW8c), MW7 and MW9 assumed a kept activation
stays live from its store to its ``W``; this module gives the form of each that holds when
schedules may contain such ``R`` ops (the ids end in ``r``). The other terms use no memory
argument and hold as they are: T0 (work and chain; an ``R`` only adds work), S2, MW1 with
``K >= 2`` (heads and tails of the plain chain), H1-H3 and D1; H4 is evaluated on MW1r's chain.

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
* **MW11r**: MW11 with the drain ``D(s_1 b_I, min(K, v m), v m)``, every ``v`` (at ``v = 1``,
  ``s_1 = p``; its GPU-0 term at ``K = 1`` is the plain T3 split's term of GPU ``P - 1``).

T3 split itself is *false* here: at ``P = 4, m = 4, K = 1, f = b_I = b_W = 1`` T3 = 19 (= the
optimum without backward ``R``) and the exact model with backward ``R`` has OPT = 18
(docs/theory.md A.11). :data:`COVERAGE` says, for every theorem with a term, whether it holds
over the full model; :func:`covers_backward` reads it (tests/test_bounds_backward_remat.py
checks that every term of ``lower_bound(inst, backward_remat=True)`` is covered).

Only the chain term's exact case (``m = 1, v = 1``) is claimed exact here: its schedule has no
``R`` and the chain is a bound for every schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional, Union

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
    """MW11r: MW11 with the drain of Lemma D, every ``v`` (None when ``K`` is None).

    At ``v = 1`` and ``K = 1`` its GPU-0 term is ``P f + (P-1) b_I + m u - f``, the plain T3
    split's term of GPU ``P - 1``, which T3r's drain loses:

    >>> inst = Instance(P=3, m=6, K=1, f=2, b_I=6, b_W=3)
    >>> first_backward_backward_value(inst), single_slot_backward_value(inst)
    (Fraction(82, 1), Fraction(81, 1))
    """
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
        first_v1 = first_backward_backward_value(inst)
        if first_v1 is not None:
            out.append(("mw_first_backward_backward", first_v1, False))
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


@dataclass(frozen=True)
class Coverage:
    """How a theorem's terms stand over the full model (schedules with backward ``R``).

    ``status``: ``"holds"`` (proven over the full model; :func:`bounds.lower_bound` uses it
    with ``backward_remat=True`` where it applies, under ``when`` if given), ``"replaced"``
    (refuted or not proven there; its ``r`` form, named in ``why``, is used instead), ``"left
    out"`` (not proven there and no ``r`` form: not used for split instances with
    ``backward_remat=True``) or ``"fused"`` (its terms exist only for fused instances, which
    have no backward ``R``: a backward ``R`` needs ``I`` and ``W``). ``why``: the argument, or
    the refutation (docs/theory.md A.11, table *What each bound covers*)."""

    status: str
    why: str
    when: Optional[Callable[[Instance], bool]] = None


_NO_MEMORY = "no memory argument: a backward R only adds work and precedences"

COVERAGE: dict[str, Coverage] = {
    "T0": Coverage("holds", _NO_MEMORY + "; the chain's exact case has no R"),
    "T1": Coverage("fused", "fused only"),
    "T2": Coverage("fused", "fused only"),
    "T3": Coverage("replaced", "T3r; T3 split is false: P=4, m=4, K=1, f=b_I=b_W=1: 19 > "
                               "OPT 18 (fused form: fused only)"),
    "T3d": Coverage("fused", "fused only"),
    "S1": Coverage("replaced", "S1r; S1 is false: P=3, m=3, K=2, f=3, b_I=3, b_W=1: 32 > 31"),
    "S2": Coverage("holds", _NO_MEMORY + " (GPU 0's first I waits for a chain, then its "
                            "m I and m W ops run)"),
    "S3": Coverage("replaced", "S3r (a hold may end with an I)"),
    "S4": Coverage("left out", "not proven with backward R (a hold may end with an I, a "
                               "pair may store again between its I and W; its drain is S1's, "
                               "false there)"),
    "MW1": Coverage("holds", "K >= 2: heads and tails of the plain chain; at K = 1 replaced "
                             "by MW1r (MW1 is false there: P=3, m=1, v=2 vshape, f=b_I=b_W=2: "
                             "30 > 28)", when=lambda inst: inst.K != 1),
    "MW2": Coverage("fused", "fused only"),
    "MW3": Coverage("fused", "fused only"),
    "MW4": Coverage("fused", "fused only"),
    "MW5": Coverage("fused", "fused only (its exact case)"),
    "MW6": Coverage("fused", "fused only (its exact case)"),
    "MW7": Coverage("replaced", "MW7r (slot edge min(b_I, b_W), drain D)"),
    "MW8": Coverage("fused", "fused only"),
    "MW9": Coverage("replaced", "MW9r; MW9 is false: P=2, m=3, K=1, v=2 vshape, f=1, b_I=2, "
                                "b_W=1: 32 > 31"),
    "MW10": Coverage("left out", "its full period ends at a W; with backward R an I may "
                                 "release a slot (no r form)"),
    "MW11": Coverage("replaced", "MW11r (drain D), at v = 1 too (plain MW11 is a v = 1 "
                                 "split term since issue 25)"),
    "MW12": Coverage("fused", "fused only"),
    "MW13": Coverage("left out", "not proven with backward R (theory_multiwave.md B.6)"),
    "S1r": Coverage("holds", "docs/theory.md A.11"),
    "S3r": Coverage("holds", "docs/theory.md A.11"),
    "T3r": Coverage("holds", "docs/theory.md A.11"),
    "MW1r": Coverage("holds", "docs/theory.md A.11"),
    "MW7r": Coverage("holds", "docs/theory.md A.11"),
    "MW9r": Coverage("holds", "docs/theory.md A.11"),
    "MW11r": Coverage("holds", "docs/theory.md A.11 (every v)"),
    "H1": Coverage("holds", _NO_MEMORY),
    "H2": Coverage("holds", _NO_MEMORY),
    "H3": Coverage("holds", _NO_MEMORY + " (every F and I of the GPU ends by its last I)"),
    "H4": Coverage("holds", "evaluated on A.11's chain (R waits for the I above)"),
    "H5": Coverage("left out", "T3 split's argument (refuted over the full model)"),
    "H6": Coverage("left out", "S3's argument (replaced by S3r uniformly)"),
    "H7": Coverage("left out", "MW7's argument (replaced by MW7r uniformly)"),
    "H8": Coverage("left out", "S1's argument (refuted over the full model)"),
    "H9": Coverage("left out", "MW11's drain (replaced by MW11r uniformly)"),
    "H10": Coverage("holds", "split: the form with A.11's chain and drain after the last I "
                    "(docs/theory.md A.9), which lower_bound takes with backward_remat=True"),
    "D1": Coverage("holds", "A.12: every schedule, recomputation of either kind"),
}
"""Theorem id -> :class:`Coverage`, for every registered theorem that has terms (the table
*What each bound covers* of docs/theory.md A.11)."""


def covers_backward(term: str, inst: Instance) -> bool:
    """Whether term ``term`` of :func:`bounds.lower_bound` is proven for every schedule of
    ``inst`` with backward recomputation: always for a fused instance (it has none), else
    when its theorem's :data:`COVERAGE` is ``"holds"`` (and its ``when`` holds)."""
    from .theorems import term_ids

    if not inst.split:
        return True
    cov = COVERAGE.get(term_ids()[term])
    return cov is not None and cov.status == "holds" and (cov.when is None or cov.when(inst))


__all__ = ["DOC", "Coverage", "COVERAGE", "covers_backward", "split_drain_backward_value",
           "single_slot_backward_gpu_value",
           "single_slot_backward_value", "release_min", "split_memory_time_backward_value",
           "gpu_subset_backward_value", "memory_slots_backward_value",
           "single_slot_backward_mw_value", "first_backward_backward_value", "terms"]
