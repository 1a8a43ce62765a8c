"""Lower bounds for the bidirectional model (MODEL.md, *Directions*: ``directions = 2``).

Theorem D1 (docs/theory.md, *A.12 Two directions (D1)*). Microbatches ``j < m/2`` run through
copy 0 (stage ``s`` on GPU ``s``), the others through copy 1 (stage ``s`` on GPU ``P-1-s``); each
is a chain of ``P`` stages. Uniform durations, ``c >= 0``, any ``K``, optional ``F&B`` ops.
Write

* ``φ = min(f, d_FB, d_FI)``: the least time a forward takes in a chain (alone, or as the
  forward part of an ``F&B`` op; only the given overlapped durations count, each by its least
  value when given per stage);
* ``β = min(b, d_FB)`` (fused) or ``min(b_I, d_FB, d_FI)`` (split): the least time of an
  input-gradient op (``B`` or ``I``) in a chain; ``λ`` the least time of the last backward of a
  chain, ``min(b, d_FB)`` fused, ``min(b, d_FB, min(b_I, d_FI) + b_W)`` split;
* ``σ = max(0, f + b - d_FB, f + b_I - d_FI)``: the most one ``F&B`` op saves;
* ``a = ⌊(P-1)/2⌋``: the GPU nearest the middle is ``a`` stages from either end of its two
  chains (GPU ``p`` sits at position ``p`` of copy 0 and ``P-1-p`` of copy 1).

Then every schedule has

    T >= a (φ + c) + m (f + b) - (m - 1) σ + [fused] a (β + c)        (bidirectional_gpu)
    T >= P φ + (P - 1) β + λ + 2 (P - 1) c                            (bidirectional_chain)

Proof sketch (docs/theory.md A.12): GPU ``p``'s first op is a plain forward of stage ``p`` of
copy 0 or ``P-1-p`` of copy 1, which waits for the chain of forwards before it: ``min(p, P-1-p)``
forwards on other GPUs. It then runs its work, at least ``m(f+b)`` less ``σ`` per ``F&B`` op, and
it has at most ``m - 1`` of them (its first forward and its last input gradient run alone). In
the fused form its last op is a ``B`` of stage ``s ∈ {p, P-1-p}``, followed by ``s`` more ``B`` on
other GPUs. No exactness is claimed.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from schedules.instance import DirectionsError, Instance

from .theorems import SINGLE, theorem

DOC = SINGLE + "A.12 Two directions (D1)"


def _least(d) -> Optional[Fraction]:
    """The least value of an overlapped duration (a number, or one per stage), None if absent."""
    if d is None:
        return None
    return min(Fraction(x) for x in d) if isinstance(d, tuple) else Fraction(d)


def _given(*values) -> list[Fraction]:
    return [Fraction(x) for x in values if x is not None]


def parts(inst: Instance) -> dict[str, Fraction]:
    """``φ, β, λ, σ`` and ``a`` of theorem D1 (module docstring) for a uniform instance."""
    if not inst.uniform:
        raise DirectionsError("lower_bound with per-stage durations does not support "
                              "directions=2 yet (theorem D1 assumes uniform durations)")
    f, b = Fraction(inst.f), Fraction(inst.b)
    # an overlapped duration may be given per stage (by the forward part's stage): the least
    # one bounds every op's time from below, and gives the largest saving
    d_fb, d_fi = _least(inst.d_FB), _least(inst.d_FI)
    phi = min(_given(f, d_fb, d_fi))
    if inst.b_I is not None and inst.b_W is not None:  # split
        b_i, b_w = Fraction(inst.b_I), Fraction(inst.b_W)
        beta = min(_given(b_i, d_fb, d_fi))
        last = min(_given(b, d_fb, min(_given(b_i, d_fi)) + b_w))
    else:
        beta = last = min(_given(b, d_fb))
    saves = [Fraction(0)]
    if d_fb is not None:
        saves.append(f + b - d_fb)
    if d_fi is not None and inst.b_I is not None:  # d_FI needs split durations
        saves.append(f + Fraction(inst.b_I) - d_fi)
    return {"phi": phi, "beta": beta, "last": last, "sigma": max(saves),
            "a": Fraction((inst.P - 1) // 2)}


def gpu_value(inst: Instance) -> Fraction:
    """``bidirectional_gpu`` of D1: head idle, work and (fused) tail idle of the middle GPU."""
    x = parts(inst)
    c = Fraction(inst.c)
    work = inst.m * (Fraction(inst.f) + Fraction(inst.b)) - (inst.m - 1) * x["sigma"]
    tail = Fraction(0) if inst.split else x["a"] * (x["beta"] + c)
    return x["a"] * (x["phi"] + c) + work + tail


def chain_value(inst: Instance) -> Fraction:
    """``bidirectional_chain`` of D1: one microbatch's chain of ``P`` stages."""
    x = parts(inst)
    P = inst.P
    return P * x["phi"] + (P - 1) * x["beta"] + x["last"] + 2 * (P - 1) * Fraction(inst.c)


@theorem("D1", "two directions: the middle GPU's head and tail idle plus its work; one chain",
         DOC, terms=("bidirectional_gpu", "bidirectional_chain"))
def bidirectional_value(inst: Instance) -> Fraction:
    """D1: the larger of :func:`terms`."""
    return max(x for _, x, _ in terms(inst))


def terms(inst: Instance) -> list[tuple[str, Fraction, bool]]:
    """The terms of D1 for ``inst`` (``directions = 2``); never exact.

    >>> [(n, int(x)) for n, x, _ in terms(Instance(P=4, m=8, directions=2, f=1, b=2))]
    [('bidirectional_gpu', 27), ('bidirectional_chain', 12)]
    """
    return [("bidirectional_gpu", gpu_value(inst), False),
            ("bidirectional_chain", chain_value(inst), False)]
