"""The ``K = 1`` bounded depth-first search, pruned per GPU by Theorem 3's own argument.
"""

from __future__ import annotations

import random
import sys
from typing import Any, Optional

from schedules.deadline import NO_DEADLINE, Deadline
from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule

from .common import _reaching


def _waste_floor(n: int, G: int, f: int) -> int:
    """``min_x W_p(x) - n B`` for ``n`` microbatches (integer units): the least idle plus
    recompute time a GPU with gap ``G`` must spend on ``n`` pairs it has not forwarded yet
    (Theorem 3's argument applied to the rest of the window)."""
    from bounds.single_wave import single_slot_waste

    return min(single_slot_waste(n, G, f, x_) for x_ in range(n + 1))


MEMO_CAP = 200_000
"""At most this many searched-out node keys are kept in a memo (memory: a key holds one
integer per microbatch; past the cap the search goes on without recording)."""


class DominanceMemo:
    """The searched-out nodes of one decision kept up to dominance (docs/theory.md A.6, L12).

    Nodes are grouped by the multiset of their microbatch state digits (the ``sigma`` of L11);
    a group holds the *time vectors* (:meth:`_SlotSearch.dominance_key`) of its searched-out
    nodes as an antichain: a node whose vector is componentwise at least one of them is
    dominated (L12: it has no completion ending by ``T`` either) and is not expanded; a new
    record drops the vectors it is componentwise at most. ``cap``: at most this many vectors
    in all (past it the search goes on without recording)."""

    def __init__(self, cap: int = 200_000) -> None:
        self.groups: dict[tuple, list[tuple]] = {}
        self.size = 0
        self.cap = cap

    def __len__(self) -> int:
        return self.size

    def dominated(self, states: tuple, vec: tuple) -> bool:
        """Whether a recorded vector of the group ``states`` is componentwise ``<= vec``."""
        for old in self.groups.get(states, ()):
            if all(a <= b for a, b in zip(old, vec)):
                return True
        return False

    def add(self, states: tuple, vec: tuple) -> None:
        """Record a searched-out node (no-op past the cap)."""
        if self.size >= self.cap:
            return
        group = self.groups.setdefault(states, [])
        kept = [old for old in group if not all(a <= b for a, b in zip(vec, old))]
        self.size += 1 + len(kept) - len(group)
        kept.append(vec)
        self.groups[states] = kept


class _Found(Exception):
    pass


class _OutOfNodes(Exception):
    pass


