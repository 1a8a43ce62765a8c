"""Exact evaluation of :func:`bounds.lower_bound` over arrays of instances (numpy, int64).

The same terms, the same values and the same theorem exact flags as the per-instance evaluation
(tests/test_bounds_batch.py compares them), for integer durations and no communication delay:
every value is a fraction ``num / den`` of int64 arrays with ``den`` 1 or ``K`` (T2, S3, MW7
divide by ``K``). Single-wave terms are evaluated over all rows at once (the per-GPU maxima
loop over ``p`` on the rows with ``P > p``); multi-wave rows are grouped by their *shape*
(``P, v``, placement, fused or split, ``K = 1`` or not), whose op types, heads and tails share
one structure, and each group is evaluated at once: MW1 by broadcasting over (GPU, min-head op
type, min-tail op type, op type), MW7 by walking each GPU's ``v`` stage groups, MW9 at its
candidate points. Cost: ``O(rows * P * n^3)`` for MW1 (``n`` op types per GPU) and ``O(rows
* P * v)`` otherwise, in a few hundred numpy calls per group.

:func:`supported` says which rows this handles (:data:`LIMITS`); the others go through
:func:`bounds.lower_bound`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import cast

import numpy as np

from schedules.instance import Instance, placement_stage_to_rank

from .evaluate import TERM_IDS, exact_theorem

LIMITS = {"P": 64, "v": 8, "m": 1 << 20, "duration": 1 << 20, "K": 1 << 16}
"""Largest ``P``, ``v``, ``m``, integer duration and finite ``K`` of the array path (int64
values stay far from overflow); other rows use the per-instance evaluation."""

_BIG = np.int64(1) << np.int64(60)


@dataclass
class Rows:
    """Columns of a batch: int64 arrays, ``K`` 0 for unconstrained, ``bI = bW = 0`` fused."""

    P: np.ndarray
    m: np.ndarray
    K: np.ndarray
    v: np.ndarray
    vshape: np.ndarray  # bool
    f: np.ndarray
    b: np.ndarray
    bI: np.ndarray
    bW: np.ndarray

    @property
    def split(self) -> np.ndarray:
        return self.bI > 0

    @classmethod
    def of(cls, insts) -> "Rows":
        """The columns of a sequence of :class:`~schedules.instance.Instance` (each within
        :func:`supported`: named placement, integer durations, no delay)."""
        def col(xs):
            return np.array(xs, dtype=np.int64)

        return cls(col([i.P for i in insts]), col([i.m for i in insts]),
                   col([i.K or 0 for i in insts]), col([i.v for i in insts]),
                   np.array([i.placement == "vshape" and i.v > 1 for i in insts], dtype=bool),
                   col([int(i.f) for i in insts]), col([int(i.b) for i in insts]),
                   col([int(i.b_I or 0) for i in insts]), col([int(i.b_W or 0) for i in insts]))

    def take(self, idx) -> "Rows":
        return Rows(*(getattr(self, k)[idx] for k in ("P", "m", "K", "v", "vshape", "f", "b",
                                                       "bI", "bW")))


@dataclass
class Term:
    """One term over the rows of a batch: ``mask`` where it applies, ``num / den`` its value,
    ``exact`` where a theorem proves it equal to the optimum."""

    name: str
    mask: np.ndarray
    num: np.ndarray
    den: np.ndarray
    exact: np.ndarray


def supported(P, m, K, v, f, b, bI, bW):
    """Rows the array path evaluates (ints within :data:`LIMITS`), elementwise: a bool for
    numbers, a bool array for arrays."""
    L = LIMITS
    return ((P <= L["P"]) & (v <= L["v"]) & (m <= L["m"]) & (K <= L["K"])
            & (np.maximum(np.maximum(f, b), np.maximum(bI, bW)) <= L["duration"]))


def _ceil_div(a, b):
    return -((-a) // b)


# --------------------------------------------------------------------------- single wave
def _per_gpu_max(P, term):
    """``max_{0 <= q < P} term(q, i)`` elementwise, ``-2^60`` where ``P = 0`` (rows the term
    does not apply to). ``term(q, i)`` is evaluated on the row indices ``i`` with ``P > q``
    only (rows sorted by decreasing ``P`` make them a prefix), so a row costs ``P`` term
    evaluations, not ``max P``."""
    best = np.full(P.shape, -_BIG, dtype=np.int64)
    order = np.argsort(-P, kind="stable")
    neg = -P[order]                                  # increasing
    for q in range(int(P.max()) if P.size else 0):
        i = order[:int(np.searchsorted(neg, -q, side="left"))]  # rows with P > q
        best[i] = np.maximum(best[i], term(q, i))
    return best


def _memory_time_num(m, K, f, work, kept, remat, edge):
    """``K * min_r max(m work + r f, ((m-r) kept + r remat + edge) / K)`` (T2, S3)."""
    denom = K * f + kept - remat
    num = m * (kept - K * work) + edge
    lo = np.where(num > 0, num // np.maximum(denom, 1), 0)
    hi = np.where(num > 0, lo + (lo * denom != num), 0)
    best = None
    for r in (np.clip(lo, 0, m), np.clip(hi, 0, m)):
        val = np.maximum((m * work + r * f) * K, (m - r) * kept + r * remat + edge)
        best = val if best is None else np.minimum(best, val)
    return best


def _window_fill_num(q, P, m, f, bI, bW):
    """Twice S4 of GPU ``q`` (:func:`bounds.single_wave.split_window_fill_gpu_value`), at the
    candidates of :func:`bounds.single_wave.window_fill_choices` (clipped to ``[0, m]``), with
    the drain after the last ``I``."""
    L = (P - q - 1) * (f + bI)
    u = f + bI + bW
    g = L - u
    A = np.maximum(0, L - f)
    R1 = (m - 4) // 2
    lo = np.where(g > 0, (2 * A + (m - 2) * g) // np.maximum(2 * (f + g), 1), 0)
    best = None
    for r in (np.zeros_like(m), R1, R1 + 1, R1 + 2, np.clip(lo, 0, np.maximum(R1, 0)),
              np.clip(lo + 1, 0, np.maximum(R1, 0))):
        r = np.clip(r, 0, m)
        n = m - 2 * r - 2
        need = np.where((g <= 0) | (n <= 0), 0, np.where(n == 1, 2 * g, n * g))
        val = np.maximum(2 * r * f, 2 * A + need)
        best = val if best is None else np.minimum(best, val)
    return 2 * q * f + 2 * m * u + best + 2 * np.maximum(0, q * bI - bW)


def _waste(n, G, f, x):
    """Theorem 3's ``single_slot_waste`` elementwise."""
    c = G // f
    r0 = G - c * f
    N = n - x
    return N * f + x * G - f * np.minimum(N, x * c) - r0 * np.minimum(x, np.maximum(0, N - x * c))


