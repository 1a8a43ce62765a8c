"""Lower bounds on the makespan of single-wave (``v = 1``) schedules (docs/theory.md).

Every bound is given twice: as a sympy expression in the symbols of :mod:`bounds.symbols`
(``*_expr`` functions, the statement of the theorem) and as an exact Fraction evaluation for one
instance (``*_value`` functions, the same formula in Fraction arithmetic; the tests check that
both agree). :func:`terms` is the hook :mod:`bounds.evaluate` calls for ``v = 1``.

Notation (docs/theory.md, section 1): GPU ``p`` holds stage ``p``; ``d = P - p`` stages lie from
``p`` to the last one; ``B = f + b`` is one microbatch's work on one stage; the *window* of GPU
``p`` is ``[p f, T - p b]`` (fused): its first op is a forward that cannot start before the
forward chain reaches it, its last op is a backward that the chain still carries down to
stage 0. Valid for every instance with ``v = 1`` (any ``c >= 0``: a delay only postpones ops).

Theorems (numbering of docs/theory.md):

* **T1 fill-drain** (fused): ``T >= (m + P - 1)(f + b)``; exact when ``K >= min(m, P)``
  (1F1B reaches it), when ``m = 1``, and for every ``K >= 1`` when ``m <= 2 + b/f`` (Theorem 3c:
  the single-group schedule reaches it with one activation per GPU).
* **T2 memory-time** (fused, any ``K``): with ``r`` recomputed pairs on GPU ``p``,
  ``T - p(f+b) >= max(m B + r f, ((m - r) d + r) B / K)``, minimised over integer ``r``.
* **T3 single-slot** (fused, ``K = 1``): ``T >= max_p [p B + min_x W_p(x)]`` with ``x`` pairs kept
  on GPU ``p``, ``G = (d-1) B``, ``c = floor(G/f)``, ``r0 = G - c f``, ``N = m - x`` and
  ``W_p(x) = m B + N f + x G - f min(N, x c) - r0 min(x, max(0, N - x c))``.
  Proven exact for ``P <= 2`` (every ``m, f, b``; :func:`single_slot_exact`); equal to OPT on
  every instance of the checked range and wherever a construction reaches it (both decided by
  :mod:`pipebounds.certify`, not here); *not* exact in general (``P = 3, m = 12, f = 5, b = 3``:
  144 < OPT = 146).
  **Split form** (``K = 1``, split backward): the same with ``B = f + b_I + b_W``,
  ``G = (d-1)(f + b_I)`` and offset ``p (f + b_I)`` (the chain's backward op is ``I``); exact
  for ``P <= 2`` (Theorem 3b, split) and ``m <= 2 + b_I/f`` (Theorem 3c, split).
* **S1 split drain**: ``T >= p f + m b + m f + max(0, p b_I - (min(K, m) - 1) b_W)`` for every
  ``p``; **S2 split first input-gradient**: ``T >= P f + (P - 1) b_I + m b``;
  **S3 split memory-time** (any ``K``): the analogue of T2 with round trip ``d(f + b_I) + b_W``.
* **MW11 first backward** (split, ``K < m``; the multi-wave theorem at ``v = 1``, evaluated by
  :func:`bounds.multi_wave.v1_terms`, which imports this module):
  ``T >= P f + (P - 1 - p) b_I + m u - K f + max(0, p b_I - (K - 1) b_W)`` for every ``p``.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Optional

from schedules.instance import Instance

from .theorems import SINGLE, term_exact, theorem

if TYPE_CHECKING:
    import sympy as sp

Term = tuple[str, Fraction, bool]

SYMBOLIC_NAMES = ("P", "m", "K", "v", "f", "b", "b_I", "b_W", "p", "x", "sp")
"""Names of :mod:`bounds.symbols` readable as attributes of the formula modules (lazily)."""


def symbolic_getattr(module: str):
    """A module ``__getattr__`` giving the sympy symbols of :mod:`bounds.symbols` (``P, m, K, v,
    f, b, b_I, b_W``, ``p`` the GPU a per-GPU bound is stated for, ``x`` a number of activations)
    and ``sp`` (sympy) as attributes of ``module``, imported on first use: sympy loads only
    where expressions are built."""
    def __getattr__(name: str):
        if name in SYMBOLIC_NAMES:
            from . import symbols

            return getattr(symbols, name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


__getattr__ = symbolic_getattr(__name__)


# --------------------------------------------------------------------------- T1 fill-drain
def fill_drain_expr() -> sp.Expr:
    """T1: ``(m + P - 1)(f + b)`` (fused backward, any ``K``).

    Proof: GPU ``P-1`` starts no earlier than ``(P-1) f``, runs ``m (f + b)`` of work, and its
    last op is a backward followed by the chain of ``P - 1`` backwards down to stage 0.
    """
    from .symbols import P, b, f, m

    return (m + P - 1) * (f + b)


def fill_drain_exact(inst: Instance) -> bool:
    """T1's exact case: memory does not bind (:func:`nonbinding_memory`, 1F1B reaches T1) or
    ``m <= 2 + b/f`` (Theorem 3c, :func:`single_group_exact`)."""
    return nonbinding_memory(inst) or single_group_exact(inst)


def two_gpu_exact(inst: Instance) -> bool:
    """Theorem 3b's case: ``v = 1``, ``K = 1``, ``P <= 2`` (the explicit two-GPU schedule
    reaches T3, fused or split; ``P = 1`` is the chain)."""
    return inst.v == 1 and inst.K == 1 and inst.P <= 2


@theorem("T1", "fill-drain", SINGLE + "A.4 Theorem 1 (fill-drain) and 1F1B",
         terms=("fill_drain",), exact=fill_drain_exact)
@theorem("T3c", "one activation suffices for m <= 2 + b/f (construction)",
         SINGLE + "A.4 Theorem 1 (fill-drain) and 1F1B", exact=lambda i: single_group_exact(i),
         lemma=True)
def fill_drain_value(inst: Instance) -> Fraction:
    """T1 evaluated exactly: ``(m + P - 1)(f + b)``; the one exact implementation (the array
    twin is :mod:`bounds.batch`).

    >>> fill_drain_value(Instance(P=4, m=8, f=1, b=2))
    Fraction(33, 1)
    """
    return (inst.m + inst.P - 1) * (inst.f + inst.b)


# --------------------------------------------------------------------------- T2 memory-time
def slot_edge(k, f_, b_release):
    """The slot-time a GPU cannot use at the edges of its window (the *slot-edge lemma*,
    docs/theory.md section 4): ``k (k - 1) / 2 * (f + b_release)``, with ``k = min(K, n)`` for
    ``n`` activations. Stores are ``F``/``R`` starts (ops of length ``f``) and releases are ends
    of ops of length ``b_release`` (``B``, split ``W``): the ``i``-th store of the window starts
    ``(i-1) f`` after it opens and the ``i``-th last release ends ``(i-1) b_release`` before it
    closes, so at most ``i`` activations are live in those stretches. Works for numbers and
    sympy expressions alike (exact: Fractions for numbers)."""
    sym = sys.modules.get("sympy")  # a sympy argument means sympy is loaded
    if sym is not None and any(isinstance(a, sym.Basic) for a in (k, f_, b_release)):
        return sym.Rational(1, 2) * k * (k - 1) * (f_ + b_release)
    return (k * (k - 1) // 2) * (f_ + b_release)  # k (k - 1) is even: exact for ints and Fractions


def memory_time_gpu_expr() -> sp.Expr:
    """T2 for GPU ``p`` (fused, any ``K``):
    ``p B + min_r max(m B + r f, (((m-r) d + r) B + E) / K)`` with the slot edge
    ``E = k(k-1)/2 B``, ``k = min(K, m)``.

    The minimum over integer ``r`` in ``[0, m]`` of the max of an increasing and a decreasing
    linear function is reached at ``floor`` or ``ceiling`` of their crossing ``r*``
    (clamped to ``[0, m]``)::

        r* = (m B (d - K) + E) / (K f + (d - 1) B)

    Proof: in the window of length ``T - p B`` GPU ``p`` runs its work ``m B + r f`` and holds
    ``K`` slots, minus the edges ``E`` (:func:`slot_edge`); a kept activation is live for its
    whole round trip ``d B``, a recomputed one from ``R`` to ``B``, at least ``B``.
    """
    from .symbols import K, P, b, f, m, p, sp

    Bx = f + b
    d = P - p
    k = sp.Min(K, m)
    E = slot_edge(k, f, b)
    rstar = (m * Bx * (d - K) + E) / (K * f + (d - 1) * Bx)
    lo = sp.Max(0, sp.Min(m, sp.floor(rstar)))
    hi = sp.Max(0, sp.Min(m, sp.ceiling(rstar)))

    def val(r):
        return sp.Max(m * Bx + r * f, (((m - r) * d + r) * Bx + E) / K)

    return p * Bx + sp.Min(val(lo), val(hi))


def _memory_time_min(m_: int, d: int, K_: int, f_: Fraction, work_B: Fraction,
                     hold_kept: Fraction, hold_remat: Fraction,
                     edge: Fraction = Fraction(0)) -> Fraction:
    """``min_r max(m work_B + r f, ((m - r) hold_kept + r hold_remat + edge) / K)`` over
    integer r, exactly (durations may be ints or Fractions; the result is a Fraction).
    ``O(1)``: the minimum is at the floor or ceiling of the crossing ``r*``."""
    denom = K_ * f_ + hold_kept - hold_remat
    num = m_ * (hold_kept - K_ * work_B) + edge
    if num <= 0:
        cands: tuple[int, ...] = (0,)
    else:
        lo = num // denom
        cands = (max(0, min(m_, lo)), max(0, min(m_, lo + (lo * denom != num))))
    best = None
    for r in cands:  # max(work, slots / K) as a numerator over K: one Fraction in the end
        val = max((m_ * work_B + r * f_) * K_, (m_ - r) * hold_kept + r * hold_remat + edge)
        if best is None or val < best:
            best = val
    return Fraction(best) / K_


def memory_time_gpu_value(inst: Instance, gpu: int) -> Fraction:
    """T2 for one GPU, exactly (fused)."""
    Bx = inst.f + inst.b
    d = inst.P - gpu
    edge = slot_edge(min(inst.K, inst.m), inst.f, inst.b)
    return gpu * Bx + _memory_time_min(inst.m, d, inst.K, inst.f, Bx, d * Bx, Bx, edge)


@theorem("T2", "memory-time", SINGLE + "A.5 Theorem 2 (memory-time, any `K`)",
         terms=("memory_time",))
def memory_time_value(inst: Instance) -> Fraction:
    """T2: the maximum over GPUs (fused, finite ``K``).

    >>> memory_time_value(Instance(P=4, m=8, K=2, f=1, b=2))
    Fraction(33, 1)
    """
    return max(memory_time_gpu_value(inst, q) for q in range(inst.P))


# --------------------------------------------------------------------------- T3 single slot
def _chain_op_symbol(split: bool) -> sp.Expr:
    """The backward op that carries the chain down to stage 0: ``B`` (``b``) or ``I`` (``b_I``)."""
    from .symbols import b, b_I

    return b_I if split else b


def single_slot_W_expr(xv=None, split: bool = False) -> sp.Expr:
    """``W_p(x)`` of T3: the least window length of GPU ``p`` when it keeps ``x`` activations
    (``xv``; default the symbol ``x``).

    ``N = m - x`` forwards are recomputed later; each kept activation's hold has a gap of
    ``G = (d-1)(f + b_c)`` (forward chain up and backward chain down; ``b_c = b`` fused,
    ``b_I`` split) that the GPU can fill only with forwards that store nothing; ``c = floor(G/f)``
    of them fit without lengthening the hold, one more lengthens it by ``f - r0`` only.
    ``B`` is one pair's work on the GPU, ``f + b`` (split ``f + b_I + b_W``).
    """
    from .symbols import P, b, b_I, b_W, f, m, p, sp, x

    if xv is None:
        xv = x
    Bx = f + b_I + b_W if split else f + b
    d = P - p
    G = (d - 1) * (f + _chain_op_symbol(split))
    c = sp.floor(G / f)
    r0 = G - c * f
    N = m - xv
    return (m * Bx + N * f + xv * G - f * sp.Min(N, xv * c)
            - r0 * sp.Min(xv, sp.Max(0, N - xv * c)))


def single_slot_gpu_expr(split: bool = False) -> sp.Expr:
    """T3 for GPU ``p``: ``p (f + b_c) + min_x W_p(x)`` (``b_c = b`` fused, ``b_I`` split: the
    window of GPU ``p`` starts at ``p f`` and its last chain op is followed by ``p`` more).

    ``W_p`` is piecewise linear in ``x`` (slope ``-f`` up to ``m/(c+2)``, then ``G - (f - r0)(c+1)``
    up to ``m/(c+1)``, then ``G >= 0``), so its minimum over integers is at the floor or ceiling
    of one of the two breakpoints.
    """
    from .symbols import P, f, m, p, sp

    bc = _chain_op_symbol(split)
    d = P - p
    c = sp.floor((d - 1) * (f + bc) / f)
    cands = [sp.floor(m / (c + 2)), sp.ceiling(m / (c + 2)), sp.floor(m / (c + 1)),
             sp.ceiling(m / (c + 1))]
    return p * (f + bc) + sp.Min(*[single_slot_W_expr(cx, split) for cx in cands])


def single_slot_waste(n, G, f_, x_):
    """``W_p(x) - n B`` for ``n`` pairs and gap ``G`` (``(d-1)(f + b_c)``): the recompute time
    plus the idle inside holds when ``x_`` of the ``n`` pairs are kept (Theorem 3). Exact for
    ints (integer time units, as the constructions use it) and Fractions alike (``//`` is an
    exact floor).
    """
    c = G // f_
    r0 = G - c * f_
    N = n - x_
    return N * f_ + x_ * G - f_ * min(N, x_ * c) - r0 * min(x_, max(0, N - x_ * c))


def _single_slot_W(m_: int, d: int, f_: Fraction, b_: Fraction, x_: int,
                   b_chain: Optional[Fraction] = None) -> Fraction:
    """``W_p(x)`` with ``d`` stages from the GPU to the last, ``B = f + b`` (split: ``b`` is
    ``b_I + b_W``) and the chain's backward op ``b_chain`` (``b`` fused, ``b_I`` split)."""
    Bx = f_ + b_
    bc = b_ if b_chain is None else b_chain
    return m_ * Bx + single_slot_waste(m_, (d - 1) * (f_ + bc), f_, x_)


