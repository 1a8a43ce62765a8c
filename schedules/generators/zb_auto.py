"""ZB-2p: the automatic zero-bubble schedule under a memory limit (Qi, Wan, Huang, Lin, *Zero
Bubble Pipeline Parallelism*, ICLR 2024, section 3 and appendix; the ``zb`` scheduler of
sail-sg/zero-bubble-pipeline-parallelism, whose ``--zero-bubble-max-pending-backward 2p``
gives "ZB2P").

One stage per GPU (``v = 1``), split backward (``I`` = the paper's ``B``). The paper's
heuristic, re-implemented here on this project's model: it builds the per-GPU orders one
microbatch at a time while tracking the ASAP end time of every op.

* Microbatch 0: one forward on every GPU; then, from the last GPU back to the first, as many
  further forwards as fit (memory limit, and either until the GPU would reach the time the
  input gradient of microbatch 0 arrives, or until a further forward would end after it: the
  flag ``allow_bubble_before_first_b``), never more than the previous GPU's; then the input
  gradients of microbatch 0 from the last GPU back.
* Microbatch ``i >= 1``: each GPU that still has forwards takes one (a GPU two or more
  forwards ahead of the next may skip it when its bubble budget allows: ``prioritize_b``),
  but no GPU more than the later ones; before each forward (and each input gradient) the GPU
  runs pending ``W`` while memory is full, and while a ``W`` fits entirely before the op's
  input arrives; one more ``W`` that would overlap the arrival is taken when the wait exceeds
  the GPU's bubble budget (the largest bubble of any GPU so far minus its own), or always
  (``no_bubble_greedy``); then the input gradient of microbatch ``i`` on every GPU, last
  first. The first GPU flushes its ``W`` once its forwards are done.
* Every pending ``W`` at the end.

The 8 combinations of the three flags are built and the one with the smallest longest per-GPU
span (first op start to last op end: the paper's "cost") is kept, ties to the first. The
paper then improves that order with an ILP, and its repository's runtime uses the heuristic
alone; this generator is the heuristic. Memory: a forward stores one activation, ``W``
releases it (MODEL.md); the limit is ``2P`` activations for ZB-2p (``P`` gives ZB-1p).

>>> from schedules import Instance, simulate
>>> r = simulate(zb_2p(Instance(P=4, m=8, b_I=1, b_W=1)))
>>> r.valid, max(r.peak_memory) <= 8
(True, True)
"""

from __future__ import annotations

from typing import Optional

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import GeneratorError, require

FLAGS = [(a, b, c) for a in (True, False) for b in (True, False) for c in (True, False)]