def _min_waste(n, G, f, xmax):
    """``min_{0 <= x <= xmax} waste(n, G, f, x)`` (convex piecewise linear: its breakpoints
    and the ends), the six candidates evaluated at once (stacked on a new first axis)."""
    n, G, f, xmax = np.broadcast_arrays(n, G, f, xmax)
    c = G // f
    x = np.stack((np.zeros_like(n), xmax, n // (c + 2), _ceil_div(n, c + 2), n // (c + 1),
                  _ceil_div(n, c + 1)))
    return _waste(n, G, f, np.clip(x, 0, xmax)).min(0)


def _single_wave(r: Rows) -> list[Term]:
    one = np.ones_like(r.P)
    P, m, K, f, b, bI, bW = r.P, r.m, r.K, r.f, r.b, r.bI, r.bW
    split, fused = r.split, ~r.split
    finite = K > 0
    B = f + b
    bc = np.where(split, bI, b)                     # the chain's backward op
    chain = np.where(split, P * (f + bI) + bW, P * b + P * f)
    terms = [Term("work", one > 0, m * B, one, one < 0),
             Term("critical_path", one > 0, chain, one, m == 1)]
    # fused: T1, T2 (K < P), T3 (K = 1)
    t1_exact = ~finite | (K >= np.minimum(m, P)) | ((m - 2) * f <= b)
    terms.append(Term("fill_drain", fused, (m + P - 1) * B, one, fused & t1_exact))
    Kc = np.where(finite, K, 1)
    k = np.minimum(Kc, m)
    t2 = fused & finite & (K < P)
    if t2.any():
        edge = k * (k - 1) // 2 * B
        num = _per_gpu_max(np.where(t2, P, 0), lambda q, i: q * B[i] * Kc[i] + _memory_time_num(
            m[i], Kc[i], f[i], B[i], (P[i] - q) * B[i], B[i], edge[i]))
        terms.append(Term("memory_time", t2, num, Kc, one < 0))
    # split: S1, S2, S3 (K < m)
    keep = np.where(finite, np.minimum(Kc, m), m)
    q = P - 1
    s1 = np.maximum(m * B, q * f + m * B + np.maximum(0, q * bI - (keep - 1) * bW))
    terms.append(Term("split_drain", split, s1, one, one < 0))
    terms.append(Term("split_first_input", split, P * f + (P - 1) * bI + m * b, one, one < 0))
    s3 = split & finite & (K < m)
    if s3.any():
        edge = k * (k - 1) // 2 * (f + bW)
        num = _per_gpu_max(np.where(s3, P, 0), lambda q, i: q * f[i] * Kc[i] + _memory_time_num(
            m[i], Kc[i], f[i], B[i], (P[i] - q) * (f[i] + bI[i]) + bW[i], B[i], edge[i]))
        terms.append(Term("split_memory_time", s3, num, Kc, one < 0))
    s4 = split & (K == 2) & (m > 2)
    if s4.any():
        num = _per_gpu_max(np.where(s4, P, 0), lambda q, i: _window_fill_num(
            q, P[i], m[i], f[i], bI[i], bW[i]))
        terms.append(Term("split_window_fill", s4, num, 2 * one, one < 0))
    t3 = K == 1
    if t3.any():
        fc = f + bc
        val = _per_gpu_max(np.where(t3, P, 0), lambda q, i: q * fc[i] + m[i] * B[i] + _min_waste(
            m[i], np.maximum(P[i] - q - 1, 0) * fc[i], f[i], m[i]))
        exact = t3 & ((P <= 2) | (split & ((m - 2) * f <= bI)))
        terms.append(Term("single_slot", t3, val, one, exact))
        t3d = t3 & fused
        if t3d.any():
            terms.append(Term("single_slot_coupled", t3d, _coupled(r, t3d, val), one, one < 0))
    mw11 = split & finite & (K < m)      # MW11 at v = 1 (bounds.multi_wave.v1_terms)
    if mw11.any():
        first = np.full(P.shape, -_BIG, dtype=np.int64)
        for Pn in np.unique(P[mw11]).tolist():
            i = np.flatnonzero(mw11 & (P == Pn))
            first[i] = _first_backward([(q,) for q in range(Pn)], Pn, True, m[i], Kc[i], f[i],
                                       b[i], bI[i], bW[i])
        terms.append(Term("mw_first_backward", mw11, first, one, one < 0))
    return terms


