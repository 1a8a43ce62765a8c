"""The ``K = 1`` family of list schedules (which activations each GPU keeps, the order of the
backward passes) and the candidates read off Theorem 3's minimisers.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional, Sequence

from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule


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
