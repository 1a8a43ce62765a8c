"""A list scheduler that rematerializes as it goes: every GPU at its memory limit ``K`` all the time.

:mod:`schedules.generators.list_scheduler` blocks a microbatch's entry while its cap is full and
leaves recomputes to :func:`schedules.remat.fit_memory`, which inserts them into an order made
without them. Here the recompute decision is part of the schedule (docs/synthesis.md,
*Rematerializing list scheduler*), so that a GPU's steady state has the shape the memory bounds
(T2, S3, MW7) describe: its ``K`` slots always full, the kept activations living about their
round trip, the others stored again by an ``R`` just before their backward, in the bubble where
the GPU waits for the gradient:

* **warm-up**: GPU ``p`` lets microbatches in (their forward at its first stage) while fewer
  than ``window[p]`` of them are ahead of its next backward (a throttle, not a memory cap);
  a forward *keeps* its activation when a slot is free (``live + 1 <= keep[p] <= K``), with
  one slot to spare while a pair before it in the GPU's order (below) may still need an ``R``,
  and otherwise runs as a checkpoint, storing nothing; while fewer than ``eager[p]`` are in
  flight a new microbatch comes first (1F1B's rhythm: warm-up, then one forward per backward);
* **steady state**: backwards first (when their gradient has arrived and their activation is
  live), then the recompute ``R`` of the next checkpointed pair once the backward before it
  on its chain has started (``lookahead`` ops before, in general), then forwards, then
  ``W`` (split form: bubble filler, and run first when memory is full);
* **cool-down**: the same rules with no forwards left: the recomputes and deferred ``W`` fill
  the drain.

Recomputes and the throttle follow one fixed order per GPU, the restriction of a global order
of the backward ops, which is a linear extension of the backward chains: key ``A j + (S - 1 -
s)``, then ``j`` (``A = S``: microbatch by microbatch; ``A = 2`` is ZB-V's order on the V-shape
placement, ``A = 3`` V-half's), or, with ``group = G``, ``(j div G, S - 1 - s, j mod G)``
(Megatron's looped order at ``G = P``: a group's backwards chunk by chunk down, its forwards,
keyed ``(j div G, s, j mod G)``, chunk by chunk up). Why this never deadlocks, for every
``K >= 1``, ``v``, placement, fused or split: forwards never wait for memory; ``R`` ops are
issued in that order, so when the first unfinished backward in the global order needs its
``R`` no later pair has been recomputed, and every kept activation stored after that pair's
forward (or while it was still to come) left a slot to spare, and no other could be stored
since, so a slot is free or a ready ``W`` frees one (``keep_first``, a lower keep limit for
the forwards of a GPU's earlier stages, only makes more of them checkpoints, which keeps that
invariant); the throttle admits every microbatch up to ``ceil((S - 1)/A)`` past the GPU's next
backward (``G - 1`` in the looped order: the GPU's next backward is in the first unfinished
one's group or a later one), which covers the first unfinished one's forwards. (A last-stage
pair whose backward is next on its stage may use the spare slot: its backward follows its
forward on the same GPU.)
Memory is counted as MODEL.md does (a kept ``F`` or an ``R`` stores at its start, ``B`` or
``W`` releases at its end), so the peak on every GPU is at most ``K``.

The output is per-GPU orders; :func:`schedules.simulate.simulate` times them ASAP, never later
than the scheduler's own times (an ``R`` held back until its gradient is near may start earlier).

>>> from schedules import Instance, simulate
>>> r = simulate(remat_list_schedule(Instance(P=4, m=8, K=2)))
>>> r.valid, max(r.peak_memory)
(True, 2)
"""

from __future__ import annotations

import heapq
from math import ceil
from typing import Optional, Sequence

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import GeneratorError


def natural_window(inst: Instance, p: int) -> int:
    """Microbatches GPU ``p`` keeps in flight in a tight pipeline: its first stage's round trip
    ``(S - s_p)`` ops pairs over the ``v`` pairs it runs per microbatch (``P - p`` at ``v = 1``,
    1F1B's warm-up)."""
    s_p = min(inst.stages_of(p))
    return max(1, ceil((inst.S - s_p) / inst.v))


