"""Optimal schedules for multi-wave (``v >= 2``) pipelines when memory does not bind
(docs/theory_multiwave.md, MW5 and MW6).

* **looped** (fused, any ``v``, every ``P, m``): :func:`looped_bfs`, the breadth-first order.
  GPU ``p`` runs the forwards of its stages wave by wave (``q = 0..v-1``), each wave for
  microbatches ``0..m-1``, then the backwards wave by wave in reverse (``q = v-1..0``), each
  for ``0..m-1``. With ``M = max(m, P)`` its ASAP timing is ``F(j, qP+p)`` at ``(p + qM + j) f``
  and ``B(j, qP+p)`` at ``T_F + (P-1-p + (v-1-q) M + j) b`` with ``T_F = (P-1 + (v-1) M + m) f``,
  so its makespan is ``(P - 1 + (v-1) M + m)(f + b)``, the lower bound MW5 (proof in
  docs/theory_multiwave.md). Peak memory ``v m`` on every GPU.
* **vshape** (fused, ``v = 2``): closed forms for ``m <= P`` and every ``f, b``
  (:func:`vshape_small_m`, MW6b) and for ``f = b`` with ``P | m`` (:func:`vshape_periodic`,
  MW6a). Otherwise :func:`vshape_gap_fill` (a certificate when it reaches the bound) or
  :func:`vshape_certified`, which runs a bounded search
  (Giffler-Thompson active schedules aimed at the lower bound, at most ``NODE_FACTOR x #ops``
  nodes per time orientation, heavier pass first) and returns a schedule only when its
  makespan *equals* the lower bound of :mod:`bounds.multi_wave`: a per-instance certificate of
  optimality (lower bound = makespan of a valid schedule), polynomial by the node cap.

:func:`optimal_schedule` is the hook of :mod:`pipebounds.constructions` for ``v >= 2``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Optional

from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule
from schedules.simulate import simulate

VSHAPE_MAX_OPS = 480
"""Certification of a vshape instance is attempted only up to this many ops (``2 S m``)."""

NODE_FACTOR = 10
"""The vshape search visits at most ``NODE_FACTOR x #ops`` nodes per time orientation."""


# --------------------------------------------------------------------------- looped
def looped_bfs(inst: Instance) -> Schedule:
    """The breadth-first schedule of a fused looped instance (any ``v``; module docstring).

    >>> from schedules import simulate
    >>> simulate(looped_bfs(Instance(P=4, m=2, v=2, f=1, b=2))).makespan
    Fraction(27, 1)
    """
    if inst.split:
        raise ValueError("looped_bfs builds fused schedules; the instance has split backward")
    P, v, m = inst.P, inst.v, inst.m
    orders = []
    for p in range(P):
        seq = [Op(q * P + p, "F", j) for q in range(v) for j in range(m)]
        seq += [Op(q * P + p, "B", j) for q in reversed(range(v)) for j in range(m)]
        orders.append(tuple(seq))
    return Schedule(inst, tuple(orders), source="multi_wave.looped_bfs")


def looped_bfs_makespan(inst: Instance) -> Fraction:
    """The closed-form makespan of :func:`looped_bfs`, ``(P - 1 + (v-1) max(m, P) + m)(f+b)``."""
    return (inst.P - 1 + (inst.v - 1) * max(inst.m, inst.P) + inst.m) * (inst.f + inst.b)


# --------------------------------------------------------------------------- vshape search
def _chain(S: int, gpu, fu: int, bu: int):
    """Per chain index ``i`` (``i < S``: ``F`` of stage ``i``; else ``B`` of stage ``2S-1-i``):
    GPU, duration, tail (sum of the durations after it)."""
    cg = [gpu[i] if i < S else gpu[2 * S - 1 - i] for i in range(2 * S)]
    cd = [fu if i < S else bu for i in range(2 * S)]
    ct = [sum(cd[i + 1:]) for i in range(2 * S)]
    return cg, cd, ct


