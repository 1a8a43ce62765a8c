"""Constructive schedules that reach the single-wave (``v = 1``) lower bounds (docs/theory.md).

* :func:`one_f_one_b` -- 1F1B (fused backward): makespan ``(m + P - 1)(f + b)`` with GPU ``p``
  holding ``min(P - p, m)`` activations. It reaches Theorem 1, so it is optimal whenever
  ``K >= min(m, P)`` (Theorem 1, exact case).
* :func:`single_group_schedule` -- ``K = 1`` (fused), ``m <= 2 + floor(b/f)``: one group per
  GPU; proven to reach T1 ``= (m + P - 1)(f + b)`` (so ``K = 1`` costs nothing there).
* :func:`two_gpu_schedule` -- ``K = 1``, ``P = 2`` (fused): explicit groups (a kept microbatch,
  the free forwards its hold absorbs, their recomputes); proven to reach Theorem 3 for every
  ``m, f, b`` (proof in its docstring).
* :func:`single_slot_search` -- ``K = 1`` (fused): a depth-first search with a node budget,
  pruned per GPU by Theorem 3's own argument (plus the hold in progress), verified by
  simulation; returns a schedule only at Theorem 3's bound.
* :func:`single_slot_schedule` -- ``K = 1`` (fused): the explicit schedules above, then
  :func:`single_slot_search`, then a polynomial-time search over a family of list schedules
  (which activations each GPU keeps, the order the backward passes run in); returns a
  schedule only when its makespan *equals* Theorem 3's bound, hence proven optimal; None
  otherwise. Theorem 3 is not reachable on every instance: ``P = 3, m = 12, f = 5, b = 3``
  has ``T3 = 144`` but no schedule ends before 145 (GPUs 0 and 1 both have zero slack and
  their tight first holds conflict).
* :func:`optimal_schedule` -- the dispatcher hook: one of the above when it is proven optimal,
  else None.

>>> from schedules import Instance, simulate
>>> s = optimal_schedule(Instance(P=3, m=4, K=1, f=3, b=2))
>>> simulate(s).makespan, max(simulate(s).peak_memory)
(Fraction(34, 1), 1)
"""

from __future__ import annotations

import random
from fractions import Fraction
from functools import lru_cache
from typing import Optional, Sequence

from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule
from schedules.simulate import simulate


def _backward_kinds(inst: Instance) -> tuple[str, ...]:
    """The backward ops of one pair, in order: ``("B",)`` fused, ``("I", "W")`` split."""
    return ("I", "W") if inst.split else ("B",)


# --------------------------------------------------------------------------- 1F1B
def one_f_one_b(inst: Instance) -> Schedule:
    """1F1B for ``v = 1``, fused backward: GPU ``p`` runs ``w = min(P - p - 1, m)`` warm-up
    forwards, then alternates forward/backward, then drains its backwards.

    Its ASAP makespan is ``(m + P - 1)(f + b)`` and GPU ``p`` peaks at ``min(P - p, m)`` live
    activations (checked exhaustively by proofs_checks).
    """
    if inst.v != 1 or inst.split:
        raise ValueError("one_f_one_b builds v = 1 fused-backward schedules")
    from schedules.generators.one_f_one_b import one_f_one_b as generator

    sched = generator(inst)
    return Schedule(inst, sched.orders, source="1F1B (constructions.single_wave)")


# --------------------------------------------------------------------------- K = 1 family
def list_schedule(inst: Instance, kept: Sequence[Sequence[bool]], sigma: Sequence[int],
                  priority: str = "BRF") -> Optional[Schedule]:
    """A ``K = 1`` list schedule of the family :func:`single_slot_schedule` searches.

    ``kept[p][j]``: GPU ``p < P-1`` stores ``F(j, p)`` (else it recomputes ``(j, p)`` just before
    its backward). ``sigma``: the order of the backward passes, one list for every GPU or one
    list per GPU; the last GPU runs
    ``F(j), B(j)`` back to back in that order (it never recomputes). GPUs ``p < P-1`` run their
    forwards in microbatch order. Ops start as early as the rules allow (non-delay list
    scheduling; ties between a GPU's candidates go by ``priority``, the op kinds ``B R F``
    from first to last). Returns None on deadlock.
    """
    built = _list_orders(inst, kept, sigma, priority)
    return None if built is None else built[0]