def _coupled(r: Rows, rows: np.ndarray, t3: np.ndarray) -> np.ndarray:
    """T3d (:func:`bounds.single_wave.coupled_slot_value`): T3 except on the rows where some
    adjacent pair passes the gate (``p u + min Λ⁻_p > T3`` for both GPUs of the pair, evaluated
    here on the ``rows`` with ``m >= 2``); those few rows go through the per-instance
    evaluation."""
    from .evaluate import ScaledInstance
    from .single_wave import coupled_slot_value

    out = t3.copy()
    idx = np.flatnonzero(rows & (r.m >= 2))
    if not idx.size:
        return out
    P, m, f, b, t = r.P[idx], r.m[idx], r.f[idx], r.b[idx], t3[idx]
    u = f + b
    mm = m - 1

    def minus(q):  # q u + min_x Λ⁻_q(x) (single_slot_minus)
        return q * u + m * u + f + _min_waste(mm, np.maximum(P - q - 1, 0) * u, f, mm)

    gate = np.zeros(P.shape, dtype=bool)
    prev = minus(0) > t
    for q in range(1, int(P.max())):
        cur = minus(q) > t
        gate |= (P > q) & prev & cur
        prev = cur
    gated = np.flatnonzero(gate)
    if not gated.size:
        return out
    # T3d is a function of (P, m, f, b) here (T3 is too): one evaluation per distinct tuple
    first, inv = _distinct(np.stack([P[gated], m[gated], f[gated], b[gated]], 1))
    vals = np.empty(first.size, np.int64)
    for u, k in enumerate(gated[first].tolist()):
        # integer durations (as lower_bound's scaled view): exact int arithmetic throughout
        inst = ScaledInstance(int(P[k]), int(m[k]), 1, 1, "looped", tuple(range(int(P[k]))),
                              int(f[k]), int(b[k]), None, None, 0)
        vals[u] = int(coupled_slot_value(cast(Instance, inst), Fraction(int(t[k]))))
    out[idx[gated]] = vals[inv]
    return out