def _state_bound_ok(P, S, cg, cd, ct, mbs, free, T) -> bool:
    """Node bound: every microbatch's remaining chain and, per GPU, the Jackson bound over its
    remaining ops (heads from the microbatch's ready time, tails from the chain)."""
    per: list[list] = [[] for _ in range(P)]
    for idx, ready in mbs:
        if idx < 2 * S and ready + ct[idx] + cd[idx] > T:
            return False
        h = ready
        for i in range(idx, 2 * S):
            per[cg[i]].append((h, cd[i], ct[i]))
            h += cd[i]
    for g in range(P):
        ops = per[g]
        if not ops:
            continue
        ops.sort()
        tot, mq = 0, None
        for h, d, q in reversed(ops):
            tot += d
            mq = q if mq is None else min(mq, q)
            if max(free[g], h) + tot + mq > T:
                return False
        ops.sort(key=lambda o: o[2])
        tot, mh = 0, None
        for h, d, q in reversed(ops):
            tot += d
            mh = h if mh is None else min(mh, h)
            if max(free[g], mh) + tot + q > T:
                return False
    return True


def _dive_orders(P, S, gpu, m, fu, bu, T, limit):
    """Depth-first search over active (Giffler-Thompson) schedules for makespan ``<= T``
    (integer units), at most ``limit`` nodes; branches by earliest start, then the most advanced
    microbatch. Returns per-GPU op lists, or None (none found within the cap)."""
    cg, cd, ct = _chain(S, gpu, fu, bu)
    failed: set = set()
    count = [0]

    def dfs(mbs, free):
        key = (mbs, free)
        if key in failed:
            return None
        count[0] += 1
        if count[0] > limit:
            raise TimeoutError
        if all(idx == 2 * S for idx, _ in mbs):
            return []
        if not _state_bound_ok(P, S, cg, cd, ct, mbs, free, T):
            failed.add(key)
            return None
        cands, seen = [], set()
        for k, (idx, ready) in enumerate(mbs):
            if idx == 2 * S or (idx, ready) in seen:
                continue
            seen.add((idx, ready))
            g = cg[idx]
            es = max(ready, free[g])
            cands.append((es, es + cd[idx], g, k, idx))
        cstar = min(c[1] for c in cands)
        gstar = min(c[2] for c in cands if c[1] == cstar)
        branch = sorted((c for c in cands if c[2] == gstar and c[0] < cstar),
                        key=lambda c: (c[0], -c[4]))
        for es, ec, g, k, idx in branch:
            nmbs = tuple(sorted(mbs[:k] + ((idx + 1, ec),) + mbs[k + 1:]))
            nfree = free[:g] + (ec,) + free[g + 1:]
            rest = dfs(nmbs, nfree)
            if rest is not None:
                return [(g, idx, mbs[k], ec)] + rest
        failed.add(key)
        return None

    try:
        path = dfs(tuple((0, 0) for _ in range(m)), tuple([0] * P))
    except TimeoutError:
        return None
    if path is None:
        return None
    states = [(0, 0) for _ in range(m)]
    orders: list[list] = [[] for _ in range(P)]
    for g, idx, st, ec in path:
        j = states.index(st)
        s = idx if idx < S else 2 * S - 1 - idx
        orders[g].append(Op(s, "F" if idx < S else "B", j))
        states[j] = (idx + 1, ec)
    return orders


def _reverse(orders):
    """Time reversal: reverse every GPU's order and swap ``F`` and ``B`` (maps a schedule of
    durations ``(b, f)`` to one of ``(f, b)`` with the same makespan or less)."""
    return [[Op(op.stage, "B" if op.kind == "F" else "F", op.microbatch) for op in reversed(seq)]
            for seq in orders]