def _bounded_search(P: int, m: int, f: int, b: int, T: int, nodes: int,
                    rng: Optional[random.Random] = None, tie_high: bool = False,
                    last_free: bool = False, width_f: int = 2, width_r: int = 3,
                    always_wait: bool = False, plan: bool = False,
                    deadline: Deadline = NO_DEADLINE, check_all: bool = False,
                    memo: Optional[Any] = None):
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
    ``orders`` None with fewer than ``nodes`` nodes used means the whole tree was searched;
    ``check_all`` prunes on every GPU's window after each move, not only the mover's.
    ``deadline`` stops the search like the node budget (then ``nodes + 1`` nodes are reported,
    so an interrupted tree never reads as searched out).
    ``memo``: a set of the keys (:meth:`_SlotSearch.key`) of nodes whose subtree was searched
    out; a node whose key is in it is not expanded, and it is filled as the search goes. Pass
    the same set only to searches of the same ``T`` and rules (docs/theory.md A.6, L11: for the
    unrestricted rules a node's subtree has a leaf iff its key admits a completion ending by
    ``T``; for narrower rules a hit may only lose a schedule, never make one up).

    Unrestricted (``width_f = width_r = m``, ``always_wait``, ``last_free``) the tree holds
    every semi-active ``K = 1`` schedule up to relabelling interchangeable microbatches (an
    op starts at its GPU's clock or at its known predecessor's end; a wait never passes the
    end of an op not yet placed; of two microbatches in the same state only the one whose
    past ends are earliest is tried), and the pruning only drops states that Theorem 3's
    argument rules out: a searched-out tree then means that no schedule ends by ``T``
    (argued, not machine-proven; it finds a schedule at T3 on all 608 independently solved
    instances ``P <= 5, m <= 8``, every coprime ``f : b`` up to 5).
    """
    if min(T - p * (f + b) - m * (f + b) for p in range(P)) < 0:
        return None, 0
    search = _SlotSearch(P, m, f, b, T, nodes, rng, tie_high, last_free, width_f, width_r,
                         always_wait, plan)
    search.deadline = deadline
    search.check_all = check_all
    search.memo = memo
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 8 * P * m * 3 + 1000))
    try:
        search.step()
    except _Found:
        return [list(o) for o in search.orders], search.count
    except _OutOfNodes:
        return None, max(search.count, nodes + 1)
    finally:
        sys.setrecursionlimit(limit)
    return None, search.count


_DIGIT_STEP = {"Fk": 1, "Ff": 2, "R": 1, "Bk": 3, "B": 1}
"""How an op moves its pair's state digit (:meth:`_SlotSearch.key`): a kept forward 0 -> 1,
a free one 0 -> 2, a recompute 2 -> 3, the backward of a kept pair 1 -> 4, of a recomputed
one 3 -> 4."""

_RANK = {"B": 0, "R": 1, "Fk": 2, "Ff": 3}
_LATE = {"B": 0, "R": 1, "Fk": 3, "Ff": 2}  # once x pairs are kept (plan)


class _SlotSearch:
    """The state and moves of :func:`_bounded_search` (one search; integer time units).

    Per GPU ``p``: its clock ``t[p]``, the microbatch in its slot ``slot[p]`` (-1 when
    empty), the idle plus recompute time spent ``waste[p]`` against the slack
    ``slack[p] = T - p B - m B``, forwards/backwards done ``nf``/``nb``, free pairs not yet
    recomputed ``pend``; per (GPU, microbatch): forward and backward ends ``fend``/``bend``
    (-1 when not placed), whether the forward kept its activation ``kept`` (None before it),
    whether its recompute ran ``redone``; ``arrived[p]`` the microbatches whose forward has
    reached GPU ``p``, in arrival order. :meth:`step` places the next op of the GPU with the
    earliest clock, recursively, and undoes it on return.
    """

    hold_redone = True
    """Whether :meth:`feasible`'s hold bound also applies to a recomputed pair in the slot
    (docs/theory.md A.6, L13); False: to a kept one only (L10 as first stated)."""

    def __init__(self, P: int, m: int, f: int, b: int, T: int, nodes: int,
                 rng: Optional[random.Random], tie_high: bool, last_free: bool,
                 width_f: int, width_r: int, always_wait: bool, plan: bool) -> None:
        from bounds.single_wave import single_slot_waste

        self.P, self.m, self.f, self.b, self.nodes, self.rng = P, m, f, b, nodes, rng
        self.tie_high, self.last_free, self.always_wait, self.plan = (
            tie_high, last_free, always_wait, plan)
        self.width_f, self.width_r = width_f, width_r
        B = f + b
        self.floor_ = [[_waste_floor(n, (P - p - 1) * B, f) for n in range(m + 1)]
                       for p in range(P)]
        self.slack = [T - p * B - m * B for p in range(P)]
        self.fend = [[-1] * m for _ in range(P)]
        self.bend = [[-1] * m for _ in range(P)]
        self.kept: list[list[Optional[bool]]] = [[None] * m for _ in range(P)]
        self.redone = [[False] * m for _ in range(P)]
        self.slot, self.t, self.waste = [-1] * P, [p * f for p in range(P)], [0] * P
        self.nf, self.nb, self.pend = [0] * P, [0] * P, [0] * P
        self.orders: list[list[tuple[str, int]]] = [[] for _ in range(P)]
        self.arrived: list[list[int]] = [list(range(m))] + [[] for _ in range(P - 1)]
        self.count = 0
        self.noise = 0 if rng is None else rng.choice((0, f, B))
        self.latest_b = [T - p * b for p in range(P)]
        self.xstar = [min(range(m + 1),
                          key=lambda x_: (single_slot_waste(m, (P - p - 1) * B, f, x_), x_))
                      for p in range(P)]
        self.nkept = [0] * P
        self.deadline: Deadline = NO_DEADLINE
        self.check_all = False
        self.memo: Optional[Any] = None
        self.memo_cap = MEMO_CAP
        self.hits = 0
        self.span = 1 << 40  # above every end + 1: the codes are injective
        # per microbatch: its states as base-5 digits (GPU 0 most significant; 0 forward not
        # placed, 1 kept, 2 free with its recompute pending, 3 recomputed, 4 backward
        # placed), how many of its forwards and backwards are placed
        self.weight = [5 ** (P - 1 - q) for q in range(P)]
        self.digits, self.nfj, self.nbj = [0] * m, [0] * m, [0] * m

    def feasible(self, p: int) -> bool:
        """Theorem 3's argument on GPU ``p``'s window: the waste so far, one recompute per
        pending free pair, the least waste of the pairs not yet forwarded and the
        unavoidable gap of the hold in progress fit in its slack."""
        P, m, f, t = self.P, self.m, self.f, self.t
        floor_ = self.floor_[p]
        n = m - self.nf[p]
        base = self.waste[p] + self.pend[p] * f
        if base + floor_[n] > self.slack[p]:
            return False
        s = self.slot[p]
        if s >= 0 and p < P - 1 and (self.kept[p][s] or self.hold_redone):
            gap = self.eta(s, p + 1) - t[p]
            if gap > 0:
                # k free forwards fill the hold, in arrival order (arrived ones, then those
                # GPU p-1 can still deliver, one per f from its clock); the hold ends at the
                # later of the chain's return and the k-th free's end
                if p == 0:
                    arrivals = [t[0]] * n
                else:
                    fend_above, fend_p = self.fend[p - 1], self.fend[p]
                    arrivals = sorted(fend_above[j] for j in self.arrived[p] if fend_p[j] < 0)
                    arrivals += [t[p - 1] + i * f for i in range(1, n - len(arrivals) + 1)]
                    arrivals.sort()
                ready, end, best = t[p] + gap, t[p], gap + floor_[n]
                for k in range(1, n + 1):
                    end = max(end, arrivals[k - 1]) + f
                    best = min(best, max(ready, end) - t[p] + floor_[n - k])
                    if end >= ready:
                        # past the chain's return each forward adds at least f to the end
                        # and saves at most f of floor (floor_[i+1] <= floor_[i] + f): the
                        # minimum over k is reached
                        break
                if base + best > self.slack[p]:
                    return False
        return True

    def admissible(self, p: int) -> bool:
        """:meth:`feasible` on GPU ``p`` and, with ``check_all``, on every unfinished GPU (a
        move of ``p`` changes the other GPUs' lower bounds through the chain: more pruning,
        the same soundness)."""
        if not self.feasible(p):
            return False
        return not self.check_all or all(self.feasible(q) for q in range(self.P)
                                         if q != p and self.nb[q] < self.m)

    def signature(self, j: int) -> tuple:
        """The state of microbatch ``j`` on every GPU, timing aside: two microbatches with the
        same signature are interchangeable, so only the first in a candidate list is tried."""
        return tuple((self.kept[q][j], self.redone[q][j], self.fend[q][j] >= 0,
                      self.bend[q][j] >= 0) for q in range(self.P))

    def frontier(self, j: int) -> tuple[int, int]:
        """The end of ``j``'s last forward and of its lowest backward so far: the only past
        times its remaining ops wait for."""
        P, fend, bend = self.P, self.fend, self.bend
        last_f = max((fend[q][j] for q in range(P) if fend[q][j] >= 0), default=-1)
        low_b = max((bend[q][j] for q in range(P) if bend[q][j] >= 0), default=-1)
        return last_f, low_b

    def eta(self, j: int, q: int) -> int:
        """A lower bound on the end of ``B(j, q)`` from the state (GPU clocks included).
        Recompute candidates are tried in this order, so a GPU follows the backward wave
        coming up from below; the hold bound of :meth:`feasible` uses it too."""
        P, f, b, t = self.P, self.f, self.b, self.t
        if self.bend[q][j] >= 0:
            return self.bend[q][j]
        if self.fend[q][j] >= 0:
            below = t[q] if q == P - 1 else self.eta(j, q + 1)
            if self.slot[q] == j:
                return max(t[q], below) + b
            return max(t[q] + f, below) + b  # a pending free pair: R first
        if q == 0:
            start = t[0]
        else:
            above = self.fend[q - 1][j]
            start = max(t[q], above if above >= 0 else t[q - 1] + f)
        return start + (P - q) * (f + b)

    def candidates(self, p: int) -> list[tuple[str, int, int]]:
        """GPU ``p``'s next ops ``(kind, j, start)`` in the order they are tried: the
        backward of its slot, forwards (kept ``Fk`` or free ``Ff``) of the ``width_f``
        earliest arrived distinct microbatches, recomputes of ``width_r`` distinct pending
        free pairs; sorted by start (a recompute by when its backward can follow), ties by
        kind, perturbed by ``rng``."""
        P, m, f, rng = self.P, self.m, self.f, self.rng
        tp, s = self.t[p], self.slot[p]
        fend, kept, redone = self.fend, self.kept, self.redone
        cands: list[tuple[str, int, int]] = []
        order_at: dict[int, int] = {}
        if s >= 0:
            dep = tp if p == P - 1 else self.bend[p + 1][s]
            if dep >= 0:
                cands.append(("B", s, max(tp, dep)))
        if p < P - 1 or s < 0:
            seen: set = set()
            for j in self.arrived[p]:
                if fend[p][j] >= 0:
                    continue
                sig = self.signature(j)
                if sig in seen:  # an earlier arrival in the same state dominates j
                    continue
                start = max(tp, 0 if p == 0 else fend[p - 1][j])
                if s < 0:
                    cands.append(("Fk", j, start))
                if p < P - 1 or self.last_free:
                    cands.append(("Ff", j, start))
                seen.add(sig)
                if len(seen) >= self.width_f:
                    break
        if s < 0:
            pending = [j for j in range(m)
                       if fend[p][j] >= 0 and kept[p][j] is False and not redone[p][j]]
            if p < P - 1:
                pending.sort(key=lambda j: (fend[p + 1][j] < 0, self.eta(j, p + 1)))
            seen = set()
            for j in pending:
                # interchangeable only with the same past times the future depends on
                sig = self.signature(j) + (self.frontier(j),)
                if sig not in seen and len(seen) < self.width_r:
                    seen.add(sig)
                    cands.append(("R", j, tp))
                    if p < P - 1:  # sorted by when its backward can follow
                        order_at[len(cands) - 1] = max(tp, self.eta(j, p + 1) - f)
        keyed = [(order_at.get(i, c[2]), c) for i, c in enumerate(cands)]
        rk = _LATE if self.plan and self.nkept[p] >= self.xstar[p] else _RANK
        if rng is None:
            keyed.sort(key=lambda kc: (kc[0], rk[kc[1][0]]))
        else:
            noise = self.noise
            keyed.sort(key=lambda kc: (kc[0] + rng.random() * noise, rk[kc[1][0]]
                                       + (rng.random() * 2 if kc[1][0] == "Ff" else 0)))
        return [c for _, c in keyed]

    def place(self, p: int, kind: str, j: int, start: int) -> None:
        """Run op ``kind`` of ``j`` on GPU ``p`` from ``start`` (the state moves forward)."""
        f, b = self.f, self.b
        self.waste[p] += start - self.t[p]
        self.digits[j] += self.weight[p] * _DIGIT_STEP[kind if kind != "B" or not
                                                      self.kept[p][j] else "Bk"]
        if kind == "B":
            end = start + b
            self.bend[p][j], self.slot[p] = end, -1
            self.nb[p] += 1
            self.nbj[j] += 1
        elif kind == "R":
            end = start + f
            self.redone[p][j], self.slot[p] = True, j
            self.waste[p] += f
            self.pend[p] -= 1
        else:
            end = start + f
            self.fend[p][j] = end
            self.nf[p] += 1
            self.nfj[j] += 1
            if kind == "Fk":
                self.kept[p][j], self.slot[p] = True, j
                self.nkept[p] += 1
            else:
                self.kept[p][j] = False
                self.pend[p] += 1
            if p + 1 < self.P:
                self.arrived[p + 1].append(j)
        self.t[p] = end
        self.orders[p].append((kind[0], j))

    def unplace(self, p: int, kind: str, j: int) -> None:
        """Undo :meth:`place` of the same op, except the GPU's clock, waste, slot and
        pending count, which the caller restores."""
        self.orders[p].pop()
        self.digits[j] -= self.weight[p] * _DIGIT_STEP[kind if kind != "B" or not
                                                      self.kept[p][j] else "Bk"]
        if kind == "B":
            self.bend[p][j] = -1
            self.nb[p] -= 1
            self.nbj[j] -= 1
        elif kind == "R":
            self.redone[p][j] = False
        else:
            if kind == "Fk":
                self.nkept[p] -= 1
            self.fend[p][j], self.kept[p][j] = -1, None
            self.nf[p] -= 1
            self.nfj[j] -= 1
            if p + 1 < self.P:
                self.arrived[p + 1].pop()

    def key(self) -> tuple:
        """What the completions of the node depend on (docs/theory.md A.6, L11), up to
        relabelling microbatches: the clocks and the multiset of the microbatches' states.
        The state of ``j`` on GPU ``q`` is one of: forward not placed, kept (its backward
        pending), free with its recompute pending, recomputed (backward pending), backward
        placed; plus the end of its last placed forward when the next GPU's forward is not
        placed and that end is later than the next GPU's clock, and likewise the end of its
        lowest placed backward against the GPU above (earlier ends are dominated by the
        clock every later op starts after)."""
        P, t, span = self.P, self.t, self.span
        fend, bend = self.fend, self.bend
        codes = []
        for j, (st, cf, cb) in enumerate(zip(self.digits, self.nfj, self.nbj)):
            tf = tb = 0
            if 0 < cf < P:  # F(j, cf - 1) is the last placed forward
                fe = fend[cf - 1][j]
                if fe > t[cf]:
                    tf = fe + 1
            if 0 < cb < P:  # B(j, P - cb) is the lowest placed backward
                be = bend[P - cb][j]
                if be > t[P - cb - 1]:
                    tb = be + 1
            codes.append((st * span + tf) * span + tb)
        codes.sort()
        return (tuple(t), tuple(codes))

    def dominance_key(self) -> tuple[tuple, tuple]:
        """The node's key for :class:`DominanceMemo` (docs/theory.md A.6, L12): the sorted
        state digits of the microbatches, and the time vector: the clocks of the GPUs with
        backwards left (0 for a finished GPU: no op is placed on it any more), then, microbatches
        sorted by (digits, time), the earliest start of each one's next cross-GPU op: for the
        last placed forward ``F(j, q)`` with ``F(j, q+1)`` unplaced, ``max(end, t_{q+1})``; for
        the lowest placed backward ``B(j, q)`` with ``B(j, q-1)`` unplaced,
        ``max(end, t_{q-1})``; else 0 (a microbatch has at most one of the two: its backwards
        start after all its forwards)."""
        P, m, t, nb = self.P, self.m, self.t, self.nb
        fend, bend = self.fend, self.bend
        items = []
        for j, (st, cf, cb) in enumerate(zip(self.digits, self.nfj, self.nbj)):
            e = 0
            if 0 < cf < P:
                e = max(fend[cf - 1][j], t[cf])
            elif 0 < cb < P:
                e = max(bend[P - cb][j], t[P - cb - 1])
            items.append((st, e))
        items.sort()
        clocks = tuple(t[q] if nb[q] < m else 0 for q in range(P))
        return tuple(st for st, _ in items), clocks + tuple(e for _, e in items)

    def step(self) -> None:
        """Place the next op of the GPU with the earliest clock in every feasible way (and
        waiting for the next event), depth first; raises :class:`_Found` at a complete
        schedule, :class:`_OutOfNodes` past the node budget. With ``memo`` (a set), a node
        whose :meth:`key` is in it is not expanded, and the key of every node whose subtree
        was searched out without a leaf is added (while the set is below ``memo_cap``)."""
        self.count += 1
        if self.count > self.nodes or (not self.count & 4095 and self.deadline.expired()):
            raise _OutOfNodes
        memo = self.memo
        if memo is None:
            self.expand()
            return
        if isinstance(memo, DominanceMemo):
            states, vec = self.dominance_key()
            if memo.dominated(states, vec):
                self.hits += 1
                return
            self.expand()
            memo.add(states, vec)
            return
        k = self.key()
        if k in memo:
            self.hits += 1
            return
        self.expand()  # raises at a leaf or out of nodes: then nothing is recorded
        if len(memo) < self.memo_cap:
            memo.add(k)

    def expand(self) -> None:
        """The children of the node (:meth:`step`'s work without the memo)."""
        P, m, t, nb = self.P, self.m, self.t, self.nb
        p = None
        for q in range(P):
            if nb[q] < m and (p is None or t[q] < t[p] or (self.tie_high and t[q] == t[p])):
                p = q
        if p is None:
            raise _Found
        tp = t[p]
        cands = self.candidates(p)
        for kind, j, start in cands:
            if kind == "B" and start + self.b > self.latest_b[p]:
                continue
            saved = (t[p], self.waste[p], self.slot[p], self.pend[p])
            self.place(p, kind, j, start)
            if self.admissible(p):
                self.step()
            self.unplace(p, kind, j)
            t[p], self.waste[p], self.slot[p], self.pend[p] = saved
        later = [t[q] for q in range(P) if q != p and nb[q] < m and t[q] > tp]
        tied = any(q != p and nb[q] < m and t[q] == tp for q in range(P))
        if (later or tied) and (self.always_wait or self.slot[p] >= 0 or not cands):  # wait
            # no unscheduled op can end before nt (a tied GPU's next op ends after tp)
            nt = min(later + ([tp + min(self.f, self.b)] if tied else []))
            t_saved, waste_saved = t[p], self.waste[p]
            self.waste[p] += nt - tp
            t[p] = nt
            if self.admissible(p):
                self.step()
            t[p], self.waste[p] = t_saved, waste_saved


NARROW: tuple[dict[str, Any], ...] = tuple(
    dict(tie_high=th, last_free=lf, width_f=w[0], width_r=w[1], always_wait=aw, plan=True)
    for aw in (False, True) for w in ((2, 3), (3, 5))
    for lf in (False, True) for th in (False, True))
"""The 16 narrower rule sets of :func:`_bounded_search` (keyword arguments): incomplete trees
(fewer candidates, fewer waits) that find schedules fast; a leaf of any is a valid schedule."""


def single_slot_search(inst: Instance, nodes: Optional[int] = None,
                       deadline: Deadline = NO_DEADLINE) -> Optional[Schedule]:
    """A ``K = 1`` schedule with makespan equal to Theorem 3's bound found by the bounded
    depth-first search :func:`_bounded_search` (restarts with growing node budgets, cycling
    through the unrestricted rules and 16 narrower variants, dropping a variant whose whole
    tree was searched, and stopping when the unrestricted tree was; total ``nodes``, default
    ``2000 P m``: polynomial), verified by :func:`simulate`; else None.

    >>> from schedules import Instance, simulate
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
    alive = [complete] + [dict(c) for c in NARROW]
    used, attempt, chunk = 0, 0, 500
    while used < total and alive and not deadline.expired():  # deadline: between restarts
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