def _list_orders(inst: Instance, kept: Sequence[Sequence[bool]], sigma: Sequence[int],
                 priority: str = "BRF") -> Optional[tuple[Schedule, Fraction]]:
    """The list schedule of :func:`list_schedule` and its ASAP makespan (its start times are
    the ASAP times of the orders it emits)."""
    P, m = inst.P, inst.m
    if sigma and not isinstance(sigma[0], int):
        orders_b = [list(sg) for sg in sigma]
    else:
        orders_b = [list(sigma)] * P
    u = inst.unit
    f, b = int(inst.f * u), int(inst.b * u)
    INF = None
    fend = [[INF] * m for _ in range(P)]
    bend = [[INF] * m for _ in range(P)]
    rend = [[INF] * m for _ in range(P)]
    free = [0] * P
    live = [0] * P
    fseq: list[list[tuple[str, int]]] = []
    bseq: list[list[tuple[str, int]]] = []
    for p in range(P):
        if p == P - 1:
            fseq.append([])
            bseq.append([(k, j) for j in orders_b[p] for k in ("F", "B")])
        else:
            fseq.append([("F", j) for j in range(m)])
            bs = []
            for j in orders_b[p]:
                if not kept[p][j]:
                    bs.append(("R", j))
                bs.append(("B", j))
            bseq.append(bs)
    fi = [0] * P
    bi = [0] * P
    orders: list[list[Op]] = [[] for _ in range(P)]
    total = sum(len(fseq[p]) + len(bseq[p]) for p in range(P))
    for _ in range(total):
        best = None
        for p in range(P):
            if bi[p] < len(bseq[p]):
                kind, j = bseq[p][bi[p]]
                cand = None
                if kind == "F":  # last GPU, stored
                    ready = 0 if p == 0 else fend[p - 1][j]
                    if ready is not None and live[p] < 1:
                        cand = max(free[p], ready)
                elif kind == "R":
                    if fend[p][j] is not None and live[p] < 1:
                        cand = max(free[p], fend[p][j])
                else:
                    nxt = bend[p + 1][j] if p < P - 1 else fend[p][j]
                    stored = p == P - 1 or kept[p][j] or rend[p][j] is not None
                    if nxt is not None and fend[p][j] is not None and stored:
                        cand = max(free[p], nxt)
                if cand is not None:
                    key = (cand, priority.index(kind), p)
                    if best is None or key < best[0]:
                        best = (key, p, kind, j, "b")
            if fi[p] < len(fseq[p]):
                _, j = fseq[p][fi[p]]
                ready = 0 if p == 0 else fend[p - 1][j]
                if ready is not None and (not kept[p][j] or live[p] < 1):
                    key = (max(free[p], ready), priority.index("F"), p)
                    if best is None or key < best[0]:
                        best = (key, p, "F", j, "f")
        if best is None:
            return None
        (start, _, _), p, kind, j, side = best
        end = start + (f if kind in "FR" else b)
        free[p] = end
        if kind == "F":
            fend[p][j] = end
            if p == P - 1 or kept[p][j]:
                live[p] += 1
        elif kind == "R":
            rend[p][j] = end
            live[p] += 1
        else:
            bend[p][j] = end
            live[p] -= 1
        if side == "f":
            fi[p] += 1
        else:
            bi[p] += 1
        orders[p].append(Op(p, kind, j))
    sched = Schedule(inst, tuple(tuple(o) for o in orders),
                     source="K=1 list schedule (constructions.single_wave)")
    return sched, Fraction(max(free), u)


def _reaching(sched: Schedule, target: Fraction) -> Optional[Schedule]:
    """``sched`` if it is valid (so, with ``K = 1``, one activation per GPU) and its simulated
    makespan is ``target``, else None: every construction here returns only such schedules."""
    return sched if _makespan(sched) == target else None


def _makespan(sched: Optional[Schedule]) -> Optional[Fraction]:
    if sched is None:
        return None
    res = simulate(sched)
    return res.makespan if res.valid else None