# --------------------------------------------------------------------------- multi wave
def _op_types(r: Rows, S: int, gpu: tuple, k1: bool, split: bool):
    """Per GPU, the op types ``(kind, stage)`` and their head, tail, duration arrays (rows),
    as in :func:`bounds.multi_wave.all_op_types` (``K = 1``: with MW8c's chains)."""
    f, b = r.f, r.b
    b0 = r.bI if split else b
    bW = r.bW if split else np.zeros_like(f)
    P = len(set(gpu))
    types: list[list[tuple]] = [[] for _ in range(P)]
    if not k1:
        for s in range(S):
            o = types[gpu[s]]
            if split:
                o.append(("F", s, s * f, (S - 1 - s) * f + S * b0 + bW, f))
                o.append(("I", s, S * f + (S - 1 - s) * b0, s * b0 + bW, b0))
                o.append(("W", s, S * f + (S - s) * b0, np.zeros_like(f), bW))
            else:
                o.append(("F", s, s * f, (S - 1 - s) * f + S * b, f))
                o.append(("B", s, S * f + (S - 1 - s) * b, s * b, b))
        return types
    top = {}
    for s in range(S):
        top[gpu[s]] = s
    has_R = [s < top[gpu[s]] for s in range(S)]
    hF = [s * f for s in range(S)]
    hR: dict = {}
    hB: list = [None] * S
    rel_end: dict = {}
    prev = hF[S - 1] + f
    for s in range(S - 1, -1, -1):
        g, start = gpu[s], prev
        if has_R[s]:
            hR[s] = np.maximum(hF[s] + f, rel_end[g])
            start = np.maximum(start, hR[s] + f)
        hB[s] = start
        prev = start + b0
        end = prev + bW
        rel_end[g] = np.maximum(rel_end[g], end) if g in rel_end else end
    zero = np.zeros_like(f)
    tB: list = [None] * S
    tW: list = [None] * S
    tR: dict = {}
    rmax: dict = {}
    for s in range(S):
        g = gpu[s]
        after = rmax.get(g, zero)
        down = b0 + tB[s - 1] if s else zero
        if split:
            tW[s] = after
            tB[s] = np.maximum(down, bW + tW[s])
        else:
            tB[s] = np.maximum(down, after)
        if has_R[s]:
            tR[s] = b0 + tB[s]
            rmax[g] = np.maximum(rmax[g], f + tR[s]) if g in rmax else f + tR[s]
    tF = [None] * S
    nxt = b0 + tB[S - 1]
    for s in range(S - 1, -1, -1):
        tF[s] = np.maximum(nxt, f + tR[s]) if has_R[s] else nxt
        nxt = f + tF[s]
    k0 = "I" if split else "B"
    for s in range(S):
        o = types[gpu[s]]
        o.append(("F", s, hF[s], tF[s], f))
        if has_R[s]:
            o.append(("R", s, hR[s], tR[s], f))
        o.append((k0, s, hB[s], tB[s], b0))
        if split:
            o.append(("W", s, hB[s] + b0, tW[s], bW))
    return types


def _distinct(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)``: one row index per distinct row of ``cols`` (int64, rows x k, small
    non-negative values) and each row's distinct number."""
    M = int(cols.max()) + 1 if cols.size else 1
    if M ** cols.shape[1] < (1 << 62):
        key = np.zeros(cols.shape[0], np.int64)
        for j in range(cols.shape[1]):
            key = key * M + cols[:, j]
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(cols, axis=0, return_index=True, return_inverse=True)
    return first, inv.reshape(-1)


def _column(x, rows: int) -> np.ndarray:
    """``x`` as an int64 array of ``rows`` values (a scalar is repeated)."""
    return x if type(x) is np.ndarray and x.shape == (rows,) else np.full(rows, x, np.int64)


def _gpu_subset(types, inv, m):
    """MW1: max over GPUs and op-type sets ``{head >= h, tail >= q}`` (thresholds at the op
    types' own heads and tails) of ``min head + m * work + min tail``. ``types``: the op types
    of the group's distinct duration tuples (:func:`_op_types` on one row per tuple), ``inv``
    each row's tuple. The sets depend on the durations only: they are formed once per tuple
    (as lines ``a + m w``), then evaluated once per distinct (tuple, ``m``)."""
    n = max(len(t) for t in types)
    rows = int(inv.max()) + 1
    zero = np.zeros(rows, np.int64)
    valid = np.array([[i < len(ts) for i in range(n)] for ts in types], bool)
    H, T, D = (np.array([[_column(ts[i][c], rows) if i < len(ts) else zero
                          for i in range(n)] for ts in types], np.int64).transpose(2, 0, 1)
               for c in (2, 3, 4))
    U = rows
    # type t is in the set of thresholds (head of i, tail of j) iff up[i, t] and late[j, t]
    up = (H[:, :, None, :] >= H[:, :, :, None]) & valid[None, :, None, :]      # (U, P, i, t)
    late = (T[:, :, None, :] >= T[:, :, :, None]) & valid[None, :, None, :]    # (U, P, j, t)
    upi, latei = up.astype(np.int64), late.astype(np.int64)
    w = np.einsum("upit,upjt->upij", upi * D[:, :, None, :], latei)           # set's work
    ok = ((np.einsum("upit,upjt->upij", upi, latei) > 0)
          & (valid[:, :, None] & valid[:, None, :])[None])
    lo_h = np.full(w.shape, _BIG, np.int64)
    lo_t = np.full(w.shape, _BIG, np.int64)
    for t in range(n):                                   # min head, min tail over the set
        sel = up[:, :, :, None, t] & late[:, :, None, :, t]
        np.minimum(lo_h, np.where(sel, H[:, :, None, None, t], _BIG), out=lo_h)
        np.minimum(lo_t, np.where(sel, T[:, :, None, None, t], _BIG), out=lo_t)
    a = lo_h + lo_t
    a = np.where(ok, a, -_BIG).reshape(U, -1)
    w = np.where(ok, w, 0).reshape(U, -1)
    # one evaluation per distinct (duration tuple, m) of the group
    pair, back = _distinct(np.stack([inv, m], 1))
    u, mu = inv[pair], m[pair]
    return (a[u] + mu[:, None] * w[u]).max(-1)[back]