class _Build:
    """One run of the heuristic (one flag combination), in integer time units; index ``j``
    is the stage (one per GPU)."""

    def __init__(self, inst: Instance, limit: int, allow_bubble: bool, prioritize_b: bool,
                 no_bubble_greedy: bool):
        u = inst.unit
        self.P, self.m, self.limit = inst.P, inst.m, limit
        self.cost = {k: [int(x * u) for x in inst.durations_of(k)] for k in ("F", "I", "W")}
        self.comm = int(inst.c * u)
        self.flags = (allow_bubble, prioritize_b, no_bubble_greedy)
        P = self.P
        self.count = {k: [0] * P for k in ("F", "I", "W")}
        self.free = [0] * P            # end of the GPU's last op
        self.mem = [0] * P
        self.bubble = [0] * P          # idle time after the GPU's first op
        self.start = [None] * P        # start of the GPU's first op
        self.end: dict[tuple[str, int, int], int] = {}
        # (kind, microbatch) per stage; made into ops for the winning run only (eight runs)
        self.orders: list[list[tuple[str, int]]] = [[] for _ in range(P)]

    def put(self, j: int, kind: str) -> None:
        i = self.count[kind][j]
        c = self.cost[kind][j]
        t = self.free[j] + c
        if kind == "F" and j > 0:
            t = max(t, self.end["F", j - 1, i] + self.comm + c)
        if kind == "I" and j < self.P - 1:
            t = max(t, self.end["I", j + 1, i] + self.comm + c)
        if self.start[j] is None:
            self.start[j] = t - c
        elif self.count["F"][j] > 0:
            self.bubble[j] += t - (self.free[j] + c)
        self.free[j] = t
        self.end[kind, j, i] = t
        self.mem[j] += {"F": 1, "I": 0, "W": -1}[kind]
        self.count[kind][j] += 1
        self.orders[j].append((kind, i))

    def pending_w(self, j: int) -> bool:
        return self.count["W"][j] < self.count["I"][j]

    def fill_w_before(self, j: int, arrival: int) -> None:
        """``W`` while one ends by ``arrival``; then maybe one more (see the module docstring)."""
        cw = self.cost["W"][j]
        while self.pending_w(j) and self.free[j] + cw <= arrival:
            self.put(j, "W")
        if self.pending_w(j) and self.free[j] < arrival:
            budget = max(self.bubble) - self.bubble[j]
            if arrival - self.free[j] > budget or self.flags[2]:
                self.put(j, "W")

    def make_room(self, j: int) -> None:
        while self.mem[j] + 1 > self.limit:
            if not self.pending_w(j):
                raise GeneratorError("zb-2p: cannot fit the memory limit")
            self.put(j, "W")

    def first_microbatch(self) -> None:
        P, m, comm = self.P, self.m, self.comm
        for j in range(P):
            self.put(j, "F")
        extra = [0] * P
        last = 0
        for j in reversed(range(P)):
            if j == P - 1:
                last = self.end["F", j, 0] + self.cost["I"][j]
                continue
            mem, t = self.mem[j], self.free[j]
            while self.count["F"][j] + extra[j] < m and mem + 1 <= self.limit:
                if self.flags[0]:
                    if t + self.cost["F"][j] > last + comm:
                        break
                elif t >= last + comm:
                    break
                mem += 1
                t += self.cost["F"][j]
                extra[j] += 1
            last = max(t, last + comm) + self.cost["I"][j]
        for j in range(1, P):
            while extra[j] > 0 and extra[j] >= extra[j - 1] and self.count["F"][j] + extra[j] < m:
                extra[j] -= 1
        for j in range(P):
            for _ in range(extra[j]):
                self.put(j, "F")
        for j in reversed(range(P)):
            self.put(j, "I")

    def wants_forward(self, j: int) -> bool:
        P = self.P
        nf = self.count["F"]
        if nf[j] >= self.m:
            return False
        if not (self.flags[1] and j + 1 < P and nf[j] >= nf[j + 1] + 2):
            return True
        horizon = self.free[j + 1] + self.cost["F"][j + 1] + self.cost["I"][j + 1] + self.comm
        if self.free[j] >= horizon:
            return False
        w_cost, w_cnt, mem = 0, 0, self.mem[j] + 1
        while mem > self.limit and self.count["W"][j] + w_cnt < self.count["I"][j]:
            w_cost += self.cost["W"][j]
            mem -= 1
            w_cnt += 1
        if self.free[j] + self.cost["F"][j] + w_cost <= horizon:
            return True
        return horizon - self.free[j] > max(self.bubble) - self.bubble[j]

    def microbatch(self, i: int) -> None:
        P = self.P
        want = [self.wants_forward(j) for j in range(P)]
        for j in reversed(range(P - 1)):
            want[j] = want[j] and want[j + 1]
        for j in range(P):
            if not want[j]:
                continue
            self.make_room(j)
            if j > 0:
                self.fill_w_before(j, self.end["F", j - 1, self.count["F"][j]] + self.comm)
            self.put(j, "F")
        for j in reversed(range(P)):
            if j + 1 < P:
                self.fill_w_before(j, self.end["I", j + 1, i] + self.comm)
            if j == 0 and self.count["F"][j] == self.m:
                while self.pending_w(j):
                    self.put(j, "W")
            self.put(j, "I")

    def run(self) -> "_Build":
        self.first_microbatch()
        for i in range(1, self.m):
            self.microbatch(i)
        for j in range(self.P):
            while self.count["W"][j] < self.m:
                self.put(j, "W")
        return self

    def longest_span(self) -> int:
        return max(self.free[j] - (self.start[j] or 0) for j in range(self.P))


def zb_auto(inst: Instance, limit: Optional[int] = None, source: str = "zb-auto") -> Schedule:
    """The zero-bubble heuristic of ``inst`` (``v = 1``, split) with at most ``limit`` live
    activations per GPU (default ``2P``); see the module docstring."""
    require(inst.v == 1, source, f"needs one stage per GPU (v=1), got v={inst.v}")
    require(inst.split, source, "needs split backward durations (--b-input and --b-weight)")
    limit = 2 * inst.P if limit is None else limit
    require(limit >= 1, source, f"needs a memory limit >= 1, got {limit}")
    best: Optional[_Build] = None
    for flags in FLAGS:
        try:
            b = _Build(inst, limit, *flags).run()
        except GeneratorError:
            continue
        if best is None or b.longest_span() < best.longest_span():
            best = b
    if best is None:
        raise GeneratorError(f"{source}: no order fits {limit} activations per GPU")
    orders: list[tuple[Op, ...]] = [()] * inst.P
    for s, order in enumerate(best.orders):  # stage s runs on GPU stage_to_rank[s]
        orders[inst.gpu(s)] = tuple(Op(s, kind, i) for kind, i in order)
    return Schedule(inst, tuple(orders), source)


def zb_2p(inst: Instance) -> Schedule:
    """ZB-2p of ``inst``: :func:`zb_auto` with the limit ``2P`` activations per GPU."""
    return zb_auto(inst, 2 * inst.P, source="zb-2p")
