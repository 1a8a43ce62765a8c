"""Lower bounds on the makespan of multi-wave (``v >= 2``) schedules (docs/theory_multiwave.md).

Notation: ``S = vP`` stages; a GPU's *op types* are the pairs (stage it holds, kind) with kind
``F, B`` (fused) or ``F, I, W`` (split); every op type has ``m`` ops, one per microbatch. The
*head* of an op is the length of the longest chain of predecessors (no op can start earlier),
its *tail* the longest chain of successors (after it ends, that much work still has to run):

=========  ============================  ===========================================
op          head                          tail
=========  ============================  ===========================================
F(j,s)      ``s f``                       ``(S-1-s) f + S b`` (split: ``S b_I + b_W``)
B(j,s)      ``S f + (S-1-s) b``           ``s b``
I(j,s)      ``S f + (S-1-s) b_I``         ``s b_I + b_W``
W(j,s)      ``S f + (S-s) b_I``           ``0``
=========  ============================  ===========================================

Theorems (numbering of docs/theory_multiwave.md; all valid for every ``K``, with or without
recomputation, every ``c >= 0`` and every placement unless stated):

* **MW1 GPU subset** (Jackson-type): for a GPU ``p`` and a set ``A`` of its op types,
  ``T >= min_A head + m * sum_A duration + min_A tail``. :func:`gpu_subset_value` maximises over
  all ``A`` and all GPUs.
* **MW2 fill-drain** (fused): ``T >= (v m + P - 1)(f + b)`` (``A`` = all op types of GPU ``P-1``,
  whose lowest stage is ``P-1`` in both named placements).
* **MW3 last stage** (fused): ``T >= (m + v P - 1)(f + b)`` (``A`` = both op types of stage
  ``S-1``).
* **MW4 adjacent pair** (fused, vshape, ``v >= 2``): ``T >= v P (f + b) + 2 (m - 1) max(f, b)``
  (``A`` = the forwards, or the backwards, of the adjacent stages ``P-1, P`` that vshape puts on
  GPU ``P-1``).
* **MW5 looped optimum** (fused, looped, any ``v``): ``OPT = max(MW2, MW3)
  = (P - 1 + (v-1) max(m, P) + m)(f + b)`` when ``K = None`` or ``K >= v m``; the breadth-first
  schedule of :mod:`pipebounds.constructions.multi_wave` reaches it.
* **MW6 vshape** (fused, vshape, ``v = 2``): ``OPT = max(MW2, MW4)`` is proven for ``m <= P``
  and every ``P, f, b`` (MW6b: ``OPT = MW4``) and for ``f = b`` with ``P | m`` (MW6a); it is
  *not* true in general (gaps with ``m > P`` found by exhaustive search); elsewhere exactness is
  claimed per instance when a certificate schedule reaches MW1, see
  :mod:`pipebounds.constructions.multi_wave`.
* **MW7 memory slots** (finite ``K``, recomputation allowed): see :func:`memory_slots_value`.
* **MW8 forced recomputation** (fused, ``K < v``): every GPU recomputes at least ``v - K``
  activations of each microbatch: ``T >= (v m + P - 1)(f + b) + m (v - K) f``; vshape with
  ``K = 1``: ``T >= v P (f + b) + 2 (m - 1) b + m f``. **MW8c** (``K = 1``, any placement,
  fused or split): MW1 with the forced ``R`` ops and the heads and tails of their longer chains
  (:func:`single_slot_chain`, used by :func:`op_types`).
* **MW9 single slot** (``1 <= K <= v`` fused, ``K = 1`` split): Theorem 3's hold argument per
  GPU, for holds during which one microbatch fills every slot (:func:`single_slot_value`).
* **MW10 split single slot** (split, ``2 <= K <= v``): MW9's argument for the periods during
  which one microbatch fills every slot, ended by the split drain
  (:func:`split_single_slot_value`, :func:`split_drain`).
* **MW11 first backward** (finite ``K``): before a GPU's first backward op at most ``K`` of its
  ops store, so at most ``K f`` of its work is done by then (:func:`first_backward_value`).
* **MW12 last forward** (fused, finite ``K``): after a GPU's last forward only the ``B`` ops of
  its ``K`` live pairs and of pairs it recomputes there remain (:func:`last_forward_value`).
* **MW13 first backward, top stages** (finite ``K``): after a GPU's first backward op, the
  backward ops of its top stages, the stores of all but ``K`` of their pairs and (split) the
  ``W`` ops that free slots for them, followed by the tail of those backward ops
  (:func:`first_backward_top_value`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Optional

from schedules.instance import Instance

from .single_wave import input_drain, single_slot_waste, slot_edge, symbolic_getattr
from .theorems import MULTI, declare, term_exact, theorem

if TYPE_CHECKING:
    import sympy as sp

Term = tuple[str, Fraction, bool]


__getattr__ = symbolic_getattr(__name__)


declare("MW0", "time reversal (lemma)", MULTI + "B.2 MW0 (time reversal)")


# --------------------------------------------------------------------------- closed forms
def fill_drain_expr() -> sp.Expr:
    """MW2 (fused, looped or vshape, any ``K``): ``(v m + P - 1)(f + b)``.

    Proof: GPU ``P-1`` holds stage ``P-1`` as its lowest stage. Its first op is a forward of a
    stage ``>= P-1`` (head ``>= (P-1) f``), it runs ``v m (f + b)`` of work, and its last op is a
    backward of a stage ``>= P-1`` (tail ``>= (P-1) b``).
    """
    from .symbols import P, b, f, m, v

    return (v * m + P - 1) * (f + b)


def last_stage_expr() -> sp.Expr:
    """MW3 (fused, any placement, any ``K``): ``(m + v P - 1)(f + b)``.

    Proof: the ``2m`` ops of stage ``S-1`` run on one GPU; none starts before ``(S-1) f``, after
    the last of them (a backward) the chain of ``S-1`` backwards remains.
    """
    from .symbols import P, b, f, m, v

    return (m + v * P - 1) * (f + b)


def vshape_pair_expr() -> sp.Expr:
    """MW4 (fused, vshape, ``v >= 2``, any ``K``): ``v P (f + b) + 2 (m - 1) max(f, b)``.

    Proof: vshape puts stages ``P-1`` and ``P`` on GPU ``P-1``. Its ``2m`` forwards of these
    stages start no earlier than ``(P-1) f`` and after the last one (stage ``<= P``) at least
    ``(S-1-P) f + S b`` remains: ``T >= (P-1) f + 2 m f + (S-1-P) f + S b``. Symmetrically its
    ``2m`` backwards of these stages start no earlier than ``S f + (S-1-P) b`` and end with a
    chain of ``>= (P-1) b``.
    """
    from .symbols import P, b, f, m, sp, v

    return v * P * (f + b) + 2 * (m - 1) * sp.Max(f, b)


def looped_opt_expr() -> sp.Expr:
    """MW5: the optimum of the fused looped placement when memory does not bind,
    ``max(MW2, MW3) = (P - 1 + (v-1) max(m, P) + m)(f + b)``.

    >>> from bounds.symbols import P, b, f, m, v
    >>> looped_opt_expr().subs({P: 4, m: 2, v: 2, f: 1, b: 2})
    27
    """
    from .symbols import sp

    return sp.Max(fill_drain_expr(), last_stage_expr())


def vshape_opt_expr() -> sp.Expr:
    """MW6: ``max(MW2, MW4)`` for the fused vshape placement, ``v = 2`` (MW3 <= MW4 always).
    A valid lower bound; equal to the optimum on the whole exhaustive range of
    docs/theory_multiwave.md and when ``f = b`` with ``m <= P`` or ``P | m`` (MW6a), but *not*
    in general (gaps near ``MW2 = MW4`` with ``max(f,b) >= 4 min(f,b)``).

    >>> from bounds.symbols import P, b, f, m, v
    >>> vshape_opt_expr().subs({P: 3, m: 3, v: 2, f: 1, b: 2})
    26
    """
    from .symbols import sp

    return sp.Max(fill_drain_expr(), vshape_pair_expr())


def split_fill_drain_expr() -> sp.Expr:
    """Split analogue of MW2 (GPU ``P-1``, all its op types; a ``W`` has tail 0):
    ``(P - 1) f + v m (f + b_I + b_W)``."""
    from .symbols import P, b_I, b_W, f, m, v

    return (P - 1) * f + v * m * (f + b_I + b_W)


def split_last_stage_expr() -> sp.Expr:
    """Split analogue of MW3 (``F, I`` of stage ``S-1``):
    ``(v P - 1)(f + b_I) + m (f + b_I) + b_W``."""
    from .symbols import P, b_I, b_W, f, m, v

    return (v * P - 1) * (f + b_I) + m * (f + b_I) + b_W


def memory_slots_gpu_expr(lengths: Iterable, head, tail, work, release=None) -> sp.Expr:
    """MW7 for one GPU, given the sorted round-trip lengths ``L_1 <= ... <= L_n`` of its ``n``
    activations (symbolic or numeric), its min head, min tail, work ``v m (f + b)`` and the
    duration of its releasing op (``b`` fused, the default; ``b_W`` split):

    ``head + tail + min_x max(work + x f, (L_1 + ... + L_{n-x} + x (f + b) + E) / K)``,
    ``E = k (k-1)/2 (f + release)``, ``k = min(K, n)`` (the slot edge).

    Proof: at most ``K`` activations are live at once, so the live intervals split into ``K``
    chains of disjoint intervals inside ``[head, T - tail]``, whose total length misses at
    least the slot edge ``E`` (:func:`bounds.single_wave.slot_edge`); a kept activation of stage
    ``s`` is live from the start of ``F(j,s)`` to the end of its release (``(S - s)(f + b)``
    fused), a recomputed one at least ``f + b`` (its ``R`` then its ``B``) and costs ``f`` more
    work.
    """
    from .symbols import K, b, f, sp

    Ls = list(lengths)
    n = len(Ls)
    E = slot_edge(sp.Min(K, n), f, b if release is None else release)
    opts = []
    for xx in range(n + 1):
        opts.append(sp.Max(work + xx * f,
                           (sum(Ls[: n - xx], sp.Integer(0)) + xx * (f + b) + E) / K))
    return head + tail + sp.Min(*opts)


def forced_remat_expr() -> sp.Expr:
    """MW8a (fused, looped or vshape, ``K < v``): ``(v m + P - 1)(f + b) + m (v - K) f``.

    Proof: let GPU ``p`` hold stages ``s_1 < ... < s_v``. While ``B(j, s_v)`` runs, activation
    ``(j, s_v)`` is live, and so is every kept ``(j, s_i)``, ``i < v`` (live from the start of
    ``F(j, s_i)``, before, to the end of ``B(j, s_i)``, after). Hence at most ``K - 1`` of the
    lower stages are kept and at least ``v - K`` are recomputed, for every microbatch: GPU
    ``P-1`` runs at least ``m (v - K)`` ops ``R`` of duration ``f`` besides its ``v m (f + b)``;
    their heads (after a forward) and tails (before a backward of a stage ``>= P-1``) do not
    lower MW2's head ``(P-1) f`` and tail ``(P-1) b``.
    """
    from .symbols import K, f, m, v

    return fill_drain_expr() + m * (v - K) * f


def vshape_forced_remat_expr() -> sp.Expr:
    """MW8b (fused, vshape, ``K = 1``, ``v >= 2``): ``v P (f + b) + 2 (m - 1) b + m f``.

    Proof: with ``K = 1`` GPU ``P-1`` recomputes ``(j, P-1)`` for every ``j`` (MW8a: it is
    below stage ``P`` on the same GPU), and ``R(j, P-1)`` cannot start before ``B(j, P)`` ends
    (``(j, P)`` is live until then). So the backwards of stages ``P-1, P`` and these ``R`` ops,
    ``m (2b + f)`` of work on GPU ``P-1``, start no earlier than the head ``S f + (S-1-P) b`` of
    ``B(., P)`` and end with a tail ``>= (P-1) b``: MW1 with the ``R`` ops added.
    """
    from .symbols import P, b, f, m, v

    return v * P * (f + b) + 2 * (m - 1) * b + m * f


@theorem("MW8a", "forced recomputation, K < v", MULTI + "B.6 Memory", lemma=True)
def forced_remat_value(inst: Instance) -> Optional[Fraction]:
    """MW8a evaluated exactly; None unless fused, named placement, ``K < v``.

    >>> forced_remat_value(Instance(P=2, m=2, v=2, K=1, f=1, b=2))
    Fraction(17, 1)
    """
    if inst.split or inst.K is None or inst.K >= inst.v or inst.placement not in ("looped",
                                                                                  "vshape"):
        return None
    return fill_drain_value(inst) + inst.m * (inst.v - inst.K) * inst.f


@theorem("MW8b", "forced recomputation, vshape K = 1", MULTI + "B.6 Memory", lemma=True)
def vshape_forced_remat_value(inst: Instance) -> Optional[Fraction]:
    """MW8b evaluated exactly; None unless fused vshape with ``K = 1``.

    >>> vshape_forced_remat_value(Instance(P=3, m=2, v=2, K=1, placement="vshape", f=1, b=2))
    Fraction(24, 1)
    """
    if inst.split or inst.K != 1 or inst.placement != "vshape":
        return None
    return inst.S * (inst.f + inst.b) + 2 * (inst.m - 1) * inst.b + inst.m * inst.f


@theorem("MW8", "forced recomputation", MULTI + "B.6 Memory",
         terms=("mw_forced_remat", "mw_vshape_forced_remat"))
def forced_remat_bound(inst: Instance) -> Optional[Fraction]:
    """MW8: the larger of MW8a and MW8b where they apply (None where neither does)."""
    vals = [x_ for x_ in (forced_remat_value(inst), vshape_forced_remat_value(inst))
            if x_ is not None]
    return max(vals) if vals else None


@theorem("MW9", "single slot per GPU", MULTI + "B.6 Memory", terms=("mw_single_slot",))
def single_slot_value(inst: Instance, backward: bool = False) -> Optional[Fraction]:
    """MW9 (``1 <= K <= v``; fused, or split with ``K = 1``; any placement): Theorem 3's
    single-slot argument per GPU, with the slots filled by one microbatch.

    Let GPU ``p`` hold stages ``s_1 < ... < s_v``. Call microbatch ``j`` *full* when it keeps
    ``(j, s_v)`` and ``K - 1`` of its lower stages: during the hold of ``(j, s_v)`` all ``K``
    slots are then taken by ``j`` (its kept lower stages are live from before ``F(j, s_v)`` to
    after ``B(j, s_v)``), so the GPU runs nothing there but ``j``'s two ops and forwards that
    store nothing, and full holds are disjoint. A microbatch that is not full recomputes at
    least ``v - K + 1`` of its stages, a full one ``v - K`` (MW8's lemma), so with ``x`` full
    microbatches at least ``N = (v - K + 1) m - x`` ops ``R`` run, each making one forward free.
    A full hold contains the gap ``G = (S - s_v - 1)(f + b_c)`` (the chain above ``s_v``;
    ``b_c = b`` fused, ``b_I`` split), so the GPU's busy span is at least
    ``W(x) = v m B + single_slot_waste(n, G, f, x)``, ``n = (v - K + 1) m``, ``B = f + b``
    (docs/theory.md, Theorem 3; more recomputations never help). The span starts after the head
    of ``F(., s_1)``, and the GPU's last op is a ``B(j, s_1)`` followed by its tail; split
    (``K = 1``), the last hold's ``I(j, s_1)`` ends ``b_W`` before the span does and is followed
    by its tail (heads and tails of :func:`op_types`):
    ``T >= max_p [head + min_{0 <= x <= m} W(x) + tail]``. None outside that range.

    ``backward`` (MW9r, split, backward recomputation allowed; docs/theory.md A.11): the
    chain of :func:`single_slot_chain`'s backward form, and after the last ``I`` the GPU may
    run ``n`` ops ``W`` of pairs stored again by ``R`` ops (``n - 1`` of them, ``f`` each, at
    ``K = 1``): ``tail - b_W`` becomes :func:`bounds.single_wave.input_drain` of it.

    >>> single_slot_value(Instance(P=2, m=5, v=2, K=1, placement="vshape", f=2, b=1))
    Fraction(47, 1)
    >>> single_slot_value(Instance(P=2, m=4, v=2, K=2, placement="looped", f=2, b=1))
    Fraction(30, 1)
    """
    if inst.K is None or inst.v < 2 or inst.K > inst.v or (inst.split and inst.K != 1):
        return None
    bc, last = (inst.b_I, "I") if inst.split else (inst.b, "B")
    Bx, n, best = inst.f + inst.b, (inst.v - inst.K + 1) * inst.m, None
    backward = backward and inst.split
    chain = single_slot_chain(inst, backward) if inst.K == 1 else None
    for p, st in enumerate(stages_by_gpu(inst)):
        lo, top = st[0], st[-1]
        G = (inst.S - top - 1) * (inst.f + bc)
        span = inst.v * inst.m * Bx + min_single_slot_waste(n, G, inst.f, inst.m)
        head_F, tail_last = _head_tail(inst, chain, "F", lo)[0], _head_tail(inst, chain, last, lo)[1]
        if backward:
            val = head_F + span + input_drain(tail_last - inst.b_W, 1, inst.v * inst.m,
                                              inst.f, inst.b_W)
        else:
            val = head_F + span + tail_last - (inst.b_W if inst.split else 0)
        best = val if best is None else max(best, val)
    return best


def split_drain(inst: Instance, lo: int, backward: bool = False):
    """The least time GPU ``p`` (lowest stage ``lo``) still needs after its last ``I`` ends,
    beyond the ``b_W`` of one ``W`` (split, finite ``K``): ``max(0, lo b_I - (k - 1) b_W)``,
    ``k = min(K, v m)`` (MW7 and MW10, docs/theory_multiwave.md B.6).

    After the last ``I`` of the GPU only ``W`` ops run (every forward precedes its pair's
    ``I``); each releases a pair live when that ``I`` ends, so at most ``k`` of them, and the
    ``I`` is followed by its tail ``lo b_I + b_W`` at least. ``backward``: a ``W`` may also
    release a pair stored again by a backward ``R`` (``f``) after that ``I``, which is
    :func:`bounds.single_wave.input_drain` (MW7r)."""
    n = inst.v * inst.m
    k = n if inst.K is None else min(inst.K, n)
    if backward:
        return input_drain(lo * inst.b_I, k, n, inst.f, inst.b_W)
    return max(0, lo * inst.b_I - (k - 1) * inst.b_W)


@theorem("MW10", "split single slot per GPU, 2 <= K <= v", MULTI + "B.6 Memory",
         terms=("mw_split_single_slot",))
def split_single_slot_value(inst: Instance) -> Optional[Fraction]:
    """MW10 (split, ``2 <= K <= v``, any placement): MW9's full-hold argument in split form,
    ended by the drain of :func:`split_drain`.

    Let GPU ``p`` hold ``s_1 < ... < s_v``; microbatch ``j`` is *full* when it keeps
    ``(j, s_v)`` and ``K - 1`` lower stages. Its *full period* runs from the start of
    ``F(j, s_v)`` to the end of the first ``W`` releasing one of these ``K`` activations: all
    ``K`` slots are ``j``'s, so the GPU runs no other storing op, no other ``W``, and no ``I``
    of another pair (its activation would be live too): only ``j``'s ops and free forwards.
    The part before the end of ``I(j, s_v)`` contains the chain above ``s_v`` and only
    ``F(j, s_v)``, ``I(j, s_v)`` and free forwards (``j``'s other ops follow ``I(j, s_v)`` or
    precede ``F(j, s_v)``), so it idles ``max(0, G - a f)`` with ``a`` free forwards in it,
    ``G = (S - s_v - 1)(f + b_I)``; full periods are disjoint. With L7's recomputation count
    (at least ``n - x`` ops ``R``, ``n = (v - K + 1) m``, ``x`` full) the GPU's ops up to the
    end of its last ``I`` take at least ``v m u + min_x single_slot_waste(n, G, f, x)`` minus
    the ``W`` ops after it, which gives
    ``T >= max_p [s_1 f + v m u + min_{0 <= x <= m} w(n, G, x) + split_drain]``.
    None outside that range (``K = 1`` split is MW9's).

    >>> split_single_slot_value(Instance(P=2, m=2, v=2, K=2, f=1, b_I=1, b_W=1))
    Fraction(14, 1)
    """
    if not inst.split or inst.K is None or inst.v < 2 or not 2 <= inst.K <= inst.v:
        return None
    f_, bI = inst.f, inst.b_I
    n, best = (inst.v - inst.K + 1) * inst.m, None
    for st in stages_by_gpu(inst):
        lo, top = st[0], st[-1]
        G = (inst.S - top - 1) * (f_ + bI)
        val = (lo * f_ + inst.v * inst.m * (f_ + inst.b)
               + min_single_slot_waste(n, G, f_, inst.m) + split_drain(inst, lo))
        best = val if best is None else max(best, val)
    return Fraction(best)


@theorem("MW11", "stores before the first backward (every v; at v = 1 a split term, K < m)",
         MULTI + "B.6 Memory", terms=("mw_first_backward",))
def first_backward_value(inst: Instance, backward: bool = False) -> Optional[Fraction]:
    """MW11 (finite ``K``; every placement, ``v``, fused or split, with recomputation): for
    every GPU ``p`` with stages ``s_1 < ... < s_v`` and ``k = min(K, v m)``,

    ``T >= h_p + v m u - k f + end_p``,  ``h_p = S f + (S - 1 - s_v) b_c``

    (the head of the backward op of ``(., s_v)``; ``b_c = b`` fused, ``b_I`` split), ``end_p =
    s_1 b`` fused and :func:`split_drain` split.

    Proof: let ``t_1`` be the start of the GPU's first backward op (``B`` or ``I``); it is one
    of stage ``s_v`` (a lower stage's waits for it on the chain), so ``t_1 >= h_p``. Before
    ``t_1`` the GPU runs only ``F`` and ``R`` ops (a ``W`` follows its ``I``). Every activation
    stored before ``t_1`` is still live just after ``t_1`` (its release is, or follows, a
    backward op of this GPU), so at most ``k`` of those ops store: the others are forwards that
    store nothing, each paid again by its own ``R``. So at most ``k f`` of the GPU's
    ``v m u + y f`` of work (``y`` recomputations) is done before ``t_1`` net of the
    recomputations it causes, the rest runs after ``t_1`` one op at a time, and the last op is
    followed by its tail (fused: a ``B`` of a stage ``>= s_1``) or the split drain.
    The proof uses no second wave: at ``v = 1`` (``s_1 = s_v = p``) it is a term of
    :func:`v1_terms` for split instances with ``K < m`` (fused it is
    ``T1 - (k - 1) f``, split with ``K >= m`` at most S2).
    ``backward`` (MW11r, docs/theory.md A.11): the drain of backward recomputation. None when
    ``K`` is None.

    >>> first_backward_value(Instance(P=2, m=3, v=2, K=3, placement="vshape", f=1, b_I=3, b_W=1))
    Fraction(35, 1)
    """
    if inst.K is None:
        return None
    f_, S = inst.f, inst.S
    k = min(inst.K, inst.v * inst.m)
    bc = inst.b_I if inst.split else inst.b
    work = inst.v * inst.m * (f_ + inst.b) - k * f_
    best = None
    for st in stages_by_gpu(inst):
        lo, top = st[0], st[-1]
        end = split_drain(inst, lo, backward) if inst.split else lo * inst.b
        val = S * f_ + (S - 1 - top) * bc + work + end
        best = val if best is None or val > best else best
    return Fraction(best)


@theorem("MW13", "first backward, top stages", MULTI + "B.6 Memory",
         terms=("mw_first_backward_top",))
def first_backward_top_value(inst: Instance) -> Optional[Fraction]:
    """MW13 (finite ``K``; every placement and ``v``, fused or split, without backward
    recomputation): MW11 restricted to the backward ops of a GPU's top stages. For every GPU
    ``p`` and every threshold ``q`` among the tails of its backward op types (``B`` fused,
    ``I`` split; :func:`op_types`, MW8c's chains at ``K = 1``) but the least (with ``H`` every
    stage the bound is at most MW11), with ``H`` its stages whose backward tail is ``>= q``
    and ``n = |H| m``:

    ``T >= h_p + n b_c + max(0, n - K)(f + b_W) + q``  (fused: ``b_W = 0``, ``b_c = b``),

    ``h_p`` the head of the backward op of ``(., s_v)`` (``S f + (S - 1 - s_v) b_c`` for ``K >=
    2``).

    Proof: let ``t_1`` be the start of the GPU's first backward op, one of stage ``s_v``, so
    ``t_1 >= h_p``. The ops below lie in ``[t_1, T - q]``, one at a time: the ``n`` backward
    ops of ``H`` (tails ``>= q``); the storing ops (``F`` or ``R``, tails ``>= b_c + q``) of
    the pairs of ``H`` stored after ``t_1``, at least ``n - K`` (the pairs stored before
    ``t_1`` are all live at ``t_1``); split, when ``n > K``, at least ``n - K`` ops ``W`` of
    pairs of ``H``, which end before the last of those stores, ``σ``, starts (at its start
    ``σ``'s pair is live and at most ``K - 1`` other pairs of ``H`` are; every other pair of
    ``H`` was stored before ``σ``), and follow ``t_1`` (after their ``I``). With backward
    recomputation the releases before ``σ`` may be ``I`` ops, already counted: the term is
    not claimed there. None when ``K`` is None or ``v = 1``.

    >>> first_backward_top_value(Instance(P=4, m=2, v=3, K=2, placement="vshape",
    ...                                   f=Fraction(3, 2), b_I=3, b_W=2))
    Fraction(69, 1)

    (the optimum, CP-SAT without any bound; MW11 gives 63 there).
    """
    if inst.K is None:
        return None
    bk = "I" if inst.split else "B"
    bc = inst.b_I if inst.split else inst.b
    extra_unit = inst.f + (inst.b_W if inst.split else 0)
    best = None
    for types in all_op_types(inst):
        back = sorted(((t[3], t[1], t[2]) for t in types if t[0] == bk), reverse=True)
        h = max(back, key=lambda x: x[1])[2]          # head of the top stage's backward op
        for i, (q, _, _) in enumerate(back[:-1]):     # H = every stage: MW11
            if back[i + 1][0] == q:
                continue                              # the set {tail >= q} is not complete yet
            n = (i + 1) * inst.m
            val = h + n * bc + max(0, n - inst.K) * extra_unit + q
            best = val if best is None or val > best else best
    return None if best is None else Fraction(best)


def last_forward_inner(A, K: int, N: int, f_, b_, c):
    """``min_{n >= 0} max(A - min(K + n, N) b, n f + c)`` (MW12's choice of the number ``n`` of
    recomputations after a GPU's last forward): the first argument falls until ``n = N - K``
    and is constant after, the second rises, so the minimum is at ``n = 0``, at
    ``max(0, N - K)`` or next to their crossing ``(A - K b - c) / (b + f)``."""
    top = max(0, N - K)
    cands = {0, top}
    cross = (A - K * b_ - c) / (b_ + f_)
    if cross > 0:
        lo = int(cross // 1)
        cands.update(x for x in (lo, lo + 1) if x <= top)
    return min(max(A - min(K + n, N) * b_, n * f_ + c) for n in cands)


@theorem("MW12", "last forward", MULTI + "B.6 Memory", terms=("mw_last_forward",))
def last_forward_value(inst: Instance) -> Optional[Fraction]:
    """MW12 (fused, finite ``K``; every placement and ``v``, with recomputation): for every GPU
    ``p`` with stages ``s_1 < ... < s_v``,

    ``T >= s_1 f + v m u + min_{n >= 0} max(tail_p - min(K + n, v m) b, n f + s_1 b)``,
    ``tail_p = (S - 1 - s_v) f + S b``

    (the tail of ``F(., s_v)``). Proof: let ``t_L`` be the end of the GPU's last forward, one of
    stage ``s_v`` (a lower stage's forward precedes it on the chain): ``T >= t_L + tail_p``.
    After ``t_L`` the GPU runs only ``n`` ops ``R`` and ``n_B`` ops ``B``; a ``B`` after ``t_L``
    is of a pair live at ``t_L`` (at most ``K``) or stored after it by one of those ``R``, so
    ``n_B <= min(K + n, v m)``. The rest of its work, ``v m u + y f - n_B b - n f >= v m u -
    n_B b`` (``y >= n`` recomputations in all), lies in ``[s_1 f, t_L]``; after ``t_L`` it runs
    ``n_B b + n f`` and its last op, a ``B``, has tail ``>= s_1 b``. So ``T >= s_1 f + v m u +
    max(tail_p - n_B b, n f + s_1 b)``, and the minimum over ``n`` covers the schedule's own.
    None unless fused with finite ``K``.

    >>> last_forward_value(Instance(P=2, m=2, v=2, K=3, placement="vshape", f=2, b=1))
    Fraction(17, 1)

    (there MW12 alone gives the bound: ``bounds.lower_bound`` is 17 and every other term is
    below it).
    """
    if inst.K is None or inst.split:
        return None
    f_, b_, S, N = inst.f, inst.b, inst.S, inst.v * inst.m
    best = None
    for st in stages_by_gpu(inst):
        lo, top = st[0], st[-1]
        A = (S - 1 - top) * f_ + S * b_
        val = lo * f_ + N * (f_ + b_) + last_forward_inner(A, inst.K, N, f_, b_, lo * b_)
        best = val if best is None or val > best else best
    return Fraction(best)


def min_single_slot_waste(n: int, G, f_, x_max: int):
    """``min_{0 <= x <= x_max} single_slot_waste(n, G, f, x)`` in ``O(1)``: the waste is convex
    and piecewise linear in ``x`` (slopes ``-f``, ``(c+2) r0 - f``, ``G``; breakpoints
    ``n/(c+2)`` and ``n/(c+1)``, ``c = floor(G/f)``, ``r0 = G - c f``; docs/theory.md §5), so
    its minimum over the integers of an interval is at the floor or ceiling of a breakpoint or
    at an end of the interval."""
    c = G // f_
    cands = {0, x_max, n // (c + 2), -(-n // (c + 2)), n // (c + 1), -(-n // (c + 1))}
    return min(single_slot_waste(n, G, f_, x_) for x_ in cands if 0 <= x_ <= x_max)


def _head_tail(inst: Instance, chain, kind: str, s: int):
    """``(head, tail)`` of op type ``(kind, s)``: :func:`single_slot_chain`'s when given (``K =
    1``), else the table of the module docstring."""
    if chain is not None:
        return chain[(kind, s)][:2]
    S, f_ = inst.S, inst.f
    if kind == "F":
        return s * f_, (S - 1 - s) * f_ + (S * inst.b_I + inst.b_W if inst.split else S * inst.b)
    if kind == "B":
        return S * f_ + (S - 1 - s) * inst.b, s * inst.b
    if kind == "I":
        return S * f_ + (S - 1 - s) * inst.b_I, s * inst.b_I + inst.b_W
    return S * f_ + (S - s) * inst.b_I, 0


def stages_by_gpu(inst: Instance) -> list[tuple[int, ...]]:
    """The stages of every GPU, increasing (``inst.stages_of(p)`` for all ``p`` in ``O(S)``)."""
    out: list[list[int]] = [[] for _ in range(inst.P)]
    for s, g in enumerate(inst.stage_to_rank):
        out[g].append(s)
    return [tuple(st) for st in out]


# --------------------------------------------------------------------------- MW1 subset bound
@lru_cache(maxsize=1024)
def single_slot_chain(inst: Instance, backward: bool = False
                      ) -> dict[tuple[str, int], tuple[Fraction, Fraction, Fraction]]:
    """``{(kind, stage): (head, tail, duration)}`` of one microbatch's ops when ``K = 1``.

    With one slot per GPU, a stage ``s`` below another stage ``s'`` of the same GPU is
    recomputed for every microbatch (the hold of a kept ``(j, s)`` would contain that of
    ``(j, s')``: MW8's lemma), and ``R(j, s)`` starts only after the releasing op (``B``, split
    ``W``) of every such ``(j, s')`` has ended (their holds are disjoint and ``(j, s')``'s
    contains a backward op that precedes ``(j, s)``'s). Heads and tails are the longest paths
    of this precedence graph: the chain of the table above plus ``F(j,s) -> R(j,s) ->`` the
    backward of ``(j, s)``, and release of ``(j, s') -> R(j, s)``. Valid for every placement.
    Cached per instance (``op_types`` asks for it once per GPU); do not mutate the result.

    ``backward`` (split form, backward recomputation allowed: docs/theory.md A.11): a hold of
    ``(j, s')`` may end with ``I(j, s')`` (the pair stored again by an ``R`` before its ``W``),
    so ``R(j, s)`` waits only for the end of ``I(j, s')``, and ``W(j, s')`` no longer precedes
    it. The forced recomputations are the same (a kept ``(j, s)`` is live from ``F(j, s)`` to
    the end of ``I(j, s)`` at least, which contains a store of ``(j, s')`` and ``I(j, s')``).
    """
    S, f_, split = inst.S, inst.f, inst.split
    b0 = inst.b_I if split else inst.b          # the chain's backward op: I split, B fused
    bW = inst.b_W if split else 0
    k0 = "I" if split else "B"
    gpu = inst.stage_to_rank
    top: dict[int, int] = {}
    for s_ in range(S):
        top[gpu[s_]] = s_
    has_R = [s_ < top[gpu[s_]] for s_ in range(S)]
    # heads, in topological order: the forwards, then per stage downwards R, B (or I, W);
    # R(s) waits for F(s) and for the releases of the GPU's stages above s (already placed)
    hF = [s_ * f_ for s_ in range(S)]
    hR: dict[int, object] = {}
    hB = [0] * S
    rel_end: dict[int, object] = {}
    prev_end = hF[S - 1] + f_
    for s_ in range(S - 1, -1, -1):
        g, start = gpu[s_], prev_end
        if has_R[s_]:
            hR[s_] = max(hF[s_] + f_, rel_end[g])
            start = max(start, hR[s_] + f_)
        hB[s_] = start
        prev_end = start + b0
        end = prev_end + (0 if backward else bW)
        rel_end[g] = max(rel_end[g], end) if g in rel_end else end
    # tails, in reverse topological order; a release of stage t precedes R(s) for every lower
    # s of the same GPU (rmax: the longest such continuation seen so far on that GPU)
    tB = [0] * S
    tW = [0] * S
    tR: dict[int, object] = {}
    rmax: dict[int, object] = {}
    for s_ in range(S):
        g = gpu[s_]
        after_rel = rmax.get(g, 0)
        down = b0 + tB[s_ - 1] if s_ else 0
        if split and backward:
            tB[s_] = max(down, bW, after_rel)
        elif split:
            tW[s_] = after_rel
            tB[s_] = max(down, bW + tW[s_])
        else:
            tB[s_] = max(down, after_rel)
        if has_R[s_]:
            tR[s_] = b0 + tB[s_]
            rmax[g] = max(rmax[g], f_ + tR[s_]) if g in rmax else f_ + tR[s_]
    tF = [0] * S
    nxt = b0 + tB[S - 1]
    for s_ in range(S - 1, -1, -1):
        tF[s_] = max(nxt, f_ + tR[s_]) if has_R[s_] else nxt
        nxt = f_ + tF[s_]
    out = {}
    for s_ in range(S):
        out[("F", s_)] = (hF[s_], tF[s_], f_)
        if has_R[s_]:
            out[("R", s_)] = (hR[s_], tR[s_], f_)
        out[(k0, s_)] = (hB[s_], tB[s_], b0)
        if split:
            out[("W", s_)] = (hB[s_] + b0, tW[s_], bW)
    return out


def op_types(inst: Instance, p: int, backward: bool = False
             ) -> list[tuple[str, int, Fraction, Fraction, Fraction]]:
    """The op types of GPU ``p``: ``(kind, stage, head, tail, duration)`` (table above; with
    ``K = 1`` the forced recomputations ``R`` too and the longer chains of
    :func:`single_slot_chain`, of its ``backward`` form when asked)."""
    return all_op_types(inst, backward)[p]


def all_op_types(inst: Instance, backward: bool = False) -> list[list[tuple]]:
    """:func:`op_types` of every GPU, in ``O(S)``."""
    out: list[list[tuple]] = [[] for _ in range(inst.P)]
    gpu = inst.stage_to_rank
    if inst.K == 1:
        for (kind, s), (head, tail, dur) in single_slot_chain(
                inst, backward and inst.split).items():
            out[gpu[s]].append((kind, s, head, tail, dur))
        return out
    S, f_ = inst.S, inst.f
    for s in range(S):
        o = out[gpu[s]]
        if inst.split:
            bI, bW = inst.b_I, inst.b_W
            o.append(("F", s, s * f_, (S - 1 - s) * f_ + S * bI + bW, f_))
            o.append(("I", s, S * f_ + (S - 1 - s) * bI, s * bI + bW, bI))
            o.append(("W", s, S * f_ + (S - s) * bI, 0, bW))
        else:
            b_ = inst.b
            o.append(("F", s, s * f_, (S - 1 - s) * f_ + S * b_, f_))
            o.append(("B", s, S * f_ + (S - 1 - s) * b_, s * b_, b_))
    return out


def gpu_subset_expr(inst: Instance, p: int, subset: Iterable[tuple[str, int]]) -> sp.Expr:
    """MW1 for one GPU and one set of op types ``(kind, stage)``, as a sympy expression in
    ``m, f, b`` (or ``b_I, b_W``) with the stages of ``inst`` substituted.

    >>> inst = Instance(P=3, m=3, v=2, placement="vshape", f=1, b=2)
    >>> e = gpu_subset_expr(inst, 2, [("B", 2), ("B", 3)])
    >>> from bounds.symbols import b, f, m, sp
    >>> sp.simplify(e - (6*f + 2*m*b + 4*b))
    0
    """
    from .symbols import b, b_I, b_W, f, m, sp

    S = inst.S
    heads, tails, work = [], [], sp.Integer(0)
    for kind, s in subset:
        if kind == "F":
            heads.append(s * f)
            tails.append((S - 1 - s) * f + (S * b_I + b_W if inst.split else S * b))
            work += f
        elif kind == "B":
            heads.append(S * f + (S - 1 - s) * b)
            tails.append(s * b)
            work += b
        elif kind == "I":
            heads.append(S * f + (S - 1 - s) * b_I)
            tails.append(s * b_I + b_W)
            work += b_I
        elif kind == "W":
            heads.append(S * f + (S - s) * b_I)
            tails.append(sp.Integer(0))
            work += b_W
        else:
            raise ValueError(f"op kind must be F, B, I or W, got {kind!r}")
    if not heads:
        raise ValueError("gpu_subset_expr needs a non-empty set of op types")
    return sp.Min(*heads) + m * work + sp.Min(*tails)


def gpu_subset_best(inst: Instance, backward: bool = False
                    ) -> tuple[Fraction, int, tuple[tuple[str, int], ...]]:
    """MW1 maximised over every GPU and every set of its op types: ``(value, p, subset)``.

    For fixed thresholds ``h`` (min head) and ``q`` (min tail) the best set takes every op type
    with head ``>= h`` and tail ``>= q``, so trying every pair of thresholds is the maximum over
    all ``2^(2v)`` (split ``2^(3v)``) sets. ``backward``: the op types of
    :func:`all_op_types`'s backward form (MW1r).

    >>> gpu_subset_best(Instance(P=3, m=3, v=2, placement="vshape", f=1, b=2))[0]
    Fraction(26, 1)
    """
    return subset_best(all_op_types(inst, backward), inst.m)


def subset_best(types_by_gpu: list[list[tuple]], m_: int
                ) -> tuple[Fraction, int, tuple[tuple[str, int], ...]]:
    """MW1's maximum over every GPU and every set of its op types ``(kind, stage, head, tail,
    duration)`` (:func:`gpu_subset_best`; also the per-stage H4 of
    :mod:`bounds.heterogeneous_memory`): ``(value, p, subset)``."""
    best: Optional[tuple] = None
    for p, types in enumerate(types_by_gpu):
        types = sorted(types, key=lambda t: -t[3])   # by tail, longest first
        for h in sorted({t[2] for t in types}):
            # the sets {head >= h, tail >= q} for every q, growing as q falls: O(n) per h
            chosen = [t for t in types if t[2] >= h]
            min_head, work = None, 0
            for i, t in enumerate(chosen):
                min_head = t[2] if min_head is None else min(min_head, t[2])
                work += t[4]
                if i + 1 < len(chosen) and chosen[i + 1][3] == t[3]:
                    continue                      # same tail: the set is not complete yet
                val = min_head + m_ * work + t[3]
                if best is None or val > best[0]:
                    best = (val, p, chosen, i + 1)
    assert best is not None
    val, p, chosen, k = best
    return val, p, tuple((u[0], u[1]) for u in chosen[:k])


@theorem("MW1", "GPU subset", MULTI + "B.3 MW1 and its closed-form sets", terms=("mw_gpu_subset",))
@theorem("MW8c", "MW1 with the forced-recomputation chains (K = 1)", MULTI + "B.6 Memory", lemma=True)
@theorem("MW8d", "one microbatch at K = 1 (exact)", MULTI + "B.6 Memory",
         exact=lambda i: single_microbatch_exact(i), exact_terms=("mw_gpu_subset",))
def gpu_subset_value(inst: Instance, backward: bool = False) -> Fraction:
    """MW1 evaluated exactly (max over GPUs and sets of op types); ``backward``: MW1r."""
    return gpu_subset_best(inst, backward)[0]


# --------------------------------------------------------------------------- MW7 memory
@theorem("MW7", "memory slots", MULTI + "B.6 Memory", terms=("mw_memory_slots",))
def memory_slots_value(inst: Instance, release=None, backward: bool = False
                       ) -> Optional[Fraction]:
    """MW7 (finite ``K``): ``max_p`` of :func:`memory_slots_gpu_expr` evaluated exactly; None
    when ``K`` is None.

    Round trip of a kept activation of stage ``s``: fused ``(S-s)(f+b)``, split
    ``(S-s)(f+b_I) + b_W``; a recomputed one: ``f + b``. Min head of GPU ``p``: ``f`` times its
    lowest stage; min tail of its releasing ops: ``b`` times its lowest stage (fused), 0 (split).

    ``release``: the shortest op that can end a hold in the slot edge (default ``b`` fused,
    ``b_W`` split; MW7r passes ``min(b_I, b_W)``: with backward recomputation an ``I`` ends a
    hold, docs/theory.md A.11).

    Split: the work branch ends with :func:`split_drain` (only ``W`` ops, at most
    ``min(K, v m)``, follow the GPU's last ``I``, whose tail is ``lo b_I + b_W``); ``backward``
    (MW7r) takes its form with backward recomputation.

    >>> memory_slots_value(Instance(P=2, m=4, v=2, K=1, f=1, b=2))
    Fraction(31, 1)
    """
    if inst.K is None:
        return None
    S, f_, b_, K_, m_ = inst.S, inst.f, inst.b, inst.K, inst.m
    best = None
    for stages in stages_by_gpu(inst):
        lo = stages[0]
        # round trips, one group of m equal values per stage, shortest (highest stage) first
        if inst.split:
            Ls = [(S - s) * (f_ + inst.b_I) + inst.b_W for s in reversed(stages)]
            tail = 0
        else:
            Ls = [(S - s) * (f_ + b_) for s in reversed(stages)]
            tail = lo * b_
        n = len(Ls) * m_
        work = n * (f_ + b_) + (split_drain(inst, lo, backward) if inst.split else 0)
        if release is None:
            release = inst.b_W if inst.split else b_
        edge = slot_edge(min(K_, n), f_, release)
        fb = f_ + b_
        # x recomputed activations (the x longest round trips): busy(x) = (work + x f) K rises,
        # slots(x) = (sum of the n - x shortest) + x (f + b) + E does not (a round trip is
        # >= f + b); the minimum of their max is at the first x where busy >= slots or just
        # before. Walk the groups of m equal round trips, longest first: O(v).
        total = m_ * sum(Ls) + edge
        x0, x_cross = 0, n
        for L in reversed(Ls):
            slope = f_ * K_ + L - fb
            diff0 = (work + x0 * f_) * K_ - (total + x0 * fb)
            if diff0 + m_ * slope >= 0:
                x_cross = x0 + (0 if diff0 >= 0 else -(diff0 // slope))
                break
            total -= m_ * L
            x0 += m_
        inner = None
        for x_ in {max(x_cross - 1, 0), x_cross}:
            full, part = divmod(x_, m_)        # groups removed whole, then part of the next
            kept = m_ * sum(Ls[:len(Ls) - full]) - (part * Ls[len(Ls) - full - 1] if part else 0)
            val = max((work + x_ * f_) * K_, kept + x_ * fb + edge)
            inner = val if inner is None else min(inner, val)
        val = lo * f_ + tail + Fraction(inner) / K_
        if best is None or val > best:
            best = val
    return best


# --------------------------------------------------------------------------- exact values
@theorem("MW2", "fill-drain", MULTI + "B.3 MW1 and its closed-form sets", terms=("mw_fill_drain",))
def fill_drain_value(inst: Instance) -> Fraction:
    """MW2 evaluated exactly (fused). ``fill_drain_value(Instance(P=3, m=2, v=2))`` is 18."""
    return (inst.v * inst.m + inst.P - 1) * (inst.f + inst.b)


@theorem("MW3", "last stage", MULTI + "B.3 MW1 and its closed-form sets", terms=("mw_last_stage",))
def last_stage_value(inst: Instance) -> Fraction:
    """MW3 evaluated exactly (fused)."""
    return (inst.m + inst.S - 1) * (inst.f + inst.b)


@theorem("MW4", "vshape adjacent pair", MULTI + "B.3 MW1 and its closed-form sets", terms=("mw_vshape_pair",))
@theorem("MW6b", "vshape m <= P construction", MULTI + "B.5 MW6 (vshape, `v = 2`)", lemma=True)
def vshape_pair_value(inst: Instance) -> Fraction:
    """MW4 evaluated exactly (fused, vshape)."""
    return inst.S * (inst.f + inst.b) + 2 * (inst.m - 1) * max(inst.f, inst.b)


# --------------------------------------------------------------------------- exactness
def _named(inst: Instance) -> bool:
    return inst.placement in ("looped", "vshape") and inst.c == 0


@theorem("MW5", "looped optimum", MULTI + "B.4 MW5 (looped optimum)", terms=("mw_looped_opt",),
         exact=lambda i: exact_case(i) == "looped")
def looped_opt_value(inst: Instance) -> Fraction:
    """MW5 evaluated exactly: ``(P - 1 + (v-1) max(m, P) + m)(f + b)``.

    >>> looped_opt_value(Instance(P=4, m=2, v=2, f=1, b=2))
    Fraction(27, 1)
    """
    return (inst.P - 1 + (inst.v - 1) * max(inst.m, inst.P) + inst.m) * (inst.f + inst.b)


@theorem("MW6", "vshape optimum (v = 2)", MULTI + "B.5 MW6 (vshape, `v = 2`)",
         terms=("mw_vshape_opt",), exact=lambda i: exact_case(i) == "vshape")
@theorem("MW6a", "vshape periodic construction (f = b)", MULTI + "B.5 MW6 (vshape, `v = 2`)",
         lemma=True)
def vshape_opt_value(inst: Instance) -> Fraction:
    """:func:`vshape_opt_expr` evaluated exactly (``v = 2``; a lower bound, see there).

    >>> vshape_opt_value(Instance(P=4, m=3, v=2, placement="vshape", f=1, b=2))
    Fraction(32, 1)
    """
    return max(fill_drain_value(inst), vshape_pair_value(inst))


def exact_case(inst: Instance) -> Optional[str]:
    """Which theorem's exact case ``inst`` is in (a pure condition, no search): ``"looped"``
    for MW5 (fused looped, ``K`` None or ``K >= v m``, the breadth-first schedule's peak),
    ``"vshape"`` for MW6's closed forms (fused vshape, ``v = 2``, ``K`` None, and ``m <= P``
    (MW6b) or ``f = b`` with ``P | m`` (MW6a)), or None. Elsewhere MW6 holds per instance when a
    certificate schedule reaches MW1; that is decided by :mod:`pipebounds.certify`."""
    if inst.v < 2 or inst.split or not _named(inst):
        return None
    if inst.placement == "looped":
        return "looped" if inst.K is None or inst.K >= inst.v * inst.m else None
    if inst.placement == "vshape" and inst.v == 2 and inst.K is None and (
            inst.m <= inst.P or (inst.f == inst.b and inst.m % inst.P == 0)):
        return "vshape"  # MW6b / MW6a closed forms
    return None


def single_microbatch_exact(inst: Instance) -> bool:
    """MW8d: ``m = 1``, ``K = 1``, no delay (every placement, fused or split): MW1 is the
    optimum. With one microbatch the precedence graph of :func:`single_slot_chain` orders the
    ops of every GPU totally (the ``R`` of a lower stage follows the release of every higher
    stage of the GPU, and precedes its backward), so its ASAP timing is a schedule; it holds
    one activation per GPU (the top stage's from ``F`` to its release, then each recomputed
    one from ``R`` to its release, in turn), and its makespan is the longest path, which MW1
    with the single op type on that path attains (docs/theory_multiwave.md, MW8d)."""
    return inst.m == 1 and inst.K == 1 and not inst.c


# --------------------------------------------------------------------------- hook
def v1_terms(inst: Instance) -> list[Term]:
    """The multi-wave theorems whose proofs hold at ``v = 1`` and add to
    :func:`bounds.single_wave.terms` (:func:`bounds.evaluate.lower_bound` takes both):
    MW11 (:func:`first_backward_value`) for split instances with finite ``K < m``. Fused it is
    ``T1 - (k - 1) f``, split with ``K >= m`` at most S2 (``k = m``, drain ``<= p b_I``): no
    term there.

    >>> [(n, str(x)) for n, x, _ in v1_terms(Instance(P=3, m=7, K=3, f=1, b_I=3, b_W=3))]
    [('mw_first_backward', '55')]
    """
    if inst.v != 1:
        raise ValueError("bounds.multi_wave.v1_terms needs v = 1")
    if not inst.split or inst.K is None or inst.K >= inst.m:
        return []
    return [("mw_first_backward", first_backward_value(inst), False)]  # type: ignore[list-item]


def terms(inst: Instance) -> list[Term]:
    """The multi-wave terms for :func:`bounds.evaluate.lower_bound` (``v >= 2``):
    ``(name, exact value, exact?)``; ``exact`` only for the proven exact cases MW5, MW6 and
    MW8d (:func:`bounds.theorems.term_exact`).

    >>> [(n, str(val), ex) for n, val, ex in terms(Instance(P=3, m=2, v=2, f=1, b=2))]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('mw_fill_drain', '18', False), ('mw_last_stage', '21', False),
     ('mw_gpu_subset', '21', False), ('mw_looped_opt', '21', True)]
    """
    out: list[Term] = []
    case = exact_case(inst)
    if not inst.split and inst.placement in ("looped", "vshape"):
        out.append(("mw_fill_drain", fill_drain_value(inst), False))
    if not inst.split:
        out.append(("mw_last_stage", last_stage_value(inst), False))
    if not inst.split and inst.placement == "vshape":
        out.append(("mw_vshape_pair", vshape_pair_value(inst), False))
    out.append(("mw_gpu_subset", gpu_subset_value(inst), term_exact("mw_gpu_subset", inst)))
    mem = memory_slots_value(inst)
    if mem is not None:
        out.append(("mw_memory_slots", mem, False))
    forced = forced_remat_value(inst)
    if forced is not None:
        out.append(("mw_forced_remat", forced, False))
    forced_v = vshape_forced_remat_value(inst)
    if forced_v is not None:
        out.append(("mw_vshape_forced_remat", forced_v, False))
    slot = single_slot_value(inst)
    if slot is not None:
        out.append(("mw_single_slot", slot, False))
    split_slot = split_single_slot_value(inst)
    if split_slot is not None:
        out.append(("mw_split_single_slot", split_slot, False))
    first = first_backward_value(inst)
    if first is not None:
        out.append(("mw_first_backward", first, False))
    first_top = first_backward_top_value(inst)
    if first_top is not None:
        out.append(("mw_first_backward_top", first_top, False))
    last = last_forward_value(inst)
    if last is not None:
        out.append(("mw_last_forward", last, False))
    if case == "looped":
        out.append(("mw_looped_opt", looped_opt_value(inst), term_exact("mw_looped_opt", inst)))
    elif case == "vshape":
        out.append(("mw_vshape_opt", gpu_subset_value(inst), term_exact("mw_vshape_opt", inst)))
    return out