def _memory_slots(stages: list, S: int, split: bool, m, K, f, b, bI, bW) -> np.ndarray:
    """MW7 (finite ``K``) of every row: the maximum over GPUs, evaluated for every GPU at once
    (arrays (rows, P)), round trips by stage group. ``stages[p]``: GPU ``p``'s stages."""
    v = len(stages[0])
    B = f + b
    n = v * m
    rel = bW if split else b
    kk = np.minimum(K, n)
    edge = (kk * (kk - 1) // 2 * (f + rel))[:, None]
    work = (n * B)[:, None]
    lo = np.array([st[0] for st in stages], np.int64)
    if split:   # the drain after the last I (bounds.multi_wave.split_drain)
        work = work + _split_drain(lo, K, n, bI, bW)
    coef = np.array([[S - s for s in st] for st in stages], np.int64)  # (P, v), longest 1st
    trip = (f + bI) if split else B
    Ls = coef[None] * trip[:, None, None] + (bW[:, None, None] if split else 0)
    mm, ff, KK, BB = m[:, None], f[:, None], K[:, None], B[:, None]
    total = mm * Ls.sum(-1) + edge
    x0 = np.zeros_like(total)
    cross = np.broadcast_to(n[:, None], total.shape).copy()
    done = np.zeros(total.shape, bool)
    for k in range(v):                                # longest first
        L = Ls[:, :, k]
        slope = ff * KK + L - BB
        diff0 = (work + x0 * ff) * KK - (total + x0 * BB)
        hit = ~done & (diff0 + mm * slope >= 0)
        cross = np.where(hit, x0 + np.where(diff0 >= 0, 0, -(diff0 // slope)), cross)
        done |= hit
        total = np.where(done, total, total - mm * L)
        x0 = np.where(done, x0, x0 + mm)
    # kept(x): the n - x shortest; suffix sums of the longest-first groups
    suffix = np.concatenate([np.cumsum(Ls[:, :, ::-1], -1)[:, :, ::-1],
                             np.zeros(Ls.shape[:2] + (1,), np.int64)], -1)
    Lpad = np.concatenate([Ls, np.zeros(Ls.shape[:2] + (1,), np.int64)], -1)
    inner = None
    for x in (np.maximum(cross - 1, 0), cross):
        full, part = x // mm, x % mm
        kept = (mm * np.take_along_axis(suffix, full[..., None], -1)[..., 0]
                - part * np.take_along_axis(Lpad, full[..., None], -1)[..., 0])
        val = np.maximum((work + x * ff) * KK, kept + x * BB + edge)
        inner = val if inner is None else np.minimum(inner, val)
    tail = 0 if split else lo[None] * b[:, None]
    return ((lo[None] * ff + tail) * KK + inner).max(-1)


def _split_drain(lo, K, n, bI, bW):
    """:func:`bounds.multi_wave.split_drain` of every row and GPU (rows, P): ``max(0, lo b_I -
    (min(K, n) - 1) b_W)``, ``lo`` the GPUs' lowest stages, ``n = v m``."""
    kk = np.minimum(K, n)[:, None]
    return np.maximum(0, lo[None] * bI[:, None] - (kk - 1) * bW[:, None])


def _split_single_slot(stages: list, S: int, m, K, f, b, bI, bW) -> np.ndarray:
    """MW10 (split, ``2 <= K <= v``) of every row (:func:`bounds.multi_wave.
    split_single_slot_value`): the maximum over GPUs of ``s_1 f + v m u + min_x w + drain``."""
    v = len(stages[0])
    lo = np.array([st[0] for st in stages], np.int64)
    top = np.array([st[-1] for st in stages], np.int64)
    n = ((v - K + 1) * m)[:, None]
    G = (S - top - 1)[None] * (f + bI)[:, None]
    val = (lo[None] * f[:, None] + (v * m * (f + b))[:, None]
           + _min_waste(n, G, f[:, None], m[:, None]) + _split_drain(lo, K, v * m, bI, bW))
    return val.max(-1)


def _first_backward(stages: list, S: int, split: bool, m, K, f, b, bI, bW) -> np.ndarray:
    """MW11 (finite ``K``) of every row (:func:`bounds.multi_wave.first_backward_value`):
    ``max_p [S f + (S - 1 - s_v) b_c + end_p] + v m u - min(K, v m) f``."""
    v = len(stages[0])
    lo = np.array([st[0] for st in stages], np.int64)
    top = np.array([st[-1] for st in stages], np.int64)
    n = v * m
    bc = bI if split else b
    end = _split_drain(lo, K, n, bI, bW) if split else lo[None] * b[:, None]
    val = (S * f)[:, None] + (S - 1 - top)[None] * bc[:, None] + end
    return val.max(-1) + n * (f + b) - np.minimum(K, n) * f


def _first_backward_top(types, U: int, inv, split: bool, m, K, f, bW) -> np.ndarray:
    """MW13 (finite ``K``) of every row (:func:`bounds.multi_wave.first_backward_top_value`):
    ``max_p max_q [h_p + n b_c + max(0, n - K)(f + b_W) + q]``, ``q`` over the tails of GPU
    ``p``'s backward op types but the least, ``n`` = ``m`` times the number of them with tail
    ``>= q``.
    ``types``: :func:`_op_types` of the group's ``U`` distinct duration tuples, ``inv`` each
    row's."""
    bk = "I" if split else "B"
    unit = (f + bW) if split else f
    best = np.full(inv.shape, -_BIG, np.int64)
    for ts in types:
        back = [t for t in ts if t[0] == bk]
        T = np.stack([_column(t[3], U) for t in back], -1)                   # (U, n_b)
        h = _column(max(back, key=lambda t: t[1])[2], U)                     # top stage's head
        bc = _column(back[0][4], U)
        cnt = (T[:, None, :] >= T[:, :, None]).sum(-1)                       # (U, n_b)
        n = cnt[inv] * m[:, None]
        val = (h[inv][:, None] + n * bc[inv][:, None]
               + np.maximum(0, n - K[:, None]) * unit[:, None] + T[inv])
        val = np.where(cnt[inv] < len(back), val, -_BIG)     # H = every stage: MW11
        best = np.maximum(best, val.max(-1))
    return best


def _last_forward(stages: list, S: int, m, K, f, b) -> np.ndarray:
    """MW12 (fused, finite ``K``) of every row (:func:`bounds.multi_wave.last_forward_value`):
    ``max_p [s_1 f + v m u + min_n max(tail_p - min(K + n, v m) b, n f + s_1 b)]`` at the
    candidates of :func:`bounds.multi_wave.last_forward_inner`."""
    v = len(stages[0])
    lo = np.array([st[0] for st in stages], np.int64)
    top = np.array([st[-1] for st in stages], np.int64)
    N = (v * m)[:, None]
    KK, ff, bb = K[:, None], f[:, None], b[:, None]
    A = (S - 1 - top)[None] * ff + S * bb
    c = lo[None] * bb
    hi = np.maximum(0, N - KK)
    cr = np.maximum(A - KK * bb - c, 0) // (bb + ff)
    n = np.minimum(np.stack((np.zeros_like(cr), hi + 0 * cr, cr, cr + 1)), hi)  # candidates
    inner = np.maximum(A - np.minimum(KK + n, N) * bb, n * ff + c).min(0)
    return (lo[None] * ff + N * (ff + bb) + inner).max(-1)


def _on(mask, fn, *cols) -> np.ndarray:
    """``fn`` evaluated on the rows of ``mask`` only, 0 elsewhere (int64, one per row)."""
    sel = slice(None) if mask.all() else np.flatnonzero(mask)
    out = np.zeros(mask.shape, np.int64)
    out[sel] = fn(*(x[sel] for x in cols))
    return out


def _multi_wave_group(r: Rows, P: int, v: int, vshape: bool, split: bool, k1: bool) -> list[Term]:
    S = v * P
    gpu = placement_stage_to_rank(P, v, "vshape" if vshape else "looped")
    stages = [[s for s in range(S) if gpu[s] == p] for p in range(P)]
    one = np.ones_like(r.m)
    m, K, f, b, bI, bW = r.m, r.K, r.f, r.b, r.bI, r.bW
    finite = K > 0
    Kc = np.where(finite, K, 1)
    B = f + b
    fused = not split
    no = one < 0
    terms: list[Term] = [Term("work", one > 0, v * m * B, one, no),
                         Term("critical_path", one > 0,
                              S * f + (S * bI + bW if split else S * b), one, no)]
    # heads, tails and durations of the op types depend on the durations only: built once
    # per distinct duration tuple of the group, ``inv`` each row's
    first, inv = _distinct(np.stack([f, b, bI, bW], 1))
    types = _op_types(r.take(first), S, gpu, k1, split)
    mw2 = (v * m + P - 1) * B                      # MW2, also the base of MW8a
    if fused:
        terms.append(Term("mw_fill_drain", one > 0, mw2, one, no))
        terms.append(Term("mw_last_stage", one > 0, (m + S - 1) * B, one, no))
        if vshape:
            terms.append(Term("mw_vshape_pair", one > 0,
                              S * B + 2 * (m - 1) * np.maximum(f, b), one, no))
    mw1 = _gpu_subset(types, inv, m)
    terms.append(Term("mw_gpu_subset", one > 0, mw1, one, (m == 1) & (K == 1)))
    # MW7, finite K: every GPU at once, arrays (rows, P); on the rows with finite K only
    if finite.any():
        sel = slice(None) if finite.all() else np.flatnonzero(finite)
        num = np.zeros(m.shape, np.int64)
        num[sel] = _memory_slots(stages, S, split, *(x[sel] for x in (m, Kc, f, b, bI, bW)))
        terms.append(Term("mw_memory_slots", finite, num, Kc, no))
    if fused:
        forced = finite & (K < v)
        if forced.any():
            terms.append(Term("mw_forced_remat", forced, mw2 + m * (v - Kc) * f, one, no))
        if vshape and k1:
            terms.append(Term("mw_vshape_forced_remat", one > 0,
                              S * B + 2 * (m - 1) * b + m * f, one, no))
    slot = finite & (K <= v) & ((K == 1) if split else True)
    if slot.any():
        # on the rows where the term applies only
        sel = slice(None) if slot.all() else np.flatnonzero(slot)
        ms, Ks, fs, bs, bIs, bWs, Bs = (x[sel] for x in (m, Kc, f, b, bI, bW, B))
        bc = bIs if split else bs
        last = "I" if split else "B"
        n = ((v - Ks + 1) * ms)[:, None]
        top = np.array([st[-1] for st in stages], np.int64)
        G = (S - top - 1)[None] * (fs + bc)[:, None]
        span = (v * ms * Bs)[:, None] + _min_waste(n, G, fs[:, None], ms[:, None])
        byk = [{(t[0], t[1]): t for t in ts} for ts in types]
        U = first.size
        head = np.stack([_column(byk[p][("F", st[0])][2], U) for p, st in enumerate(stages)], -1)
        tail = np.stack([_column(byk[p][(last, st[0])][3], U) for p, st in enumerate(stages)],
                        -1)
        val = np.zeros(m.shape, np.int64)
        val[sel] = (head[inv[sel]] + span + tail[inv[sel]] - (bWs[:, None] if split else 0)
                    ).max(-1)
        terms.append(Term("mw_single_slot", slot, val, one, no))
    sslot = finite & (K >= 2) & (K <= v) if split else one < 0
    if sslot.any():              # MW10
        terms.append(Term("mw_split_single_slot", sslot, _on(
            sslot, lambda *c: _split_single_slot(stages, S, *c), m, Kc, f, b, bI, bW),
            one, no))
    if finite.any():             # MW11
        terms.append(Term("mw_first_backward", finite, _on(
            finite, lambda *c: _first_backward(stages, S, split, *c), m, Kc, f, b, bI, bW),
            one, no))
    if finite.any():             # MW13
        val13 = np.zeros(m.shape, np.int64)
        sel = slice(None) if finite.all() else np.flatnonzero(finite)
        val13[sel] = _first_backward_top(types, first.size, inv[sel], split, m[sel], Kc[sel], f[sel],
                                         bW[sel])
        terms.append(Term("mw_first_backward_top", finite, val13, one, no))
    if fused and finite.any():   # MW12
        terms.append(Term("mw_last_forward", finite, _on(
            finite, lambda *c: _last_forward(stages, S, *c), m, Kc, f, b), one, no))
    if fused and not vshape:
        case = ~finite | (K >= v * m)
        if case.any():
            terms.append(Term("mw_looped_opt", case,
                              (P - 1 + (v - 1) * np.maximum(m, P) + m) * B, one, case))
    if fused and vshape and v == 2:
        case = ~finite & ((m <= P) | ((f == b) & (m % P == 0)))
        if case.any():
            terms.append(Term("mw_vshape_opt", case, mw1, one, case))
    return terms


# --------------------------------------------------------------------------- the batch
@dataclass
class Group:
    """The terms of the rows ``idx`` (one structure): ``names[j]`` is term ``j``; per row and
    term, ``mask`` (applies), ``num / den`` (reduced); ``first`` the first exact term that
    reaches the bound (-1: none)."""

    idx: np.ndarray
    names: list
    mask: np.ndarray
    num: np.ndarray
    den: np.ndarray
    first: np.ndarray


@dataclass
class Result:
    """Per row: the bound ``num / den`` (reduced) and the theorem id that makes it exact (or
    None, an object array); the terms by group of rows (:class:`Group`), and as per-row lists
    ``(name, num, den)`` in :func:`lower_bound`'s order (:attr:`terms`, built on first use)."""

    num: np.ndarray
    den: np.ndarray
    theorem: np.ndarray
    groups: list

    @cached_property
    def terms(self) -> list:
        out: list = [None] * self.num.shape[0]
        for g in self.groups:
            ml, tnl, tdl = g.mask.tolist(), g.num.tolist(), g.den.tolist()
            J = range(len(g.names))
            for k, row in enumerate(g.idx.tolist()):
                mk, a, d_ = ml[k], tnl[k], tdl[k]
                out[row] = [(g.names[j], a[j], d_[j]) for j in J if mk[j]]
        return out


def lower_bounds(r: Rows) -> Result:
    """:func:`bounds.lower_bound` of every row (rows within :data:`LIMITS`, integer durations,
    no delay)."""
    N = r.P.shape[0]
    theorem = np.full(N, None, dtype=object)
    num = np.zeros(N, np.int64)
    den = np.ones(N, np.int64)
    groups: dict = {}
    single = np.flatnonzero(r.v == 1)
    if single.size:
        groups[("single",)] = single
    multi = np.flatnonzero(r.v > 1)
    if multi.size:
        keys = np.stack([r.P[multi], r.v[multi], r.vshape[multi].astype(np.int64),
                         r.split[multi].astype(np.int64), (r.K[multi] == 1).astype(np.int64)], 1)
        first, inv = _distinct(keys)
        order = np.argsort(inv, kind="stable")
        bounds_ = np.searchsorted(inv[order], np.arange(first.size + 1))
        for g, row in enumerate(first):
            groups[tuple(int(x) for x in keys[row])] = multi[order[bounds_[g]:bounds_[g + 1]]]
    out: list[Group] = []
    for key, idx in groups.items():
        sub = r.take(idx)
        terms = (_single_wave(sub) if key == ("single",) else
                 _multi_wave_group(sub, key[0], key[1], bool(key[2]), bool(key[3]),
                                   bool(key[4])))
        # the maximum over the applicable terms, compared as fractions (den 1 or K)
        bn = np.full(idx.size, -1, np.int64)
        bd = np.ones(idx.size, np.int64)
        for t in terms:
            better = t.mask & (t.num * bd > bn * t.den)
            bn = np.where(better, t.num, bn)
            bd = np.where(better, t.den, bd)
        if (bd != 1).any():
            gcd = np.gcd(bn, bd)
            bn, bd = bn // gcd, bd // gcd
        num[idx], den[idx] = bn, bd
        masks = np.stack([t.mask for t in terms], 1)
        tn = np.stack([t.num for t in terms], 1)
        td = np.stack([t.den for t in terms], 1)
        if (td != 1).any():
            gg = np.gcd(tn, td)
            tn, td = tn // gg, td // gg
        hit = masks & np.stack([t.exact for t in terms], 1) & (tn * bd[:, None]
                                                              == bn[:, None] * td)
        names = [t.name for t in terms]
        first = np.where(hit.any(1), hit.argmax(1), -1)
        if (first >= 0).any():
            ids = np.array([exact_theorem(nm) for nm in names] + [None], dtype=object)
            theorem[idx] = ids[first]
        out.append(Group(idx, names, masks, tn, td, first))
    return Result(num, den, theorem, out)


__all__ = ["LIMITS", "Rows", "Result", "Group", "Term", "TERM_IDS", "lower_bounds", "supported"]