def _chain_op(inst: Instance) -> Fraction:
    return inst.b_I if inst.split else inst.b


def single_slot_choice(inst: Instance, gpu: int) -> tuple[int, Fraction]:
    """``(x, W)``: the number of activations GPU ``gpu`` keeps in T3's minimum, and ``W``."""
    d = inst.P - gpu
    bc = _chain_op(inst)
    c = ((d - 1) * (inst.f + bc)) // inst.f
    m_ = inst.m
    cands = sorted({m_ // (c + 2), -(-m_ // (c + 2)), m_ // (c + 1), -(-m_ // (c + 1))})
    best = min((_single_slot_W(m_, d, inst.f, inst.b, xx, bc), xx) for xx in cands)
    return best[1], best[0]


def single_slot_gpu_value(inst: Instance, gpu: int) -> Fraction:
    """T3 for one GPU, exactly."""
    return gpu * (inst.f + _chain_op(inst)) + single_slot_choice(inst, gpu)[1]


@theorem("T3", "single slot (fused and split forms)",
         SINGLE + "A.6 Theorem 3 (single slot, `K = 1`)", terms=("single_slot",),
         exact=lambda i: single_slot_exact(i))
@theorem("T3b", "T3 exact for P <= 2 (construction)",
         SINGLE + "A.6 Theorem 3 (single slot, `K = 1`)", exact=two_gpu_exact, lemma=True)
def single_slot_value(inst: Instance) -> Fraction:
    """T3: ``max_p [p (f + b_c) + min_x W_p(x)]`` (``K = 1``; ``b_c = b`` fused, ``b_I`` split).

    >>> single_slot_value(Instance(P=3, m=4, K=1, f=3, b=2))
    Fraction(34, 1)
    >>> single_slot_value(Instance(P=3, m=4, K=1, f=1, b_I=1, b_W=1))
    Fraction(17, 1)
    """
    return max(single_slot_gpu_value(inst, q) for q in range(inst.P))


# --------------------------------------------------------------------------- split backward
def split_drain_gpu_expr() -> sp.Expr:
    """S1 for GPU ``p``: ``p f + m (f + b_I + b_W) + max(0, p b_I - (min(K, m) - 1) b_W)``.

    Proof: GPU ``p`` starts at ``p f`` or later. After its last ``I(j, p)`` only ``W`` ops can
    follow on it, each releasing an activation live when that ``I`` ended, so at most
    ``min(K, m)`` of them; and ``I(j, p)`` is followed by the chain ``I(j, p-1) ... I(j, 0),
    W(j, 0)`` of length ``p b_I + b_W``. (``K = oo`` reads ``min(K, m) = m``.)
    """
    from .symbols import K, b_I, b_W, f, m, p, sp

    return (p * f + m * (f + b_I + b_W)
            + sp.Max(0, p * b_I - (sp.Min(K, m) - 1) * b_W))


@theorem("S1", "split drain", SINGLE + "A.7 Split backward (`I` + `W`)", terms=("split_drain",))
def split_drain_value(inst: Instance) -> Fraction:
    """S1, maximum over GPUs (reached at ``p = P - 1``).

    >>> split_drain_value(Instance(P=4, m=8, K=4, f=1, b_I=1, b_W=1))
    Fraction(27, 1)
    """
    keep = inst.m if inst.K is None else min(inst.K, inst.m)
    work = inst.m * (inst.f + inst.b)
    # convex in q (a linear function plus the max of two), so the maximum is at q = 0 or P - 1
    q = inst.P - 1
    return max(work, q * inst.f + work + max(0, q * inst.b_I - (keep - 1) * inst.b_W))


def input_drain(A, k: int, n_max: int, f_, b_W_):
    """The least time a GPU still needs after its last input-gradient op ends, beyond the
    ``b_W`` of one ``W`` (S1's drain, generalised to backward recomputation: docs/theory.md
    A.11): ``min_{1 <= n <= n_max} max(A - (n-1) b_W, max(0, n - k) f)``.

    ``A + b_W`` is the tail of that last ``I`` (S1: ``A = p b_I``), ``n`` the number of ``W`` ops
    the GPU runs after it and ``k`` the pairs live just after it (``min(K, m)``; 1 at ``K = 1``).
    Each ``W`` after the last ``I`` releases a pair live at the ``I``'s end or stored again
    after it by a backward ``R`` (``f``), so at least ``n - k`` of those run there. Without
    backward recomputation ``n <= k`` and the value is ``max(0, A - (min(k, n_max) - 1) b_W)``.
    The first argument falls and the second rises with ``n``: the minimum is at ``n = min(k,
    n_max)`` or at the floor or ceiling of their crossing ``(A + b_W + k f) / (b_W + f)``.

    >>> input_drain(6, 2, 3, 3, 1)   # P = 3, m = 3, K = 2, f = 3, b_I = 3, b_W = 1: GPU 2
    4
    """
    k0 = max(1, min(k, n_max))
    cands = {k0, n_max}
    if n_max > k0:
        cross = (A + b_W_ + k * f_) / (b_W_ + f_)
        lo = int(cross // 1)
        cands.update(x for x in (lo, lo + 1) if k0 <= x <= n_max)
    return min(max(A - (n - 1) * b_W_, max(0, n - k) * f_) for n in cands)


def split_first_input_expr() -> sp.Expr:
    """S2: ``P f + (P - 1) b_I + m (b_I + b_W)``.

    Proof: GPU 0's first input-gradient op waits for one whole forward chain and ``P - 1``
    input-gradient ops; after it starts GPU 0 still runs all ``m`` of its ``I`` and ``W`` ops.
    """
    from .symbols import P, b_I, b_W, f, m

    return P * f + (P - 1) * b_I + m * (b_I + b_W)


@theorem("S2", "split first input-gradient", SINGLE + "A.7 Split backward (`I` + `W`)",
         terms=("split_first_input",))
def split_first_input_value(inst: Instance) -> Fraction:
    """S2 evaluated exactly: ``P f + (P - 1) b_I + m b``."""
    return inst.P * inst.f + (inst.P - 1) * inst.b_I + inst.m * inst.b


def split_memory_time_gpu_expr() -> sp.Expr:
    """S3 for GPU ``p`` (split, any ``K``): ``p f + min_r max(m B + r f, ((m-r) H + r B + E)/K)``
    with ``H = d (f + b_I) + b_W`` the least live time of a kept activation (``F`` to ``W``),
    ``B = f + b_I + b_W`` that of a recomputed one (``R`` to ``W``) and the slot edge
    ``E = k(k-1)/2 (f + b_W)``, ``k = min(K, m)`` (releases are ``W`` ops). The window is
    ``[p f, T]`` (a ``W`` needs no drain)."""
    from .symbols import K, P, b_I, b_W, f, m, p, sp

    Bx = f + b_I + b_W
    d = P - p
    H = d * (f + b_I) + b_W
    k = sp.Min(K, m)
    E = slot_edge(k, f, b_W)
    rstar = (m * (H - K * Bx) + E) / (K * f + H - Bx)
    lo = sp.Max(0, sp.Min(m, sp.floor(rstar)))
    hi = sp.Max(0, sp.Min(m, sp.ceiling(rstar)))

    def val(r):
        return sp.Max(m * Bx + r * f, ((m - r) * H + r * Bx + E) / K)

    return p * f + sp.Min(val(lo), val(hi))


@theorem("S3", "split memory-time", SINGLE + "A.7 Split backward (`I` + `W`)",
         terms=("split_memory_time",))
def split_memory_time_value(inst: Instance, release=None) -> Fraction:
    """S3, the maximum over GPUs of :func:`split_memory_time_gpu_expr` evaluated exactly.
    ``release``: the shortest op that can end a hold (default ``b_W``; with backward
    recomputation a hold may end with an ``I``, so S3r passes ``min(b_I, b_W)``:
    docs/theory.md A.11)."""
    Bx = inst.f + inst.b
    edge = slot_edge(min(inst.K, inst.m), inst.f, inst.b_W if release is None else release)
    out = Fraction(0)
    for q in range(inst.P):
        d = inst.P - q
        H = d * (inst.f + inst.b_I) + inst.b_W
        out = max(out, q * inst.f + _memory_time_min(inst.m, d, inst.K, inst.f, Bx, H, Bx, edge))
    return out


# --------------------------------------------------------------------------- S4 window fill
def _window_fill_twice(m_: int, r: int, f_, A, g):
    """``2 max(r f, A + N(r))`` of S4 (:func:`split_window_fill_gpu_value`): ``N(r)`` the dead
    time the ``n = m - 2r - 2`` windows without an ``R`` need (``n g / min(2, n)``, 0 when
    ``n <= 0`` or ``g <= 0``), doubled so that it stays an integer for integer durations."""
    n = m_ - 2 * r - 2
    need = 0 if g <= 0 or n <= 0 else (2 * g if n == 1 else n * g)
    return max(2 * r * f_, 2 * A + need)


def window_fill_choices(m_: int, f_, A, g) -> set[int]:
    """The ``r`` at which S4's minimum over ``0 <= r <= m`` is reached (a superset): the
    function is the max of ``2 r f`` (increasing) and ``2A + N(r)`` (non-increasing: linear
    with slope ``-2g`` while ``n >= 2``, i.e. ``r <= R1 = floor((m - 4)/2)``, then ``2A + 2g``
    at ``n = 1`` and ``2A`` from ``n <= 0`` on, which starts at ``R1 + 1`` or ``R1 + 2``). So
    the minimum is at ``0``, at ``R1``, at the floor or ceiling of the crossing
    ``r* = (2A + (m - 2) g) / (2 (f + g))`` inside ``[0, R1]``, or at ``R1 + 1, R1 + 2``."""
    R1 = (m_ - 4) // 2
    cands = {0, R1, R1 + 1, R1 + 2}
    if g > 0 and R1 >= 0:
        num, den = 2 * A + (m_ - 2) * g, 2 * (f_ + g)
        lo = num // den
        cands.update(max(0, min(R1, x)) for x in (lo, lo + 1))
    return {r for r in cands if 0 <= r <= m_}


def split_window_fill_gpu_value(inst: Instance, gpu: int, lag_extra=0) -> Fraction:
    """S4 for GPU ``p`` (split, ``K = 2``, ``m >= 2``; docs/theory.md A.7):

    ``T >= p f + m u + min_{0 <= r <= m} max(r f, A + N(r)) + max(0, p b_I - b_W)``

    with ``d = P - p``, the lag ``L = (d - 1)(f + b_I)``, ``u = f + b_I + b_W``,
    ``g = L - u``, ``A = max(0, L - f)`` and ``N(r) = n g / min(2, n)`` for
    ``n = m - 2r - 2 > 0`` and ``g > 0`` (else 0).

    Proof (docs/theory.md A.7, S4): ``T = p f + m u + D`` with ``D`` the GPU's dead time (free
    forwards and idle, ``D >= r f`` for ``r`` recomputed pairs). Before the GPU's first ``I`` at
    most two ops store, so ``D >= A`` there. A kept pair's window (from its ``F`` to its ``I``,
    at least ``L``) holds, besides dead time, at most ``u`` of the other slot's work unless it
    contains an ``R``; two windows meet only in dead time, and each ``R`` lies in one window. So
    at least ``n`` windows that begin after the first ``I`` each need ``g`` of dead time, and
    each dead instant serves at most ``min(2, n)`` of them. All that dead time precedes the
    GPU's last ``I``, after which S1's drain follows (at most two ``W`` ops, and the chain
    ``p b_I + b_W``).

    ``lag_extra``: added to ``L`` (a planted error for the checks: a lag one unit too long is
    not a bound any more).

    >>> split_window_fill_gpu_value(Instance(P=3, m=9, K=2, f=1, b_I=1, b_W=1), 0)
    Fraction(31, 1)
    """
    if not inst.split or inst.K != 2 or inst.m < 2:
        raise ValueError("S4 is stated for split backward, K = 2, m >= 2")
    f_, m_ = inst.f, inst.m
    L = (inst.P - gpu - 1) * (f_ + inst.b_I) + lag_extra
    u = f_ + inst.b_I + inst.b_W
    g = L - u
    A = max(0, L - f_)
    best = min(_window_fill_twice(m_, r, f_, A, g) for r in window_fill_choices(m_, f_, A, g))
    return gpu * f_ + m_ * u + Fraction(best) / 2 + max(0, gpu * inst.b_I - inst.b_W)


@theorem("S4", "split window fill (K = 2)", SINGLE + "A.7 Split backward (`I` + `W`)",
         terms=("split_window_fill",))
def split_window_fill_value(inst: Instance) -> Fraction:
    """S4: the maximum over GPUs of :func:`split_window_fill_gpu_value` (split, ``K = 2``).

    >>> split_window_fill_value(Instance(P=3, m=8, K=2, f=2, b_I=1, b_W=1))
    Fraction(38, 1)
    """
    return max(split_window_fill_gpu_value(inst, q) for q in range(inst.P))


# --------------------------------------------------------------------------- exactness
def nonbinding_memory(inst: Instance) -> bool:
    """``K >= min(m, P)`` (or unconstrained): T1 is the optimum (1F1B reaches it)."""
    return inst.K is None or inst.K >= min(inst.m, inst.P)


def single_group_exact(inst: Instance) -> bool:
    """Theorem 3c: fused, ``v = 1``, ``m <= 2 + b/f`` (i.e. ``(m - 2) f <= b``): T1 is the
    optimum for every ``K >= 1``; the single-group schedule (one kept microbatch per GPU, the
    others forwarded freely inside its hold, then recomputed one at a time) reaches it with one
    activation per GPU (docs/theory.md, section 5)."""
    return not inst.split and inst.v == 1 and not inst.c and (inst.m - 2) * inst.f <= inst.b


def single_group_split_exact(inst: Instance) -> bool:
    """Theorem 3c, split form: split backward, ``v = 1``, ``K = 1``, ``m <= 2 + b_I/f``: T3's
    split form is the optimum, ``(P-1)(f + b_I) + m (f + b_I + b_W)``, reached by the
    single-group schedule (docs/theory.md, section 6)."""
    return (inst.split and inst.v == 1 and inst.K == 1 and not inst.c
            and (inst.m - 2) * inst.f <= inst.b_I)


def single_slot_exact(inst: Instance) -> bool:
    """T3 (fused or split form) is *proven* equal to the optimum of ``inst`` by a theorem (a pure
    condition, no search): ``P <= 2`` at every size (Theorem 3b, docs/theory.md: the explicit
    two-GPU schedule reaches it; ``P = 1`` is the chain), or split with ``m <= 2 + b_I/f``
    (Theorem 3c, split form; fused, Theorem 3c makes T1 exact). T3 is *not* exact in general
    (``P = 3, m = 12, f = 5, b = 3``: T3 = 144 < OPT = 146). Exactness on the exhaustively
    checked range, by a table row or by a certificate schedule is decided above the bounds, by
    :mod:`pipebounds.certify`.

    >>> single_slot_exact(Instance(P=2, m=10, K=1, f=1, b=2))
    True
    >>> single_slot_exact(Instance(P=3, m=10, K=1, f=1, b=2))  # a certificate, not a theorem
    False
    """
    if inst.K != 1 or inst.c or inst.v != 1:
        return False
    return inst.P <= 2 or single_group_split_exact(inst)


# --------------------------------------------------------------------------- T3d coupled slot
def pour_waste(f_, y, classes):
    """``min sum_i max(0, G_i - a_i f)`` over integers ``a_i >= 0`` with ``sum a_i <= y``, for
    holds given as ``classes = [(G, count), ...]`` (``G >= 0``): Lemma L5 with several gaps.
    The saving of a hold's ``t``-th forward is ``f`` for ``t < floor(G/f)``, then ``G mod f``,
    then 0 (non-increasing), so the ``y`` largest savings over all holds are the best choice:
    all the ``f`` savings first, then the remainders from the largest down. Exact for ints and
    Fractions; ``O(len(classes))``."""
    total = 0
    n_full = 0
    rests = []
    for G, cnt in classes:
        if cnt <= 0:
            continue
        k = G // f_
        total += cnt * G
        n_full += cnt * k
        if G - k * f_ > 0:
            rests.append((G - k * f_, cnt))
    take = min(y, n_full)
    save = f_ * take
    left = y - take
    for r, cnt in sorted(rests, reverse=True):
        if left <= 0:
            break
        t = min(left, cnt)
        save += r * t
        left -= t
    return total - save


def _breakpoint_min(n, G, f_, xmax):
    """``min_{0 <= x <= xmax} single_slot_waste(n, G, f, x)`` at the ends and the floors and
    ceilings of the breakpoints ``n/(κ+2)``, ``n/(κ+1)`` (Lemma L6: convex, piecewise linear)."""
    c = G // f_
    cands = {0, xmax, n // (c + 2), -(-n // (c + 2)), n // (c + 1), -(-n // (c + 1))}
    return min(single_slot_waste(n, G, f_, max(0, min(xmax, xx))) for xx in cands)


def single_slot_minus(inst: Instance, gpu: int) -> Optional[Fraction]:
    """``gpu u + min_x Λ⁻(x)``: T3's term of GPU ``gpu`` when one of its free forwards lies in
    no kept hold (``sum a_i <= y - 1``; needs ``m >= 1`` free forward, so ``x <= m - 1``):
    ``Λ⁻(x) = m u + f + waste(m - 1, G, f, x)`` (fused, ``K = 1``). None when ``m = 1``."""
    m_ = inst.m
    if m_ < 2:
        return None
    u_ = inst.f + inst.b
    G = (inst.P - gpu - 1) * u_
    return gpu * u_ + m_ * u_ + inst.f + _breakpoint_min(m_ - 1, G, inst.f, m_ - 1)


def _lam(m_, u_, f_, x_, y_budget, classes):
    return m_ * u_ + (m_ - x_) * f_ + pour_waste(f_, y_budget, classes)


def _level_set(m_, u_, f_, G, base, cap):
    """The ``x`` in ``[1, m]`` with ``base + Λ(x) < cap`` (T3's ``Λ`` of a GPU with gap ``G``):
    an interval, ``Λ`` being convex (L6's slopes ``-f <= ρ(κ+2) - f <= G``); walked outward
    from the minimiser."""
    best = min(range(1, m_ + 1) if m_ <= 8 else
               {max(1, min(m_, xx)) for xx in (1, m_, m_ // (G // f_ + 2),
                                                 -(-m_ // (G // f_ + 2)), m_ // (G // f_ + 1),
                                                 -(-m_ // (G // f_ + 1)))},
               key=lambda xx: _lam(m_, u_, f_, xx, m_ - xx, [(G, xx)]))
    out = []
    for step in (-1, 1):
        xx = best if step == -1 else best + 1
        while 1 <= xx <= m_ and base + _lam(m_, u_, f_, xx, m_ - xx, [(G, xx)]) < cap:
            out.append(xx)
            xx += step
    return out


def coupled_pair_value(inst: Instance, gpu: int, t3: Optional[Fraction] = None,
                       minus: Optional[tuple] = None) -> Fraction:
    """T3d for the adjacent GPUs ``p = gpu`` and ``q = gpu + 1`` (fused, ``K = 1``, ``v = 1``,
    ``m >= 2``; docs/theory.md, A.6 Theorem 3d): the least of its three cases,

    * p's first op is a free forward: ``max(p u + min Λ⁻_p, q u + min Λ_q)``;
    * p's first op is a kept ``F(k, p)`` and ``F(k, q)`` is a free forward in no kept hold of
      ``q``: ``max(p u + min Λ_p, q u + min Λ⁻_q)``;
    * ``F(k, p)`` kept and ``F(k, q)`` in a kept hold of ``q`` whose smallest number of free
      forwards is ``α``: ``min_α max(p u + Π(α), q u + Θ(α))`` with
      ``Π(α) = min_x [m u + y f + pour(x - 1 holds of gap G_p, one of gap max(G_p, u + α f); y)]``
      and ``Θ(α) = min_{x: x α <= y} [m u + y f + g + pour(x - 1 holds of gap g; y - x α)]``,
      ``g = max(0, G_q - α f)``.

    The third case is evaluated only below the least of the first two (``cap``): the minimum of
    valid bounds with any cap not above a valid bound is still a valid bound. ``minus``: the
    values of :func:`single_slot_minus` for ``p`` and ``q`` when already computed."""
    f_, b_, m_, P_ = inst.f, inst.b, inst.m, inst.P
    u_ = f_ + b_
    p_, q_ = gpu, gpu + 1
    Gp, Gq = (P_ - p_ - 1) * u_, (P_ - q_ - 1) * u_
    tp = single_slot_gpu_value(inst, p_)
    tq = single_slot_gpu_value(inst, q_)
    mp, mq = minus if minus is not None else (single_slot_minus(inst, p_),
                                              single_slot_minus(inst, q_))
    assert mp is not None and mq is not None
    cap = min(max(mp, tq), max(tp, mq))
    if t3 is not None and cap <= t3:
        return cap
    Xp = _level_set(m_, u_, f_, Gp, p_ * u_, cap)
    Xq = _level_set(m_, u_, f_, Gq, q_ * u_, cap)
    best = cap
    for alpha in range(m_):
        G1 = max(Gp, u_ + alpha * f_)
        pv = min((p_ * u_ + _lam(m_, u_, f_, xx, m_ - xx, [(Gp, xx - 1), (G1, 1)])
                  for xx in Xp), default=cap)
        if pv >= best:
            break  # Π is non-decreasing in α: no later α goes below ``best``
        g = max(0, Gq - alpha * f_)
        qv = min((q_ * u_ + _lam(m_, u_, f_, xx, m_ - xx - xx * alpha, [(g, xx - 1)]) + g
                  for xx in Xq if xx * alpha <= m_ - xx), default=cap)
        best = min(best, max(pv, qv))
    return best


def coupled_gate(inst: Instance, gpu: int, t3: Fraction) -> bool:
    """Whether the pair ``(gpu, gpu + 1)`` can raise T3d above T3: both first cases above T3
    (T3d's pair value is at most their least, and ``q u + min Λ_q``, ``p u + min Λ_p`` are at
    most T3), i.e. ``p u + min Λ⁻_p > T3`` and ``q u + min Λ⁻_q > T3``."""
    mp, mq = single_slot_minus(inst, gpu), single_slot_minus(inst, gpu + 1)
    if mp is None or mq is None:
        return False
    return mp > t3 and mq > t3


@theorem("T3d", "coupled single slot (adjacent GPUs through the first hold)",
         SINGLE + "A.6 Theorem 3 (single slot, `K = 1`)", terms=("single_slot_coupled",))
def coupled_slot_value(inst: Instance, t3: Optional[Fraction] = None) -> Fraction:
    """T3d (fused, ``K = 1``, ``v = 1``): ``max(T3, max_p pair(p, p + 1))``, the pair value of
    :func:`coupled_pair_value` over the adjacent GPUs where :func:`coupled_gate` holds
    (``t3``: T3's value when already computed).

    >>> coupled_slot_value(Instance(P=3, m=12, K=1, f=5, b=3))
    Fraction(146, 1)
    >>> coupled_slot_value(Instance(P=3, m=4, K=1, f=3, b=2))
    Fraction(34, 1)
    """
    if inst.split or inst.K != 1 or inst.v != 1:
        raise ValueError("T3d is stated for fused backward, K = 1, v = 1")
    if t3 is None:
        t3 = single_slot_value(inst)
    out = t3
    if inst.m < 2:
        return out
    minus = [single_slot_minus(inst, g) for g in range(inst.P)]
    for q in range(inst.P - 1):
        if minus[q] > t3 and minus[q + 1] > t3:  # coupled_gate
            out = max(out, coupled_pair_value(inst, q, t3, (minus[q], minus[q + 1])))
    return out


# --------------------------------------------------------------------------- the hook
def terms(inst: Instance) -> list[Term]:
    """The single-wave terms for ``inst`` (``v = 1``): ``(name, exact value, exact?)``.

    ``exact`` is True only where a theorem proves the term equal to the optimum (a pure
    condition, the exact case registered in :mod:`bounds.theorems`:
    :func:`~bounds.theorems.term_exact`): T1 when memory does not bind (Theorem 1 + 1F1B) or
    ``m <= 2 + b/f`` (Theorem 3c), T3 where :func:`single_slot_exact` holds (Theorems 3b, 3c
    split); for ``m = 1`` the chain term (basic) is exact. :func:`bounds.lower_bound` adds
    :func:`bounds.multi_wave.v1_terms` to these (MW11, whose proof needs no second wave; split
    with ``K < m``).
    The checked ranges, the table of optima and certificate schedules are the certification
    layer's (:mod:`pipebounds.certify`).
    """
    if inst.v != 1:
        raise ValueError("bounds.single_wave.terms needs v = 1")
    out: list[Term] = []
    if not inst.split:
        out.append(("fill_drain", fill_drain_value(inst), term_exact("fill_drain", inst)))
        if inst.K is not None and inst.K < inst.P:
            out.append(("memory_time", memory_time_value(inst), False))
        if inst.K == 1:
            t3 = single_slot_value(inst)
            out.append(("single_slot", t3, term_exact("single_slot", inst)))
            out.append(("single_slot_coupled", coupled_slot_value(inst, t3), False))
    else:
        out.append(("split_drain", split_drain_value(inst), False))
        out.append(("split_first_input", split_first_input_value(inst), False))
        if inst.K is not None and inst.K < inst.m:
            out.append(("split_memory_time", split_memory_time_value(inst), False))
        if inst.K == 2 and inst.m > 2:
            out.append(("split_window_fill", split_window_fill_value(inst), False))
        if inst.K == 1:
            out.append(("single_slot", single_slot_value(inst), term_exact("single_slot", inst)))
    return out


__all__ = [
    "fill_drain_expr", "fill_drain_value", "fill_drain_exact", "two_gpu_exact", "slot_edge",
    "memory_time_gpu_expr",
    "memory_time_gpu_value",
    "memory_time_value", "single_slot_W_expr", "single_slot_gpu_expr", "single_slot_choice",
    "single_slot_gpu_value", "single_slot_value", "split_drain_gpu_expr", "split_drain_value",
    "split_first_input_expr", "split_first_input_value", "split_memory_time_gpu_expr",
    "split_memory_time_value", "split_window_fill_gpu_value", "split_window_fill_value",
    "window_fill_choices", "nonbinding_memory",
    "single_slot_exact", "single_slot_waste", "single_group_exact",
    "single_group_split_exact", "terms", "pour_waste", "single_slot_minus",
    "coupled_pair_value", "coupled_gate", "coupled_slot_value",
]