@lru_cache(maxsize=4096)
def vshape_certified(inst: Instance) -> Optional[Schedule]:
    """A fused vshape schedule (``v >= 2``, memory unconstrained) whose makespan equals the
    lower bound of :mod:`bounds.multi_wave`, or None when the bounded search finds none (or the
    instance has more than :data:`VSHAPE_MAX_OPS` ops). Proven optimal whenever returned.

    >>> s = vshape_certified(Instance(P=3, m=3, v=2, placement="vshape", f=1, b=2))
    >>> simulate(s).makespan
    Fraction(26, 1)
    """
    from bounds.multi_wave import gpu_subset_value

    if inst.split or inst.c != 0 or inst.placement != "vshape" or inst.v < 2:
        return None
    nops = 2 * inst.S * inst.m
    if nops > VSHAPE_MAX_OPS:
        return None
    base = inst.with_(K=None)
    lb = gpu_subset_value(base)
    u = inst.unit
    fu, bu, T = int(inst.f * u), int(inst.b * u), lb * u
    if T.denominator != 1:
        return None
    T = int(T)
    gpu = inst.stage_to_rank
    # the orientation with the heavier forward first (it is certified more often)
    for reverse in ((True, False) if bu > fu else (False, True)):
        a, c = (bu, fu) if reverse else (fu, bu)
        orders = _dive_orders(inst.P, inst.S, gpu, inst.m, a, c, T, NODE_FACTOR * nops)
        if orders is None:
            continue
        if reverse:
            orders = _reverse(orders)
        sched = Schedule(inst, tuple(tuple(o) for o in orders),
                         source="multi_wave.vshape_certified")
        res = simulate(sched.with_instance(base))
        if res.valid and res.makespan == lb:
            return sched
    return None


@lru_cache(maxsize=4096)
def _certified_gap_fill(inst: Instance) -> Optional[Schedule]:
    """:func:`vshape_gap_fill` when its simulated makespan equals MW1 (a certificate)."""
    from bounds.multi_wave import gpu_subset_value

    if inst.split or inst.placement != "vshape" or inst.v != 2 or inst.c != 0:
        return None
    if inst.m > inst.P and 2 * inst.m * inst.S > 4 * VSHAPE_MAX_OPS:
        return None  # outside the regime where it is known to work; keep the bound cheap
    sched = vshape_gap_fill(inst)
    if sched is None:
        return None
    res = simulate(sched)
    return sched if res.valid and res.makespan == gpu_subset_value(inst) else None


def vshape_proven(inst: Instance) -> bool:
    """True when :func:`vshape_certified` certifies ``inst`` (memory aside)."""
    return vshape_certified(inst.with_(K=None)) is not None


# --------------------------------------------------------------------------- vshape f = b
def vshape_periodic(inst: Instance) -> Optional[Schedule]:
    """MW6a: fused vshape, ``v = 2``, ``f = b``, and ``m <= P`` or ``P | m``: the no-wait
    schedule where microbatch ``J = gP + j`` (``0 <= j < P``) starts at ``o_J = (4Pg + 2j) f``
    and runs its chain without waiting: ``F(J,s)`` at ``o_J + s f``, ``B(J,s)`` at
    ``o_J + (4P - 1 - s) f``. Makespan ``o_{m-1} + 4P f`` = ``max(MW2, MW4)`` (proof:
    docs/theory_multiwave.md). None outside that case.

    >>> simulate(vshape_periodic(Instance(P=4, m=3, v=2, placement="vshape", f=1, b=1))).makespan
    Fraction(20, 1)
    >>> simulate(vshape_periodic(Instance(P=2, m=6, v=2, placement="vshape", f=1, b=1))).makespan
    Fraction(26, 1)
    """
    if (inst.split or inst.placement != "vshape" or inst.v != 2 or inst.f != inst.b
            or not (inst.m <= inst.P or inst.m % inst.P == 0)):
        return None
    P, m, S = inst.P, inst.m, inst.S
    timed = []
    for J in range(m):
        g, j = divmod(J, P)
        o = 4 * P * g + 2 * j
        for s in range(S):
            timed.append((o + s, Op(s, "F", J)))
            timed.append((o + 2 * S - 1 - s, Op(s, "B", J)))
    orders: list[list] = [[] for _ in range(P)]
    for _, op in sorted(timed, key=lambda t: t[0]):
        orders[inst.gpu(op.stage)].append(op)
    return Schedule(inst, tuple(tuple(o) for o in orders), source="multi_wave.vshape_periodic")


