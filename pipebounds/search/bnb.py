"""Branch and bound over per-GPU op orders (docs/search.md).

A schedule is its per-GPU orders timed ASAP (MODEL.md). The search builds the orders op by op
in the *canonical linearisation* of the ASAP schedule: ops are appended in non-decreasing
``(start, gpu)``. Every set of orders has exactly one such linearisation and every prefix of it
is reachable (an op's predecessors end, hence start, before it), so the enumeration is complete
and free of interleaving duplicates. After appending an op that starts at ``t`` on GPU ``g`` the
free time of every GPU ``p`` is raised to ``t`` (``t + 1`` unit when ``p < g``): later ops start
no earlier, which encodes the canonical order in the state itself, so that the successors of a
node depend only on its *state* and a memo of explored states is sound.

A node's state: per microbatch the forward progress ``nf`` and its last end ``fe``, the
input-gradient progress ``nb`` and its last end ``be``, per pair ``(j, s)`` a status
(``0`` nothing, ``1`` F stored, ``2`` F checkpointed, ``3`` R done, ``4`` I done and W pending,
``5`` released) with the end time its next op waits for, per GPU the (raised) free time.
Times a consumer can no longer wait for (``<=`` its GPU's free time) are replaced by 0 in the
memo key; microbatch rows are sorted in the key (microbatches are interchangeable).

Pruning, each sound (docs/search.md gives the arguments):

* bound: a node whose lower bound (:meth:`Search.node_bound`: chain bounds per microbatch, a
  one-machine bound with heads and tails and a memory-window bound on every GPU) is ``>= U``
  (the incumbent) is cut; children are bounded before they are visited;
* symmetry: among microbatches with identical rows only the first is branched on;
* dominance memo: a state with the same structure as a fully explored one and all times
  ``>=`` its times is cut when the explored one was proven against an incumbent ``>= U``;
* memory: a storing op (``F`` stored, or ``R``) starts only when the GPU holds ``< K``
  activations; the remat choice of ``(j,s)`` (store or checkpoint) is taken at ``F(j,s)`` and is
  offered only when ``K`` can bind (``K < v m``): without a binding ``K`` a recompute only adds
  work and a precedence.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Optional

from schedules.ops import Op
from .model import Model

NONE, STORED, CKPT, RDONE, IDONE, DONE = range(6)

# candidate kinds; the number is also the tie-break priority (lower first)
K_IG, K_R, K_FS, K_W, K_FC = range(5)


def _row_order(r):
    return (r[0], r[1], r[4], r[2], r[3], r[5])


CLOCK_SECONDS = 0.02
"""Seconds between two looks at the clock and the channel (:meth:`Search.check_clock`)."""


class _Timeout(Exception):
    pass


@dataclass
class SearchOutcome:
    """Raw result of :meth:`Search.run`: the best orders found (as ``(gpu, Op)`` lists per GPU),
    their makespan in units, whether the space was exhausted below the final incumbent, and
    counters."""

    orders: Optional[list[list[Op]]]
    makespan: Optional[int]
    complete: bool
    nodes: int
    memo_size: int
    leaves: int


class Search:
    """Depth-first branch and bound with memo; see the module docstring.

    ``upper`` is an incumbent makespan in units (a schedule of that makespan is known to exist,
    found elsewhere): the search looks only for strictly better schedules. ``lower`` is a proven
    lower bound in units: the search stops as soon as it finds a schedule reaching it.
    ``memo_limit`` caps the stored time vectors (about 1 kB each for ``P=4, m=8``); the memo is
    cleared when it is reached (sound: the memo only prunes). ``poll`` (a function of no
    argument) is called every 1024 nodes with the time limit, and between those at most every
    :data:`CLOCK_SECONDS` (a node of a large instance costs milliseconds, so 1024 nodes could
    pass a short limit by seconds); when it returns True the run ends as on a time-out
    (incomplete, with the best found). The node limits are checked every 1024 nodes only, so
    node counts do not depend on the clock.
    """

    memo_width = 16
    """Time vectors kept per structure in the dominance memo (the oldest is dropped)."""

    def __init__(self, model: Model, upper: Optional[int] = None, lower: int = 0,
                 time_limit: Optional[float] = None, node_limit: Optional[int] = None,
                 memo_limit: int = 400_000, poll=None):
        self.mdl = model
        self.U = upper if upper is not None else 1 << 60
        self.lower = lower
        self.deadline = None if time_limit is None else time.monotonic() + time_limit
        self.node_limit = node_limit
        self.memo_limit = memo_limit
        self.poll = poll
        self.clock_at: Optional[float] = None  # next clock check between the 1024-node ones
        S, P = model.S, model.P
        self.path: list[tuple[int, Op]] = []
        self.reset()  # the empty schedule's state
        self.best: Optional[list[tuple[int, Op]]] = None
        self.nodes = 0
        self.leaves = 0
        self.memo: dict = {}
        self.memo_count = 0
        self.found = False
        self.stop_at_first = False
        self.run_limit = None
        # round trip after F(j,s): the chain between its end and the start of its
        # input-gradient op (an activation stored at F is live at least dF + this + dIG + dW)
        self.round_trip = [model.tail_after_f[s] - model.dIGs[s] - model.tail_after_ig[s]
                           for s in range(S)]
        # per stage: the shortest live window of a recomputed pair (R, its IG, W)
        self.wmin = [model.dFs[s] + model.dIGs[s] + model.dWs[s] for s in range(S)]
        # per GPU, the stages it holds (for the bound)
        self.stages_of = [[s for s in range(S) if model.gpu[s] == p] for p in range(P)]

    # ------------------------------------------------------------------ state
    def row(self, j: int) -> tuple:
        """Microbatch ``j``'s state with times no consumer waits for replaced by 0."""
        mdl = self.mdl
        S, gpu, fr = mdl.S, mdl.gpu, self.fr
        nf, nb = self.nf[j], self.nb[j]
        fe = self.fe[j]
        if nf < S:
            if fe + mdl.lag_f[nf] <= fr[gpu[nf]]:
                fe = 0
        elif nb > 0 or fe <= fr[gpu[S - 1]]:
            fe = 0
        be = self.be[j]
        if nb == 0 or nb == S or be + mdl.lag_b[S - 1 - nb] <= fr[gpu[S - 1 - nb]]:
            be = 0
        base = j * S
        pst = self.pst[base:base + S]
        pt = self.pt[base:base + S]
        for s in range(S):
            if pt[s] and pt[s] <= fr[gpu[s]]:
                pt[s] = 0
        return (nf, nb, fe, be, tuple(pst), tuple(pt))

    def key(self, rows) -> tuple[tuple, tuple]:
        """``(structure, times)``: the sorted microbatch structures ``(nf, nb, statuses)`` and the
        vector of free times and (clipped) waiting times in the same order."""
        rows = sorted(rows, key=_row_order)
        struct = tuple((r[0], r[1], r[4]) for r in rows)
        times = list(self.fr)
        for r in rows:
            times.append(r[2])
            times.append(r[3])
            times.extend(r[5])
        return struct, tuple(times)

    def dominated(self, struct, times) -> bool:
        """True iff a fully explored state with the same structure and times all ``<=`` these
        proved that no completion beats the current incumbent (see docs/search.md)."""
        entries = self.memo.get(struct)
        if not entries:
            return False
        U = self.U
        for vec, val in entries:
            if val >= U:
                for a, b in zip(vec, times):
                    if a > b:
                        break
                else:
                    return True
        return False

    def remember(self, struct, times) -> None:
        entries = self.memo.get(struct)
        U = self.U
        if entries is None:
            if self.memo_count >= self.memo_limit:
                self.memo.clear()
                self.memo_count = 0
            self.memo[struct] = [(times, U)]
            self.memo_count += 1
            return
        keep = []
        for vec, val in entries:
            if val <= U and all(a >= b for a, b in zip(vec, times)):
                continue  # the new entry dominates it
            keep.append((vec, val))
        keep.append((times, U))
        self.memo_count += 1
        if len(keep) > self.memo_width:
            del keep[0]
        self.memo[struct] = keep

    # ------------------------------------------------------------------ bound
    def node_bound(self, U: int) -> int:
        """A lower bound on the makespan of every completion of the current node.

        For every unscheduled op ``o`` a head ``r_o`` (earliest start: its GPU's free time and
        its chain predecessors' heads plus durations) and a tail ``q_o`` (the chain that must
        follow it) are computed. Each microbatch gives the end of its chain; each GPU, whose
        remaining ops run one at a time, gives the one-machine bound ``max_h (h + sum_{r_o >= h}
        d_o + min_{r_o >= h} q_o)`` and, when ``K`` binds, the memory-window bound
        (docs/search.md). Optional recomputes not yet decided count for nothing. Returns early
        once ``>= U``.
        """
        mdl = self.mdl
        S, gpu, fr = mdl.S, mdl.gpu, self.fr
        dFs, dIGs, dWs = mdl.dFs, mdl.dIGs, mdl.dWs
        lag_f, lag_b = mdl.lag_f, mdl.lag_b
        tf, tig = mdl.tail_after_f, mdl.tail_after_ig
        pst, pt = self.pst, self.pt
        split = mdl.split
        best = max(fr)
        ops: list[list] = [[] for _ in range(mdl.P)]
        bounded = mdl.bounded
        win = [0] * mdl.P          # live-window time after fr[p] already committed
        und: list[list] = [[] for _ in range(mdl.P)]   # round trips of pairs whose remat is undecided
        rt = self.round_trip
        wmin = self.wmin
        nwin = [0] * mdl.P         # sum of wmin over the undecided pairs of each GPU
        dfmin = [1 << 60] * mdl.P  # least forward duration among them
        for j in range(mdl.m):
            nf, nb = self.nf[j], self.nb[j]
            base = j * S
            t = self.fe[j]
            for s in range(nf, S):
                p = gpu[s]
                h = t + lag_f[s]
                if h < fr[p]:
                    h = fr[p]
                ops[p].append((h, dFs[s], tf[s]))
                t = h + dFs[s]
                if bounded:
                    und[p].append(rt[s])
                    nwin[p] += wmin[s]
                    if dFs[s] < dfmin[p]:
                        dfmin[p] = dFs[s]
            top = S - 1 - nb
            if nb:
                t = self.be[j]
            for s in range(top, -1, -1):
                p = gpu[s]
                h = t if s == S - 1 else t + lag_b[s]
                if h < fr[p]:
                    h = fr[p]
                st = pst[base + s]
                if st == CKPT:
                    hr = pt[base + s]
                    if hr < fr[p]:
                        hr = fr[p]
                    ops[p].append((hr, dFs[s], dIGs[s] + tig[s]))
                    if hr + dFs[s] > h:
                        h = hr + dFs[s]
                    if bounded:
                        win[p] += wmin[s]
                elif st == RDONE:
                    if pt[base + s] > h:
                        h = pt[base + s]
                ops[p].append((h, dIGs[s], tig[s]))
                t = h + dIGs[s]
                if bounded and (st == STORED or st == RDONE):
                    win[p] += t + dWs[s] - fr[p]
                if split:
                    ops[p].append((t, dWs[s], 0))
            if split:
                for s in range(top + 1, S):
                    if pst[base + s] == IDONE:
                        p = gpu[s]
                        h = pt[base + s]
                        if h < fr[p]:
                            h = fr[p]
                        ops[p].append((h, dWs[s], 0))
                        if bounded:
                            win[p] += h + dWs[s] - fr[p]
            # chain of j: its last op ends no earlier than t (+ W(j,0) when split)
            end = t + dWs[0] if split else t
            if top < 0 and not split:
                end = 0
            if end > best:
                best = end
                if best >= U:
                    return best
        if bounded:
            K = mdl.K
            for p in range(mdl.P):
                lst = ops[p]
                if not lst:
                    continue
                busy = 0
                for _, d, _ in lst:
                    busy += d
                u = und[p]
                n = len(u)
                w = win[p] + nwin[p]
                # k of the n undecided pairs stored at F (their windows grow by at least the k
                # smallest round trips), the other n - k recomputed (one more R each, at least
                # the least forward duration); windows sum <= K * (T - fr[p])
                dF = dfmin[p] if n else 0
                busy += n * dF
                u.sort()
                lo = None
                for k in range(n + 1):
                    if k:
                        busy -= dF
                        w += u[k - 1]
                    v = -(-w // K)
                    if busy > v:
                        v = busy
                    if lo is None or v < lo:
                        lo = v
                    elif v > lo and busy <= -(-w // K):
                        break
                v = fr[p] + lo
                if v > best:
                    best = v
                    if best >= U:
                        return best
        for lst in ops:
            if not lst:
                continue
            # by heads, latest first
            lst.sort(reverse=True)
            sd = 0
            mq = 1 << 60
            for h, d, q in lst:
                sd += d
                if q < mq:
                    mq = q
                v = h + sd + mq
                if v > best:
                    best = v
            if best >= U:
                return best
        return best

    # ------------------------------------------------------------- candidates
    def candidates(self, rows):
        """Eligible ops ``(start, kind, j, s)``, one microbatch per class of identical rows."""
        mdl = self.mdl
        S, gpu, fr, live, K = mdl.S, mdl.gpu, self.fr, self.live, mdl.K
        pst, pt = self.pst, self.pt
        out = []
        seen = set()
        for j in range(mdl.m):
            r = rows[j]
            if r in seen:
                continue
            seen.add(r)
            nf, nb = self.nf[j], self.nb[j]
            base = j * S
            if nf < S:
                p = gpu[nf]
                h = self.fe[j] + mdl.lag_f[nf]
                if h < fr[p]:
                    h = fr[p]
                if live[p] < K:
                    out.append((h, K_FS, j, nf))
                if mdl.bounded:
                    out.append((h, K_FC, j, nf))
            elif nb < S:
                s = S - 1 - nb
                p = gpu[s]
                st = pst[base + s]
                if st != CKPT:
                    h = self.fe[j] if nb == 0 else self.be[j] + mdl.lag_b[s]
                    if st == RDONE and pt[base + s] > h:
                        h = pt[base + s]
                    if h < fr[p]:
                        h = fr[p]
                    out.append((h, K_IG, j, s))
            for s in range(min(nf, S - nb)):
                if pst[base + s] == CKPT:
                    p = gpu[s]
                    if live[p] < K:
                        h = pt[base + s]
                        if h < fr[p]:
                            h = fr[p]
                        out.append((h, K_R, j, s))
            if mdl.split:
                for s in range(S - nb, S):
                    if pst[base + s] == IDONE:
                        p = gpu[s]
                        h = pt[base + s]
                        if h < fr[p]:
                            h = fr[p]
                        out.append((h, K_W, j, s))
        out.sort()
        return out

    # ------------------------------------------------------------------ search
    def apply(self, h: int, kind: int, j: int, s: int):
        """Append the op; return what :meth:`undo` needs."""
        mdl = self.mdl
        S = mdl.S
        p = mdl.gpu[s]
        idx = j * S + s
        old_fr = self.fr[:]
        old = (self.fe[j], self.be[j], self.pst[idx], self.pt[idx], self.live[p], self.left)
        if kind == K_FS or kind == K_FC:
            e = h + mdl.dFs[s]
            self.nf[j] += 1
            self.fe[j] = e
            if kind == K_FS:
                self.pst[idx] = STORED
                self.live[p] += 1
                op = Op(s, "F", j)
            else:
                self.pst[idx] = CKPT
                self.pt[idx] = e
                self.left += 1
                op = Op(s, "F", j)
        elif kind == K_R:
            e = h + mdl.dFs[s]
            self.pst[idx] = RDONE
            self.pt[idx] = e
            self.live[p] += 1
            op = Op(s, "R", j)
        elif kind == K_IG:
            e = h + mdl.dIGs[s]
            self.nb[j] += 1
            self.be[j] = e
            if mdl.split:
                self.pst[idx] = IDONE
                self.pt[idx] = e
                op = Op(s, "I", j)
            else:
                self.pst[idx] = DONE
                self.pt[idx] = 0
                self.live[p] -= 1
                op = Op(s, "B", j)
        else:  # K_W
            e = h + mdl.dWs[s]
            self.pst[idx] = DONE
            self.pt[idx] = 0
            self.live[p] -= 1
            op = Op(s, "W", j)
        self.left -= 1
        fr = self.fr
        fr[p] = e
        for q in range(mdl.P):
            lo = h + 1 if q < p else h
            if fr[q] < lo:
                fr[q] = lo
        self.path.append((p, op))
        return (old_fr, old, kind, j, s, p)

    def undo(self, saved) -> None:
        old_fr, old, kind, j, s, p = saved
        idx = j * self.mdl.S + s
        self.fr = old_fr
        self.fe[j], self.be[j], self.pst[idx], self.pt[idx], self.live[p], self.left = old
        if kind == K_FS or kind == K_FC:
            self.nf[j] -= 1
        elif kind == K_IG:
            self.nb[j] -= 1
        self.path.pop()

    def check_clock(self) -> None:
        """Raise the time-out when the deadline has passed or ``poll`` says stop; set the next
        check :data:`CLOCK_SECONDS` ahead (never past the deadline)."""
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            raise _Timeout
        if self.poll is not None and self.poll():
            raise _Timeout
        if self.deadline is None and self.poll is None:
            self.clock_at = None
        else:
            nxt = now + CLOCK_SECONDS
            self.clock_at = nxt if self.deadline is None else min(nxt, self.deadline)

    def root_bound(self) -> int:
        """The node bound of the empty schedule (units)."""
        self.reset()
        return self.node_bound(1 << 60)

    def dfs(self) -> None:
        """Explore the current node, whose bound is known to be ``< U`` (see :meth:`run`).

        Children are bounded here, before recursion: those with a bound ``>= U`` are cut
        without a visit, the others are explored in order of increasing bound, then start
        time and kind (best first: good schedules early, so the incumbent drops fast).
        """
        self.nodes += 1
        if not self.nodes & 1023:
            if self.node_limit is not None and self.nodes > self.node_limit:
                raise _Timeout
            if self.run_limit is not None and self.nodes > self.run_limit:
                raise _Timeout
            self.check_clock()
        elif self.clock_at is not None and time.monotonic() >= self.clock_at:
            self.check_clock()
        if self.left == 0:
            ms = max(self.fr)
            self.leaves += 1
            if ms < self.U:
                self.U = ms
                self.best = list(self.path)
                self.found = True
            return
        m = self.mdl.m
        rows = [self.row(j) for j in range(m)]
        struct, times = self.key(rows)
        if self.dominated(struct, times):
            return
        children = []
        for h, kind, j, s in self.candidates(rows):
            if h >= self.U:
                break
            saved = self.apply(h, kind, j, s)
            b = self.node_bound(self.U) if self.left else max(self.fr)
            self.undo(saved)
            if b < self.U:
                children.append((b, h, kind, j, s))
        children.sort()
        for b, h, kind, j, s in children:
            if b >= self.U:
                break
            saved = self.apply(h, kind, j, s)
            self.dfs()
            self.undo(saved)
            if self.U <= self.lower or (self.found and self.stop_at_first):
                return
        if not self.found or not self.stop_at_first:
            self.remember(struct, times)

    def run(self, upper: Optional[int] = None, stop_at_first: bool = False,
            nodes: Optional[int] = None) -> SearchOutcome:
        """Search for a schedule of makespan ``< upper`` (default: the constructor's ``upper``).

        ``complete`` is True iff the search finished: then either a schedule was found (with
        ``stop_at_first`` the first one found, else the best one, proven optimal below
        ``upper``), or none exists below ``upper``. The memo is kept between runs (its entries
        carry the incumbent they were proven against), so runs with increasing ``upper``
        (iterative deepening) reuse each other's work.
        """
        if upper is not None:
            self.U = upper
        self.found = False
        self.best = None
        self.stop_at_first = stop_at_first
        self.run_limit = None if nodes is None else self.nodes + nodes
        complete = True
        self.clock_at = None if self.deadline is None and self.poll is None else time.monotonic()
        depth = sys.getrecursionlimit()  # dfs recurses once per op placed
        sys.setrecursionlimit(max(depth, 2 * self.left + 1000))  # recomputes included
        try:
            self.reset()
            if self.U > self.lower and self.node_bound(self.U) < self.U:
                self.dfs()
        except _Timeout:
            complete = False
        finally:
            sys.setrecursionlimit(depth)
        orders = None
        if self.best is not None:
            orders = [[] for _ in range(self.mdl.P)]
            for p, op in self.best:
                orders[p].append(op)
        # reset the mutable state (a timeout leaves it mid-path)
        self.reset()
        return SearchOutcome(orders, self.U if self.best is not None else None, complete,
                             self.nodes, self.memo_count, self.leaves)

    def reset(self) -> None:
        """Back to the empty schedule (keeps the memo and the counters)."""
        m, S, P = self.mdl.m, self.mdl.S, self.mdl.P
        self.nf = [0] * m
        self.fe = [0] * m
        self.nb = [0] * m
        self.be = [0] * m
        self.pst = [NONE] * (m * S)
        self.pt = [0] * (m * S)
        self.fr = [0] * P
        self.live = [0] * P
        self.left = m * S * (3 if self.mdl.split else 2)
        self.path = []
