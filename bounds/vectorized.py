"""Vectorised evaluation of the single-wave (``v = 1``) lower bound over numpy grids.

The same formulas as :mod:`bounds.single_wave` and :func:`bounds.evaluate.basic_terms`
(hand-vectorised, float64), for sweeps over millions of instances. Inputs are broadcastable
arrays; ``K = np.inf`` is unconstrained. The result agrees with the exact
:func:`bounds.evaluate.lower_bound` up to float rounding (tests/test_bounds_single_wave.py
checks this on a grid of integer durations; use the Fraction evaluation when a comparison must
be exact). Candidate sets of the integer minimisations hold both ``floor`` and ``ceil`` of each
breakpoint, so a rounding error in a breakpoint cannot drop the minimiser.

Speed: the per-GPU maxima loop over ``p`` only on the rows where memory binds (``K < P``
fused, ``K < m`` split), sorted by ``P`` so that the rows with ``P > p`` are a prefix
(``benchmarks/bench_bounds.py`` prints instances per second).

>>> import numpy as np
>>> lower_bound_fused(np.array([3, 4]), np.array([4, 8]), np.array([1, np.inf]), 3.0, 2.0)
array([34., 55.])
"""

from __future__ import annotations

import numpy as np


def _arrays(*xs):
    arrs = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in xs))
    return [np.ascontiguousarray(a).ravel() for a in arrs], arrs[0].shape


def _memory_time_min(m, K, f, work, hold_kept, hold_remat, edge):
    """min over integer r in [0, m] of
    max(m work + r f, ((m - r) hold_kept + r hold_remat + edge)/K)
    (T2/S3 of bounds.single_wave, ``edge`` the slot edge; the crossing ``r*`` is clamped to
    ``[0, m]``)."""
    num = m * (hold_kept - K * work) + edge
    den = K * f + hold_kept - hold_remat
    rs = np.maximum(num, 0.0) / den
    best = None
    for r in (np.floor(rs), np.ceil(rs)):
        np.minimum(r, m, out=r)
        val = np.maximum(m * work + r * f, ((m - r) * hold_kept + r * hold_remat + edge) / K)
        best = val if best is None else np.minimum(best, val, out=best)
    return best


def _single_slot_min(m, f, work, G):
    """``m work + min_x waste(x)``: T3's ``min_x W_p(x)`` with gap ``G`` (bounds.single_wave).

    ``W`` is piecewise linear in ``x``: slope ``-f`` up to ``m/(c+2)``, then
    ``G - (f - r0)(c+1)`` up to ``m/(c+1)``, then ``G >= 0``; the minimiser is next to
    ``m/(c+2)`` if the middle slope is ``>= 0``, else next to ``m/(c+1)``.
    """
    c = np.floor(G / f)
    r0 = G - c * f
    xr = m / np.where(G - (f - r0) * (c + 1) >= 0, c + 2, c + 1)
    best = None
    for xx in (np.floor(xr), np.ceil(xr)):
        N = m - xx
        xc = xx * c
        W = N * f + xx * G - f * np.minimum(N, xc) - r0 * np.minimum(xx, np.maximum(0.0, N - xc))
        best = W if best is None else np.minimum(best, W, out=best)
    return m * work + best


_CHUNK = 1 << 15


def _per_gpu_max(rows, P, term):
    """``max_{0 <= q < P} term(q, sel)`` for the given row indices, looping q over the rows
    with ``P > q`` only (rows sorted by decreasing P make that set a prefix), in cache-sized
    chunks."""
    order = rows[np.argsort(-P[rows], kind="stable")]
    best = np.full(order.size, -np.inf)
    for lo in range(0, order.size, _CHUNK):
        sel = order[lo:lo + _CHUNK]
        Ps = -P[sel]
        out = best[lo:lo + _CHUNK]
        q = 0
        while True:
            cnt = int(np.searchsorted(Ps, -q, side="left"))  # rows with P > q
            if cnt == 0:
                break
            np.maximum(out[:cnt], term(q, sel[:cnt]), out=out[:cnt])
            q += 1
    return order, best


def lower_bound_fused(P, m, K, f, b):
    """The v = 1 fused-backward bound: max(work, chain, T1, T2 if 1 < K < P, T3 if K = 1).

    (T1 dominates work and chain; T3 dominates T2 at ``K = 1``, docs/theory.md.)
    """
    (P, m, K, f, b), shape = _arrays(P, m, K, f, b)
    Bx = f + b
    out = (m + P - 1) * Bx                                   # T1 >= work, chain

    def t2(q, sel):
        d = P[sel] - q
        Bs = Bx[sel]
        k = np.minimum(K[sel], m[sel])
        return q * Bs + _memory_time_min(m[sel], K[sel], f[sel], Bs, d * Bs, Bs,
                                         k * (k - 1) / 2 * Bs)

    def t3(q, sel):
        Bs = Bx[sel]
        return q * Bs + _single_slot_min(m[sel], f[sel], Bs, (P[sel] - q - 1) * Bs)

    for mask, term in (((K > 1) & (K < P), t2), ((K == 1) & (P > 1), t3)):
        rows = np.flatnonzero(mask)
        if rows.size:
            order, val = _per_gpu_max(rows, P, term)
            out[order] = np.maximum(out[order], val)
    return out.reshape(shape)


def lower_bound_split(P, m, K, f, b_I, b_W):
    """The v = 1 split-backward bound: max(work, chain, S1, S2, S3 if K < m, T3 (split form)
    if K = 1)."""
    (P, m, K, f, b_I, b_W), shape = _arrays(P, m, K, f, b_I, b_W)
    Bx = f + b_I + b_W
    out = np.maximum(m * Bx, P * (f + b_I) + b_W)
    keep = np.minimum(K, m)
    out = np.maximum(out, (P - 1) * f + m * Bx
                     + np.maximum(0.0, (P - 1) * b_I - (keep - 1) * b_W))     # S1 at p = P-1
    out = np.maximum(out, P * f + (P - 1) * b_I + m * (b_I + b_W))            # S2

    def s3(q, sel):
        d = P[sel] - q
        fs, Bs = f[sel], Bx[sel]
        H = d * (fs + b_I[sel]) + b_W[sel]
        k = np.minimum(K[sel], m[sel])
        return q * fs + _memory_time_min(m[sel], K[sel], fs, Bs, H, Bs,
                                         k * (k - 1) / 2 * (fs + b_W[sel]))

    def t3(q, sel):
        chain = f[sel] + b_I[sel]
        return q * chain + _single_slot_min(m[sel], f[sel], Bx[sel], (P[sel] - q - 1) * chain)

    for mask, term in ((K < m, s3), ((K == 1) & (P > 1), t3)):
        rows = np.flatnonzero(mask)
        if rows.size:
            order, val = _per_gpu_max(rows, P, term)
            out[order] = np.maximum(out[order], val)
    return out.reshape(shape)


__all__ = ["lower_bound_fused", "lower_bound_split"]