# --------------------------------------------------------------------------- vshape m <= P
def vshape_small_m_times(P: int, m: int, fu, bu) -> dict:
    """The MW6b timetable (``m <= P``, ``fu <= bu``): start time of every op ``(s, kind, j)``.

    * backwards: ``B(j,s)`` at ``2P f + 2 j b + (2P-1-s) b``;
    * forwards of stages ``s <= 2P-1-j``: ``(s + 2j) f`` (no-wait, two forwards per ``2f``);
    * forwards of stages ``2P-1-q`` for ``q < j`` (GPU ``q``): ``2P f + (2j - 1 - q) b``, in the
      window of length ``b`` that GPU ``q`` leaves free between two of its backwards.
    """
    S = 2 * P
    t0 = S * fu
    times = {}
    for j in range(m):
        for s in range(S):
            times[(s, "B", j)] = t0 + 2 * j * bu + (S - 1 - s) * bu
            if s <= S - 1 - j:
                times[(s, "F", j)] = (s + 2 * j) * fu
            else:
                q = S - 1 - s
                times[(s, "F", j)] = t0 + (2 * j - 1 - q) * bu
    return times


def vshape_small_m(inst: Instance) -> Optional[Schedule]:
    """MW6b: fused vshape, ``v = 2``, ``m <= P``, any ``f, b``: the orders of
    :func:`vshape_small_m_times` (time-reversed when ``f > b``, MW0); makespan
    ``MW4 = 2P(f+b) + 2(m-1) max(f, b)``, the optimum (proof: docs/theory_multiwave.md).

    >>> simulate(vshape_small_m(Instance(P=4, m=3, v=2, placement="vshape", f=1, b=3))).makespan
    Fraction(44, 1)
    """
    if (inst.split or inst.placement != "vshape" or inst.v != 2 or inst.c != 0
            or inst.m > inst.P):
        return None
    reverse = inst.f > inst.b
    fu, bu = (inst.b, inst.f) if reverse else (inst.f, inst.b)
    times = vshape_small_m_times(inst.P, inst.m, fu, bu)
    orders: list[list] = [[] for _ in range(inst.P)]
    for (s, kind, j), _ in sorted(times.items(), key=lambda kv: kv[1]):
        orders[inst.gpu(s)].append(Op(s, kind, j))
    if reverse:
        orders = _reverse(orders)
    return Schedule(inst, tuple(tuple(o) for o in orders), source="multi_wave.vshape_small_m")


# --------------------------------------------------------------------------- vshape gap fill
def _gap_fill_orders(P: int, m: int, fu: int, bu: int):
    """Per-GPU op lists of the gap-fill timetable (integer durations, ``bu >= fu``), and
    whether every forward chain meets its backward start (then the makespan is MW4)."""
    S = 2 * P
    gpu = [s % P if s < P else S - 1 - s for s in range(S)]
    busy: list[list] = [[] for _ in range(P)]
    start = {}
    for j in range(m):
        beta = S * fu + 2 * j * bu
        for s in range(S):
            t = beta + (S - 1 - s) * bu
            busy[gpu[s]].append((t, t + bu))
            start[(s, "B", j)] = t
    for seq in busy:
        seq.sort()
    ok = True
    for j in range(m):
        ready = 0
        for s in range(S):
            seq = busy[gpu[s]]
            t = ready
            for a, e in seq:  # earliest free window [t, t + f) at or after ready
                if e <= t:
                    continue
                if a >= t + fu:
                    break
                t = e
            seq.append((t, t + fu))
            seq.sort()
            start[(s, "F", j)] = t
            ready = t + fu
        ok = ok and ready <= start[(S - 1, "B", j)]
    orders: list[list] = [[] for _ in range(P)]
    for (s, kind, j), t in sorted(start.items(), key=lambda kv: (kv[1], kv[0][1] == "F")):
        orders[gpu[s]].append(Op(s, kind, j))
    return orders, ok