def natural_pairs(inst: Instance, p: int) -> int:
    """Pairs GPU ``p`` runs forward before its first backward in Megatron's interleaved 1F1B,
    ``(v - 1) P + 2 (P - p - 1) + 1`` (``P - p`` at ``v = 1``, 1F1B's warm-up): the default
    base of ``eager_pairs``."""
    P = inst.P
    return (inst.v - 1) * P + 2 * (P - p - 1) + 1 if inst.v > 1 else P - p


def remat_list_schedule(inst: Instance, K: Optional[int] = None, split: Optional[bool] = None,
                        window: Optional[Sequence[int]] = None,
                        keep: Optional[Sequence[int]] = None, A: Optional[int] = None,
                        lookahead: int = 1, eager: Optional[Sequence[int]] = None,
                        w_room: int = 0, eager_pairs: Optional[Sequence[int]] = None,
                        group: Optional[int] = None,
                        keep_first: Optional[Sequence[int]] = None,
                        source: str = "") -> Schedule:
    """The rematerializing list schedule of ``inst`` under ``K`` activations per GPU (default
    ``inst.K``; module docstring). ``window[p]``: microbatches admitted past GPU ``p``'s next
    backward (default :func:`natural_window`; raised to the deadlock-free minimum);
    ``keep[p] <= K``: activations a forward may keep (default ``K``); ``eager[p]``: below this
    many microbatches in flight a new one comes first (default: none); ``w_room``: run a ready
    ``W`` first when fewer than this many slots are free; ``eager_pairs[p]``: below this many
    pairs in flight (forwards minus backwards started) a forward comes first; ``A``: the order's
    weight of the microbatch against the chain position (default ``S``: microbatch by
    microbatch); ``lookahead``: an ``R`` becomes eligible once the backward ``lookahead``
    stages up its chain has started. ``keep_first[p]``: the keep limit (as ``keep``) for the
    forwards of GPU ``p``'s stages other than its last, whose activations live longer (default
    ``keep``): a low one leaves the slots to the short-lived last chunk and makes the earlier
    chunks checkpoints. ``group``: Megatron's looped order instead of ``A``'s
    (microbatches in groups of ``group``, default none; ``P`` is interleaved 1F1B's): the key
    of a pair is ``(j div group, S - 1 - s, j mod group)`` for its backward and ``(j div group,
    s, j mod group)`` for its forward, so a GPU runs a group's forwards stage by stage up its
    chunks and their backwards chunk by chunk down (the window is then at least ``group``).
    ``split``: the ``I``/``W`` form (default: the instance's).
    """
    if inst.directions != 1 or inst.overlapped:
        raise GeneratorError("the rematerializing list scheduler needs one direction and no F&B "
                             "ops")
    K = inst.K if K is None else K
    if K is None:
        raise GeneratorError("the rematerializing list scheduler needs a memory limit K")
    if K < 1:
        raise GeneratorError(f"K must be at least 1, got {K}")
    split = inst.split if split is None else split
    if split and not inst.split:
        raise GeneratorError("a split-backward schedule needs b_I and b_W")
    P, m, S, v = inst.P, inst.m, inst.S, inst.v
    A = S if A is None else max(1, int(A))
    u = inst.unit
    grad = "I" if split else "B"
    dur = {k: [int(x * u) for x in inst.durations_of(k)]
           for k in (("F", "I", "W") if split else ("F", "B"))}
    dur["R"] = dur["F"]
    lag = int(inst.c * u)
    gpu = inst.stage_to_rank
    local = [inst.stages_of(p) for p in range(P)]
    entry = [min(st) for st in local]
    G = None if group is None else max(1, int(group))
    if G is None:
        minw = 1 if v == 1 else ceil((S - 1) / A) + 1

        def bkey(j: int, s: int) -> tuple:
            return (A * j + S - 1 - s, j)

        def fkey(j: int, s: int) -> tuple:
            return (A * j + s, j)
    else:
        minw = G

        def bkey(j: int, s: int) -> tuple:
            return (j // G, S - 1 - s, j % G)

        def fkey(j: int, s: int) -> tuple:
            return (j // G, s, j % G)
    win = [max(minw, natural_window(inst, p) if window is None else int(window[p]))
           for p in range(P)]
    kp = [max(0, min(K, K if keep is None else int(keep[p]))) for p in range(P)]
    lookahead = max(1, int(lookahead))
    last = [max(st) for st in local]
    kf = kp if keep_first is None else [min(kp[p], int(keep_first[p])) for p in range(P)]
    eager = None if eager is None else [min(win[p], int(eager[p])) for p in range(P)]
    # the fixed order of each GPU's pairs: the restriction of the global order bkey
    order: list[list[tuple[int, int]]] = []
    for p in range(P):
        pairs = [(j, s) for s in local[p] for j in range(m)]
        pairs.sort(key=lambda js: bkey(*js))
        order.append(pairs)
    pos = [{s: [0] * m for s in local[p]} for p in range(P)]  # a pair's place in its order
    for p in range(P):
        for i, (j, s) in enumerate(order[p]):
            pos[p][s][j] = i
    rptr = [0] * P   # first pair in order that may still need its R
    bptr = [0] * P   # first pair in order whose backward has not ended
    fend = [[-1] * m for _ in range(S)]
    gstart = [[-1] * m for _ in range(S)]
    gend = [[-1] * m for _ in range(S)]
    ckpt = [[False] * m for _ in range(S)]
    rend = [[-1] * m for _ in range(S)]
    bdone = [[False] * m for _ in range(S)]
    nf, nb, nw = [0] * S, [0] * S, [0] * S
    live = [0] * P
    fdone, bcount = [0] * P, [0] * P  # forwards and backwards started on each GPU
    free = [0] * P
    orders: list[list[Op]] = [[] for _ in range(P)]
    # (time, 1 = releases / 0 = not, gpu, stage, microbatch, kind) of each op's end
    events: list[tuple[int, int, int, int, int, str]] = []
    remaining = S * m * (3 if split else 2)
    make = Op.trusted

    def arrived(t_end: int, s_from: int, s_to: int) -> int:
        return t_end + (lag if gpu[s_from] != gpu[s_to] else 0)

    def advance(p: int) -> None:
        seq = order[p]
        while bptr[p] < len(seq) and bdone[seq[bptr[p]][1]][seq[bptr[p]][0]]:
            bptr[p] += 1
        while rptr[p] < len(seq):
            j, s = seq[rptr[p]]
            if fend[s][j] < 0:
                break  # not forwarded yet: it may still be checkpointed
            if ckpt[s][j] and rend[s][j] < 0:
                break
            rptr[p] += 1

    def ready(t_end: int) -> bool:
        return 0 <= t_end <= now

    def ready_forward(p: int, jnext: int) -> Optional[Op]:
        """GPU ``p``'s forward whose input has arrived, least ``(A j + s, j)`` first; the
        entry stage takes no microbatch past the window ``win[p]`` beyond ``jnext``."""
        best, key = None, None
        for s in local[p]:
            j = nf[s]
            if j < m and (s == 0 or (fend[s - 1][j] >= 0
                                     and arrived(fend[s - 1][j], s - 1, s) <= now)):
                if s == entry[p] and j >= jnext + win[p]:
                    continue
                k = fkey(j, s)
                if key is None or k < key:
                    best, key = make(s, "F", j), k
        return best

    def choose(p: int) -> Optional[Op]:
        """The op GPU ``p`` starts at ``now`` (module docstring), None to stay idle."""
        best, bk = None, None
        jnext = order[p][bptr[p]][0] if bptr[p] < len(order[p]) else m
        e = entry[p]
        if eager and nf[e] < m and nf[e] < jnext + eager[p] and (
                e == 0 or (fend[e - 1][nf[e]] >= 0
                           and arrived(fend[e - 1][nf[e]], e - 1, e) <= now)):
            return make(e, "F", nf[e])  # fewer than eager[p] in flight: a new microbatch first
        if eager_pairs is not None and fdone[p] - bcount[p] < eager_pairs[p]:
            fb = ready_forward(p, jnext)  # fewer than eager_pairs[p] pairs in flight
            if fb is not None:
                return fb
        for s in local[p]:  # a backward whose gradient has arrived and whose activation is live
            j = nb[s]
            if j < m and ready(fend[s][j]) and (not ckpt[s][j] or ready(rend[s][j])) and (
                    s == S - 1 or (gend[s + 1][j] >= 0
                                   and arrived(gend[s + 1][j], s + 1, s) <= now)):
                k = bkey(j, s)
                if bk is None or k < bk:
                    best, bk = make(s, grad, j), k
        if best is not None:
            return best
        want_slot = False
        if rptr[p] < len(order[p]):  # the next recompute, in the GPU's order
            j, s = order[p][rptr[p]]
            if ckpt[s][j] and rend[s][j] < 0 and ready(fend[s][j]):
                h = min(lookahead, S - 1 - s)
                if h == 0 or ready(gstart[s + h][j]):
                    if live[p] < K:
                        return make(s, "R", j)
                    want_slot = True
        wbest = None
        if split:
            wkey = None
            for s in local[p]:
                j = nw[s]
                if j < nb[s] and ready(gend[s][j]):
                    k = (j, -s)
                    if wkey is None or k < wkey:
                        wbest, wkey = make(s, "W", j), k
            if wbest is not None and (want_slot or live[p] >= K - w_room):
                return wbest  # memory (nearly) full: release before storing again
        best = ready_forward(p, jnext)
        return best if best is not None else wbest

    now = 0
    wake = [True] * P
    while remaining:
        again = True
        while again:
            again = False
            for p in range(P):
                if not wake[p]:
                    continue
                wake[p] = False
                if free[p] > now:
                    continue
                op = choose(p)
                if op is None:
                    continue
                s, j, kind = op.stage, op.microbatch, op.kind
                end = now + dur[kind][s]
                orders[p].append(op)
                free[p] = end
                remaining -= kind != "R"
                release = False
                if kind == "F":
                    fdone[p] += 1
                    fend[s][j] = end
                    nf[s] += 1
                    flag = rptr[p] < len(order[p]) and rptr[p] < pos[p][s][j]
                    cap = kp[p] if s == last[p] else kf[p]
                    keepit = live[p] + 1 + flag <= cap or (
                        s == S - 1 and nb[s] == j and live[p] + 1 <= K)
                    if keepit:
                        live[p] += 1
                    else:
                        ckpt[s][j] = True
                    advance(p)
                elif kind == "R":
                    rend[s][j] = end
                    live[p] += 1
                    advance(p)
                elif kind == grad:
                    bcount[p] += 1
                    gstart[s][j] = now
                    gend[s][j] = end
                    nb[s] += 1
                    release = not split
                    for h in range(1, lookahead + 1):  # an R there may now be eligible
                        if s - h >= 0:
                            q = gpu[s - h]
                            wake[q] = True
                            again = again or q < p
                else:  # W
                    nw[s] += 1
                    release = True
                heapq.heappush(events, (end, 1 if release else 0, p, s, j, kind))
                if lag and kind in ("F", grad):  # its successor on another GPU, c later
                    heapq.heappush(events, (end + lag, 0, p, s, j, ""))
        if not remaining:
            break
        if not events:
            raise GeneratorError(f"rematerializing list scheduler stalled at {now}: live {live} "
                                 f"nf {nf} nb {nb} nw {nw} rptr {rptr} bptr {bptr} "
                                 f"orders {[[str(o) for o in x] for x in orders]}")
        now = events[0][0]
        while events and events[0][0] == now:
            _, rel, p, s, j, kind = heapq.heappop(events)
            if rel:
                live[p] -= 1
            if kind == grad:
                bdone[s][j] = True
                advance(p)
            wake[p] = True
            if s >= 0:
                for x in (s - 1, s + 1):
                    if 0 <= x < S:
                        wake[gpu[x]] = True
    return Schedule(inst, tuple(tuple(o) for o in orders), source)



__all__ = ["natural_pairs", "natural_window", "remat_list_schedule"]