def _allocation(inst: Instance, gpu: int) -> tuple[list[int], int]:
    """Theorem 3's minimiser for GPU ``gpu`` as groups: ``(sizes, parked)``. Each group is one
    kept microbatch followed by the free forwards its hold absorbs (``c`` each, ``c + 1`` for the
    first ``min(x, N - x c)`` of them); ``parked`` forwards are left over (outside every hold)."""
    from bounds.single_wave import single_slot_choice

    d = inst.P - gpu
    G = (d - 1) * (inst.f + inst.b)
    c = int(G // inst.f)
    x_ = single_slot_choice(inst, gpu)[0]
    if x_ == 0:
        return [], inst.m
    N = inst.m - x_
    big = min(x_, max(0, N - x_ * c))
    sizes = [c + 2] * big + [c + 1] * (x_ - big)
    return sizes, max(0, N - x_ * (c + 1))


def _group_size(inst: Instance, gpu: int) -> int:
    """``q + 1`` with ``q = ceil((d-1)(f+b)/f)``: a kept microbatch and the free forwards that
    cover its hold's gap."""
    G = (inst.P - gpu - 1) * (inst.f + inst.b)
    return int(-((-G) // inst.f)) + 1


def _kept_from(sizes: list[int], start: int, m: int) -> list[bool]:
    kept = [False] * m
    j = start
    for size in sizes:
        if j >= m:
            break
        kept[j] = True
        j += size
    return kept


def _cyclic_order(kept: list[bool], m: int, park_first: bool) -> list[int]:
    """A GPU's backward order: each kept microbatch, then the free ones of its group in reverse;
    microbatches before the first kept one (and, with ``park_first``, the first free one of the
    first group) last."""
    starts = [j for j in range(m) if kept[j]]
    if not starts:
        return list(range(m))
    out, tail = [], list(range(starts[0]))
    for g, h in enumerate(starts):
        end = starts[g + 1] if g + 1 < len(starts) else m
        free = list(range(h + 1, end))
        if park_first and g == 0 and free:
            tail.append(free.pop(0))
        out += [h] + free[::-1]
    return out + tail


def _structured_starts(inst: Instance):
    """Candidate (kept, sigma, priority) triples read off Theorem 3's minimisers
    (:func:`_allocation`): GPU ``p`` keeps the first microbatch of each of its groups, the
    groups laid from ``e`` on (``e`` common to all GPUs, or each GPU's own parked count), sizes
    in either order; the backward order sorts by the first GPU that keeps a microbatch (then by
    index, either way), or is the identity, or the rotation by ``e``."""
    P, m = inst.P, inst.m
    alloc = [_allocation(inst, q) for q in range(P - 1)]
    layouts = [[(sizes, e) for sizes, _ in alloc] for e in range(m)]
    layouts.append([(sizes, parked) for sizes, parked in alloc])
    # uniform groups of q_p + 1 (q_p = ceil((d-1)(f+b)/f)), x_p of them, or one more or fewer
    for e in range(m):
        for extra in (0, 1, -1):
            layouts.append([([_group_size(inst, q)] * max(0, len(sizes) + extra), e)
                            for q, (sizes, _) in enumerate(alloc)])
    for layout in layouts:
        for rev in (False, True):
            kept = [_kept_from(sizes[::-1] if rev else sizes, e, m) for sizes, e in layout]
            kept.append([True] * m)
            first = [min(q for q in range(P) if kept[q][j]) for j in range(m)]
            e0 = layout[0][1] if layout else 0
            sigmas = [sorted(range(m), key=lambda j: (first[j], j)),
                      sorted(range(m), key=lambda j: (first[j], -j)),
                      list(range(m)), list(range(e0, m)) + list(range(e0))]
            # per GPU: each kept microbatch, then the free ones of its group (reversed), parked
            # ones last; the last GPU follows GPU P-2
            for park_first in (False, True):
                per_gpu = [_cyclic_order(kept[q], m, park_first) for q in range(P - 1)]
                per_gpu.append(per_gpu[-1] if per_gpu else list(range(m)))
                sigmas.append(per_gpu)
            for sigma in sigmas:
                for prio in ("BRF", "BFR", "FBR"):
                    yield kept, sigma, prio


# --------------------------------------------------------------------------- K = 1, small m
def single_group_schedule(inst: Instance) -> Schedule:
    """One group on every GPU (``K = 1``, fused): GPU ``p < P-1`` runs ``F(0)`` (kept),
    ``F(1) .. F(m-1)`` (free), ``B(0)``, then ``R(j) B(j)`` for ``j = 1 .. m-1``; the last GPU
    runs ``F(j) B(j)`` in order. When ``m <= 2 + floor(b/f)`` its makespan is T1
    ``= (m + P - 1)(f + b)``, so memory ``K = 1`` costs nothing and T3 (= T1) is exact.

    Proof. Forwards run back to back: ``F(j, p)`` on ``[(p+j) f, (p+j+1) f]`` for ``p < P-1``;
    the last GPU is busy from ``(P-1) f``, pair ``j`` ending at ``P f + b + j B``
    (``B = f + b``; each forward has arrived in time as ``f <= B``). GPU ``p``'s free forwards
    end at ``(p+m) f <= (P-2+m) f <= P f + b`` (this is ``m <= 2 + b/f``), so ``B(0, p)`` follows
    ``B(0, p+1)`` at once and ends at ``P f + (P-p) b``. By induction (downwards in ``p``,
    upwards in ``j``) ``B(j, p)`` ends at ``E(j, p) = P f + (P-p) b + j B``: ``R(j, p)`` starts
    at ``E(j-1, p)`` and ``B(j, p)`` at ``max(E(j-1, p) + f, E(j, p+1)) = E(j, p) - b`` as
    ``f + b = B``. The makespan is ``E(m-1, 0) = (m + P - 1) B``; GPU ``p < P-1`` holds ``0``
    until ``B(0)`` and then each recomputed pair from ``R`` to ``B``: one activation. ∎

    Split backward (every ``B`` is ``I W``): when ``m <= 2 + b_I/f`` its makespan is
    ``(P-1)(f + b_I) + m (f + b_I + b_W)``, T3's split form on GPU ``P-1``, so T3 (split) is
    exact there (docs/theory.md section 6; the same induction with ``E(j, p) = P f +
    (P-p) b_I + j B``, ``B = f + b_I + b_W``, the ``W`` ops following their ``I`` at once).

    >>> from bounds.single_wave import single_slot_value
    >>> inst = Instance(P=5, m=4, K=1, f=1, b=2)
    >>> simulate(single_group_schedule(inst)).makespan, single_slot_value(inst)
    (Fraction(24, 1), Fraction(24, 1))
    >>> inst = Instance(P=5, m=4, K=1, f=1, b_I=2, b_W=3)
    >>> simulate(single_group_schedule(inst)).makespan, single_slot_value(inst)
    (Fraction(36, 1), Fraction(36, 1))
    """
    if inst.v != 1:
        raise ValueError("single_group_schedule builds v = 1 schedules")
    P, m = inst.P, inst.m
    back = _backward_kinds(inst)
    orders = []
    for p in range(P - 1):
        ops = [Op(p, "F", j) for j in range(m)] + [Op(p, k, 0) for k in back]
        for j in range(1, m):
            ops += [Op(p, "R", j)] + [Op(p, k, j) for k in back]
        orders.append(tuple(ops))
    orders.append(tuple(Op(P - 1, k, j) for j in range(m) for k in ("F",) + back))
    return Schedule(inst, tuple(orders), source="K=1 single group (constructions.single_wave)")


# --------------------------------------------------------------------------- K = 1, P = 2
def two_gpu_schedule(inst: Instance) -> Schedule:
    """The explicit ``K = 1`` schedule for ``P = 2``; it reaches Theorem 3 for every
    ``m, f, b`` (proof below; checked by tests/test_single_slot_construction.py). Split
    backward: every ``B`` below is ``I W`` and ``B = f + b_I + b_W``; it reaches T3's split form
    (``G = f + b_I``; the same proof with ``e0 = s + f + max(a f, f + b_I)``, docs/theory.md
    section 6).

    GPU 0 keeps ``x = argmin_{1 <= x <= m} W_0(x)`` microbatches and forwards the other
    ``N = m - x`` freely, spread as evenly as possible over the ``x`` holds (``a_i`` of them in
    hold ``i``). Group ``i`` (microbatches numbered consecutively) is, on GPU 0,
    ``F(k) F(a_1) .. F(a_{a_i}) B(k) R(a_1) B(a_1) .. R(a_{a_i}) B(a_{a_i})`` and on GPU 1
    ``F(k) B(k) F(a_1) B(a_1) ..``.

    Proof. Let group ``i`` start at ``s`` with GPU 1 idle from ``s + f``. GPU 1 runs
    ``F(k), B(k)`` on ``[s+f, s+f+B]``; GPU 0 runs the ``a`` free forwards on
    ``[s+f, s+(a+1)f]`` and ``B(k)`` from ``e0 = s + f + max(a f, B)``. GPU 1 runs the pairs of
    the free ones back to back, the ``l``-th ending at ``s + f + (l+1) B``, while GPU 0's
    ``R(a_l)`` ends at ``e0 + (l-1) B + f >= s + f + (l+1) B`` (as ``max(a f, B) >= B``): GPU 0
    never waits after the hold, and GPU 1 is done by ``e0 + a B - b``, before the next group.
    So GPU 0 is busy from 0 to the end except inside holds, where it idles
    ``max(0, B - a_i f)``, and the makespan is ``m B + N f + sum_i max(0, B - a_i f)``. With
    ``c = floor(B/f)``, ``r0 = B - c f`` and an even spread this sum is
    ``x B - f min(N, x c) - r0 min(x, max(0, N - x c))`` (a hold with ``a <= c`` idles
    ``B - a f``; with ``a >= c + 1`` it idles 0 ``= B - c f - r0``), i.e. the makespan is
    ``W_0(x)`` of Theorem 3. It equals T3: if T3's minimum over ``x`` is at ``x >= 1`` this is
    immediate; if it is at ``x = 0`` then either ``m - 1 >= c`` and ``W_0(1) < W_0(0)``, or
    ``W_0(1) = (m + 1) B``, which is T1 (GPU 1's term) and at most T3. ∎

    >>> from bounds.single_wave import single_slot_value
    >>> inst = Instance(P=2, m=7, K=1, f=3, b=1)
    >>> simulate(two_gpu_schedule(inst)).makespan, single_slot_value(inst)
    (Fraction(42, 1), Fraction(42, 1))
    """
    from bounds.single_wave import _single_slot_W

    if inst.P != 2 or inst.v != 1:
        raise ValueError("two_gpu_schedule builds P = 2, v = 1 schedules")
    m = inst.m
    bc = inst.b_I if inst.split else inst.b
    x_ = min(range(1, m + 1), key=lambda xx: (_single_slot_W(m, 2, inst.f, inst.b, xx, bc), xx))
    N = m - x_
    sizes = [N // x_ + (1 if i < N % x_ else 0) for i in range(x_)]
    back = _backward_kinds(inst)
    gpu0: list[Op] = []
    gpu1: list[Op] = []
    j = 0
    for a in sizes:
        k, free = j, list(range(j + 1, j + 1 + a))
        j += 1 + a
        gpu0 += ([Op(0, "F", k)] + [Op(0, "F", i) for i in free]
                 + [Op(0, kind, k) for kind in back])
        for i in free:
            gpu0 += [Op(0, "R", i)] + [Op(0, kind, i) for kind in back]
        for i in [k] + free:
            gpu1 += [Op(1, "F", i)] + [Op(1, kind, i) for kind in back]
    return Schedule(inst, (tuple(gpu0), tuple(gpu1)),
                    source="K=1 two-GPU groups (constructions.single_wave)")


# --------------------------------------------------------------------------- K = 1 bounded search
def _waste_floor(n: int, G: int, f: int) -> int:
    """``min_x W_p(x) - n B`` for ``n`` microbatches (integer units): the least idle plus
    recompute time a GPU with gap ``G`` must spend on ``n`` pairs it has not forwarded yet
    (Theorem 3's argument applied to the rest of the window)."""
    from bounds.single_wave import single_slot_waste

    return min(single_slot_waste(n, G, f, x_) for x_ in range(n + 1))


class _Found(Exception):
    pass


class _OutOfNodes(Exception):
    pass


def _bounded_search(P: int, m: int, f: int, b: int, T: int, nodes: int,
                    rng: Optional[random.Random] = None, tie_high: bool = False,
                    last_free: bool = False, width_f: int = 2, width_r: int = 3,
                    always_wait: bool = False, plan: bool = False):
    """Depth-first search for ``K = 1`` per-GPU orders finishing by ``T`` (integer units),
    at most ``nodes`` nodes; returns ``(orders, nodes used)``, orders None when not found.

    Chronological: the GPU with the earliest free time chooses its next op among: the backward
    of the activation it holds, a forward (kept or free) of one of the ``width_f`` earliest
    arrived microbatches, a recompute of one of ``width_r`` pending free pairs (those whose
    backward from the GPU below is known/earliest first), or waiting for the next event.
    Pruning is Theorem 3 itself, per GPU: the window of GPU ``p`` has
    ``T - p B - m B`` units of slack for idle time and recomputes; idle and recomputes spent so
    far, plus one recompute per pending free pair, plus the least waste of the pairs not yet
    forwarded (:func:`_waste_floor`), plus the unavoidable gap of the hold in progress, must fit.
    ``rng`` perturbs the candidate order (restarts; the tree itself does not depend on it),
    ``tie_high`` breaks time ties towards later GPUs, ``last_free`` lets the last GPU recompute
    too, ``always_wait`` lets a GPU wait even with an empty slot and something to run,
    ``plan`` tries free forwards before kept ones once a GPU keeps as many as Theorem 3's
    minimiser ``x`` (the order of the tries only).
    ``orders`` None with fewer than ``nodes`` nodes used means the whole tree was searched.

    Unrestricted (``width_f = width_r = m``, ``always_wait``, ``last_free``) the tree holds
    every semi-active ``K = 1`` schedule up to relabelling interchangeable microbatches (an
    op starts at its GPU's clock or at its known predecessor's end; a wait never passes the
    end of an op not yet placed; of two microbatches in the same state only the one whose
    past ends are earliest is tried), and the pruning only drops states that Theorem 3's
    argument rules out: a searched-out tree then means that no schedule ends by ``T``
    (argued, not machine-proven; it finds a schedule at T3 on all 608 independently solved
    instances ``P <= 5, m <= 8``, every coprime ``f : b`` up to 5).
    """
    B = f + b
    floor_ = [[_waste_floor(n, (P - p - 1) * B, f) for n in range(m + 1)] for p in range(P)]
    slack = [T - p * B - m * B for p in range(P)]
    if min(slack) < 0:
        return None, 0
    fend = [[-1] * m for _ in range(P)]
    bend = [[-1] * m for _ in range(P)]
    kept: list[list[Optional[bool]]] = [[None] * m for _ in range(P)]
    redone = [[False] * m for _ in range(P)]
    slot, t, waste = [-1] * P, [p * f for p in range(P)], [0] * P
    nf, nb, pend = [0] * P, [0] * P, [0] * P
    orders: list[list[tuple[str, int]]] = [[] for _ in range(P)]
    arrived: list[list[int]] = [list(range(m))] + [[] for _ in range(P - 1)]
    count = [0]
    noise = 0 if rng is None else rng.choice((0, f, B))
    latest_b = [T - p * b for p in range(P)]
    rank = {"B": 0, "R": 1, "Fk": 2, "Ff": 3}
    late = {"B": 0, "R": 1, "Fk": 3, "Ff": 2}  # once x pairs are kept (plan)
    from bounds.single_wave import single_slot_waste

    xstar = [min(range(m + 1), key=lambda x_: (single_slot_waste(m, (P - p - 1) * B, f, x_), x_))
             for p in range(P)]
    nkept = [0] * P

    def feasible(p: int) -> bool:
        n = m - nf[p]
        base = waste[p] + pend[p] * f
        if base + floor_[p][n] > slack[p]:
            return False
        s = slot[p]
        if s >= 0 and p < P - 1 and kept[p][s]:
            gap = eta(s, p + 1) - t[p]
            if gap > 0:
                # k free forwards fill the hold, in arrival order (arrived ones, then those
                # GPU p-1 can still deliver, one per f from its clock); the hold ends at the
                # later of the chain's return and the k-th free's end
                if p == 0:
                    arrivals = [t[0]] * n
                else:
                    arrivals = sorted(fend[p - 1][j] for j in arrived[p] if fend[p][j] < 0)
                    arrivals += [t[p - 1] + i * f for i in range(1, n - len(arrivals) + 1)]
                    arrivals.sort()
                ready, end, best = t[p] + gap, t[p], gap + floor_[p][n]
                for k in range(1, n + 1):
                    end = max(end, arrivals[k - 1]) + f
                    best = min(best, max(ready, end) - t[p] + floor_[p][n - k])
                if base + best > slack[p]:
                    return False
        return True

    def signature(j: int) -> tuple:
        """The state of microbatch ``j`` on every GPU, timing aside: two microbatches with the
        same signature are interchangeable, so only the first in a candidate list is tried."""
        return tuple((kept[q][j], redone[q][j], fend[q][j] >= 0, bend[q][j] >= 0)
                     for q in range(P))

    def frontier(j: int) -> tuple[int, int]:
        """The end of ``j``'s last forward and of its lowest backward so far: the only past
        times its remaining ops wait for."""
        last_f = max((fend[q][j] for q in range(P) if fend[q][j] >= 0), default=-1)
        low_b = max((bend[q][j] for q in range(P) if bend[q][j] >= 0), default=-1)
        return last_f, low_b

    def eta(j: int, q: int) -> int:
        """A lower bound on the end of ``B(j, q)`` from the state (GPU clocks included).
        Recompute candidates are tried in this order, so a GPU follows the backward wave
        coming up from below; the hold bound of :func:`feasible` uses it too."""
        if bend[q][j] >= 0:
            return bend[q][j]
        if fend[q][j] >= 0:
            below = t[q] if q == P - 1 else eta(j, q + 1)
            if slot[q] == j:
                return max(t[q], below) + b
            return max(t[q] + f, below) + b  # a pending free pair: R first
        if q == 0:
            start = t[0]
        else:
            start = max(t[q], fend[q - 1][j] if fend[q - 1][j] >= 0 else t[q - 1] + f)
        return start + (P - q) * B

    def step() -> None:
        count[0] += 1
        if count[0] > nodes:
            raise _OutOfNodes
        p = None
        for q in range(P):
            if nb[q] < m and (p is None or t[q] < t[p] or (tie_high and t[q] == t[p])):
                p = q
        if p is None:
            raise _Found
        tp, s = t[p], slot[p]
        cands = []
        order_at: dict[int, int] = {}
        if s >= 0:
            dep = tp if p == P - 1 else bend[p + 1][s]
            if dep >= 0:
                cands.append(("B", s, max(tp, dep)))
        if p < P - 1 or s < 0:
            seen = set()
            for j in arrived[p]:
                if fend[p][j] >= 0:
                    continue
                sig = signature(j)
                if sig in seen:  # an earlier arrival in the same state dominates j
                    continue
                start = max(tp, 0 if p == 0 else fend[p - 1][j])
                if s < 0:
                    cands.append(("Fk", j, start))
                if p < P - 1 or last_free:
                    cands.append(("Ff", j, start))
                seen.add(sig)
                if len(seen) >= width_f:
                    break
        if s < 0:
            pending = [j for j in range(m)
                       if fend[p][j] >= 0 and kept[p][j] is False and not redone[p][j]]
            if p < P - 1:
                pending.sort(key=lambda j: (fend[p + 1][j] < 0, eta(j, p + 1)))
            seen = set()
            for j in pending:
                # interchangeable only with the same past times the future depends on
                sig = signature(j) + (frontier(j),)
                if sig not in seen and len(seen) < width_r:
                    seen.add(sig)
                    cands.append(("R", j, tp))
                    if p < P - 1:  # sorted by when its backward can follow
                        order_at[len(cands) - 1] = max(tp, eta(j, p + 1) - f)
        keyed = [(order_at.get(i, c[2]), c) for i, c in enumerate(cands)]
        rk = late if plan and nkept[p] >= xstar[p] else rank
        if rng is None:
            keyed.sort(key=lambda kc: (kc[0], rk[kc[1][0]]))
        else:
            keyed.sort(key=lambda kc: (kc[0] + rng.random() * noise, rk[kc[1][0]]
                                       + (rng.random() * 2 if kc[1][0] == "Ff" else 0)))
        cands = [c for _, c in keyed]
        for kind, j, start in cands:
            if kind == "B" and start + b > latest_b[p]:
                continue
            saved = (t[p], waste[p], slot[p], pend[p])
            waste[p] += start - tp
            if kind == "B":
                end = start + b
                bend[p][j], slot[p] = end, -1
                nb[p] += 1
            elif kind == "R":
                end = start + f
                redone[p][j], slot[p] = True, j
                waste[p] += f
                pend[p] -= 1
            else:
                end = start + f
                fend[p][j] = end
                nf[p] += 1
                if kind == "Fk":
                    kept[p][j], slot[p] = True, j
                    nkept[p] += 1
                else:
                    kept[p][j] = False
                    pend[p] += 1
                if p + 1 < P:
                    arrived[p + 1].append(j)
            t[p] = end
            orders[p].append((kind[0], j))
            if feasible(p):
                step()
            orders[p].pop()
            if kind == "B":
                bend[p][j] = -1
                nb[p] -= 1
            elif kind == "R":
                redone[p][j] = False
            else:
                if kind == "Fk":
                    nkept[p] -= 1
                fend[p][j], kept[p][j] = -1, None
                nf[p] -= 1
                if p + 1 < P:
                    arrived[p + 1].pop()
            t[p], waste[p], slot[p], pend[p] = saved
        later = [t[q] for q in range(P) if q != p and nb[q] < m and t[q] > tp]
        tied = any(q != p and nb[q] < m and t[q] == tp for q in range(P))
        if (later or tied) and (always_wait or slot[p] >= 0 or not cands):  # wait
            # no unscheduled op can end before nt (a tied GPU's next op ends after tp)
            nt = min(later + ([tp + min(f, b)] if tied else []))
            saved = (t[p], waste[p])
            waste[p] += nt - tp
            t[p] = nt
            if feasible(p):
                step()
            t[p], waste[p] = saved

    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 8 * P * m * 3 + 1000))
    try:
        step()
    except _Found:
        return [list(o) for o in orders], count[0]
    except _OutOfNodes:
        return None, count[0]
    finally:
        sys.setrecursionlimit(limit)
    return None, count[0]


def single_slot_search(inst: Instance, nodes: Optional[int] = None) -> Optional[Schedule]:
    """A ``K = 1`` schedule with makespan equal to Theorem 3's bound found by the bounded
    depth-first search :func:`_bounded_search` (restarts with growing node budgets, cycling
    through the unrestricted rules and 16 narrower variants, dropping a variant whose whole
    tree was searched, and stopping when the unrestricted tree was; total ``nodes``, default
    ``2000 P m``: polynomial), verified by :func:`simulate`; else None.

    >>> s = single_slot_search(Instance(P=3, m=10, K=1, f=1, b=1))
    >>> r = simulate(s); r.makespan, max(r.peak_memory)
    (Fraction(29, 1), 1)
    """
    if inst.v != 1 or inst.split or inst.K != 1 or inst.c:
        return None
    from bounds.single_wave import single_slot_value

    total = nodes if nodes is not None else 2000 * inst.P * inst.m
    target = single_slot_value(inst)
    u = inst.unit
    f, b, T = int(inst.f * u), int(inst.b * u), int(target * u)
    P, m = inst.P, inst.m
    complete = dict(width_f=m, width_r=m, always_wait=True, last_free=True)
    alive = [complete] + [dict(tie_high=th, last_free=lf, width_f=w[0], width_r=w[1],
                               always_wait=aw, plan=True)
                          for aw in (False, True) for w in ((2, 3), (3, 5))
                          for lf in (False, True) for th in (False, True)]
    used, attempt, chunk = 0, 0, 500
    while used < total and alive:
        config = alive[attempt % len(alive)]
        rng = None if attempt < len(alive) else random.Random(attempt)
        budget = min(chunk, total - used)
        orders, spent = _bounded_search(P, m, f, b, T, budget, rng=rng, **config)
        used += spent
        attempt += 1
        chunk = int(chunk * 1.1) + 1
        if orders is not None:
            # a found timing is a timing of its orders, so the check cannot fail
            return _reaching(Schedule(inst, tuple(tuple(Op(p, k, j) for k, j in o)
                                                  for p, o in enumerate(orders)),
                                      source="K=1 bounded search (constructions.single_wave)"),
                             target)
        if spent < budget:  # this tree holds no schedule: drop it
            if config is complete:  # every other tree is a part of this one
                return None
            alive.remove(config)
    return None


def single_slot_schedule(inst: Instance, budget: Optional[int] = None,
                         nodes: Optional[int] = None, quick: bool = False) -> Optional[Schedule]:
    """A ``K = 1`` schedule whose makespan equals Theorem 3's bound, or None.

    For ``P = 2`` the explicit :func:`two_gpu_schedule` (proven). Otherwise the bounded search
    :func:`single_slot_search` (``nodes``, default ``2000 P m``), then structured starts
    (:func:`_structured_starts`, ``96 m + 24`` of them, read off the minimisers of Theorem 3),
    then a deterministic hill climb (seeded by the instance) over
    the kept sets, the backward order and the tie-break priority, ``budget`` moves (default
    ``10 P m``). Time ``O(m + budget)`` list schedules of ``O(P^2 m)`` each plus ``nodes``
    search nodes of ``O(P + m)`` each: polynomial. Only a schedule whose simulated makespan
    equals the bound is returned. ``quick``: the explicit schedules and the search only (no
    list family), for callers that need an answer fast (:mod:`pipebounds.certify`).
    """
    from bounds.single_wave import single_group_exact, single_slot_value

    if inst.v != 1 or inst.split or inst.K != 1:
        return None
    if inst in _REACHED:  # found before (by any budget): it is optimal, no need to search
        return _REACHED[inst]
    sched = _single_slot_schedule(inst, budget, nodes, quick, single_slot_value(inst),
                                  single_group_exact(inst))
    if sched is not None:
        if len(_REACHED) >= _REACHED_MAX:
            del _REACHED[next(iter(_REACHED))]
        _REACHED[inst] = sched
    return sched


_REACHED: dict[Instance, Schedule] = {}
"""Schedules :func:`single_slot_schedule` returned (each reaches T3, so it is optimal and stays
the answer for its instance whatever budget a later call has): ``lower_bound``'s quick
certificate and the solver's known schedules then build it once."""

_REACHED_MAX = 4096


def _single_slot_schedule(inst: Instance, budget: Optional[int], nodes: Optional[int],
                          quick: bool, target: Fraction, small_m: bool) -> Optional[Schedule]:
    """The work of :func:`single_slot_schedule` (``target`` = T3; ``small_m``: Theorem 3c
    applies)."""
    P, m = inst.P, inst.m
    explicit = (one_f_one_b if P == 1 else
                single_group_schedule if small_m else
                two_gpu_schedule if P == 2 and not inst.c else None)
    if explicit is not None:
        sched = _reaching(explicit(inst), target)
        if sched is not None or P == 1:
            return sched
    best: tuple[Fraction, tuple] | None = None

    def consider(kept, sigma, bf):
        nonlocal best
        built = _list_orders(inst, kept, sigma, bf)
        if built is None:
            return None
        sched, T = built
        if best is None or T < best[0]:
            best = (T, ([row[:] for row in kept], sigma, bf), sched)
        return T

    # the search first (on P <= 5, m <= 12 it finds every schedule the list family finds),
    # then the list family and its hill climb as a fallback
    if not inst.c:
        found = single_slot_search(inst, nodes)
        if found is not None:
            return found
    if quick:
        return None
    for kept, sigma, prio in _structured_starts(inst):
        if consider(kept, sigma, prio) == target:
            return _reaching(best[2], target)
    if best is None:
        return None
    rng = random.Random(hash((P, m, inst.f, inst.b)) & 0xFFFFFFFF)
    cur_T, (kept, sigma, bf), _ = best
    if sigma and isinstance(sigma[0], int):
        sigma = [list(sigma) for _ in range(P)]
    for _ in range(budget if budget is not None else 10 * P * m):
        k2 = [row[:] for row in kept]
        s2 = [list(sg) for sg in sigma]
        b2 = bf
        r = rng.random()
        if r < 0.05:
            b2 = rng.choice(("BRF", "BFR", "FBR"))
        elif r < 0.45:
            k2[rng.randrange(P - 1)][rng.randrange(m)] ^= True
        elif r < 0.7:  # move one item in every GPU's order
            item, k = s2[0][rng.randrange(m)], rng.randrange(m)
            for sg in s2:
                sg.remove(item)
                sg.insert(k, item)
        elif r < 0.9:  # move one item in one GPU's order
            sg = s2[rng.randrange(P)]
            sg.insert(rng.randrange(m), sg.pop(rng.randrange(m)))
        else:
            j, val = rng.randrange(m), rng.random() < 0.5
            for q in range(P - 1):
                k2[q][j] = val
        built = _list_orders(inst, k2, s2, b2)
        if built is not None and built[1] <= cur_T:
            sched, T = built
            cur_T, kept, sigma, bf = T, k2, s2, b2
            if T < best[0]:
                best = (T, (kept, sigma, bf), sched)
            if T == target:
                return _reaching(sched, target)
    return None


# --------------------------------------------------------------------------- split, memory not binding
SPLIT_CERTIFICATE_MAX_SIZE = 4096
"""Largest ``P * m`` for which :func:`split_nonbinding_schedule` builds its greedy schedules
(``O(P m log(P m))``; about 0.05 s at ``P m = 4096``)."""


@lru_cache(maxsize=4096)
def split_nonbinding_schedule(inst: Instance) -> Optional[Schedule]:
    """Split backward, ``v = 1``, memory not binding (``K`` None or ``>= m``), no delay: the
    greedy list schedule (``I`` first, then ``F``, then ``W``, oldest microbatch first;
    :func:`schedules.generators.list_scheduler.list_schedule`), never idle or holding a forward
    back for a backward about to arrive, whichever reaches ``max(S1, S2)`` (then that bound is
    the optimum: a certificate; docs/theory.md section 6); None if neither does, outside that
    case, or above :data:`SPLIT_CERTIFICATE_MAX_SIZE`. Cached per instance."""
    from bounds.single_wave import split_drain_value, split_first_input_value

    from schedules.generators.list_scheduler import list_schedule as greedy

    if not inst.split or inst.v != 1 or inst.c or (inst.K is not None and inst.K < inst.m):
        return None
    if inst.P * inst.m > SPLIT_CERTIFICATE_MAX_SIZE:
        return None
    target = max(split_drain_value(inst), split_first_input_value(inst))
    for hold in (False, True):
        sched = greedy(inst, split=True, hold_forward=hold,
                       source="greedy I>F>W (reaches max(S1, S2))")
        res = simulate(sched)
        if res.valid and res.makespan == target:
            return sched
    return None


# --------------------------------------------------------------------------- dispatcher hook
def optimal_schedule(inst: Instance) -> Optional[Schedule]:
    """A schedule proven optimal for ``inst`` (``v = 1``), or None.

    * fused backward, ``K >= min(m, P)`` or unconstrained: 1F1B (Theorem 1 is then exact);
    * fused backward, ``m <= 2 + b/f``, any ``K``: :func:`single_group_schedule` (reaches
      Theorem 1 with one activation per GPU, Theorem 3c);
    * fused backward, ``K = 1``: :func:`single_slot_schedule` (reaches Theorem 3, or None);
    * split backward, ``K = 1``: for ``P = 2`` :func:`two_gpu_schedule`, for ``m <= 2 + b_I/f``
      :func:`single_group_schedule` (both reach T3's split form: Theorems 3b and 3c, split);
    * split backward, memory not binding: a greedy list schedule when it reaches
      ``max(S1, S2)`` (:func:`split_nonbinding_schedule`);
    * anything else (other split backward, ``1 < K < min(m, P)``, ``c > 0``): None, except
      ``m = 1`` where the single microbatch's chain is optimal for every ``K >= 1``.
    """
    if inst.v != 1 or inst.c:
        return None
    if inst.m == 1:
        orders = tuple((Op(p, "F", 0),) + tuple(Op(p, k, 0) for k in _backward_kinds(inst))
                       for p in range(inst.P))
        return Schedule(inst, orders, source="single microbatch chain")
    if inst.split:
        from bounds.single_wave import single_group_split_exact

        greedy = split_nonbinding_schedule(inst)  # reaches max(S1, S2), or None
        if greedy is not None:
            return greedy
        if inst.K != 1:
            return None
        return (two_gpu_schedule(inst) if inst.P == 2 else
                single_group_schedule(inst) if single_group_split_exact(inst) else None)
    if inst.K is None or inst.K >= min(inst.m, inst.P):
        return one_f_one_b(inst)
    from bounds.single_wave import single_group_exact

    if single_group_exact(inst):  # Theorem 3c: T1 with one activation per GPU, any K
        return single_group_schedule(inst)
    if inst.K == 1:
        return single_slot_schedule(inst)
    return None


__all__ = ["one_f_one_b", "list_schedule", "single_slot_schedule", "single_slot_search",
           "split_nonbinding_schedule", "SPLIT_CERTIFICATE_MAX_SIZE",
           "two_gpu_schedule", "single_group_schedule",
           "optimal_schedule"]