def vshape_gap_fill(inst: Instance) -> Optional[Schedule]:
    """MW6b: fused vshape, ``v = 2``: the backwards on the fixed timetable
    ``B(j,s)`` at ``2P f + 2 j M + (2P-1-s) M`` (``M = max(f, b)``, collision-free by parity),
    the forwards placed greedily, microbatch by microbatch and stage by stage, each at the
    earliest free window of its GPU after its predecessor (time-reversed when ``f > b``, MW0).
    Returned only when every forward chain meets its backward start, i.e. when the makespan is
    ``MW4 = 2P(f+b) + 2(m-1) max(f, b)``; this happened on every instance with ``m <= P`` that
    was checked (docs/theory_multiwave.md).

    >>> simulate(vshape_gap_fill(Instance(P=4, m=3, v=2, placement="vshape", f=1, b=3))).makespan
    Fraction(44, 1)
    """
    if inst.split or inst.placement != "vshape" or inst.v != 2 or inst.c != 0:
        return None
    u = inst.unit
    fu, bu = int(inst.f * u), int(inst.b * u)
    reverse = fu > bu
    orders, ok = _gap_fill_orders(inst.P, inst.m, bu if reverse else fu, fu if reverse else bu)
    if not ok:
        return None
    if reverse:
        orders = _reverse(orders)
    return Schedule(inst, tuple(tuple(o) for o in orders), source="multi_wave.vshape_gap_fill")


# --------------------------------------------------------------------------- hook
def single_microbatch_schedule(inst: Instance) -> Schedule:
    """``m = 1``, ``K = 1`` (any placement, fused or split): every op of the microbatch in the
    order of its head in :func:`bounds.multi_wave.single_slot_chain` (the forced recomputations
    included). The precedence graph orders each GPU's ops totally, so this is its ASAP timing:
    one activation per GPU, makespan the graph's longest path = MW1 = OPT (MW8d,
    docs/theory_multiwave.md).

    >>> from schedules import simulate
    >>> simulate(single_microbatch_schedule(Instance(P=2, m=1, v=2, K=1, f=3, b=1))).makespan
    Fraction(18, 1)
    """
    from bounds.multi_wave import single_slot_chain

    if inst.m != 1 or inst.K != 1:
        raise ValueError("single_microbatch_schedule needs m = 1 and K = 1")
    chain = single_slot_chain(inst)
    orders = []
    for p in range(inst.P):
        ops = sorted((head, kind, s) for (kind, s), (head, _, _) in chain.items()
                     if inst.stage_to_rank[s] == p)
        orders.append(tuple(Op(s, kind, 0) for _, kind, s in ops))
    return Schedule(inst, tuple(orders), source="K=1 single microbatch chain (MW8d)")


def optimal_schedule(inst: Instance) -> Optional[Schedule]:
    """A schedule proven optimal for ``inst`` (``v >= 2``), or None.

    ``m = 1, K = 1`` (any placement, fused or split): :func:`single_microbatch_schedule` (MW8d).
    Otherwise fused, no communication delay, named placement; memory not binding: ``K`` None or at least
    the returned schedule's peak (``v m`` for looped). Looped: :func:`looped_bfs` (MW5, every
    ``P, m, v``). Vshape: :func:`vshape_periodic` (MW6a) or :func:`vshape_certified` (MW6,
    per-instance certificate).

    >>> from schedules import simulate
    >>> simulate(optimal_schedule(Instance(P=3, m=2, v=2, f=1, b=2))).makespan
    Fraction(21, 1)
    """
    if inst.v >= 2 and inst.m == 1 and inst.K == 1 and inst.c == 0:
        return single_microbatch_schedule(inst)
    if inst.v < 2 or inst.split or inst.c != 0:
        return None
    if inst.placement == "looped":
        if inst.K is not None and inst.K < inst.v * inst.m:
            return None
        return looped_bfs(inst)
    if inst.placement == "vshape":
        sched = vshape_periodic(inst) if inst.c == 0 else None
        if sched is None:
            sched = vshape_small_m(inst)
        if sched is None:
            sched = _certified_gap_fill(inst.with_(K=None))
        if sched is None:
            sched = vshape_certified(inst.with_(K=None))
        if sched is None:
            return None
        sched = sched.with_instance(inst)
        if inst.K is not None and max(simulate(sched).peak_memory) > inst.K:
            return None
        return sched
    return None
