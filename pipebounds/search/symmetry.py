"""Symmetry between identical microbatches: orders an exact model may impose (docs/search.md,
"Symmetry rules").

Microbatches are interchangeable (uniform durations). The *chain* of microbatch ``j`` has
positions ``k = 0 .. 2S-1``: ``F(j,k)`` for ``k < S``, then the input-gradient op ``IG(j,s)``
(``B``, or ``I`` when split) at ``k = 2S-1-s``. Four rules, each true of at least one optimal
schedule, and all four of the same one:

* **SYM1** (the search's: identical rows are branched on once): ``F(j,0)`` before ``F(j+1,0)``;
* **SYM2**: for ``j < j'`` and ``s >= 1``, ``F(j,s)`` before ``F(j',s)`` when neither ``j`` nor
  ``j'`` recomputes a stage ``< s``;
* **SYM3**: for ``j < j'``, ``IG(j,s)`` before ``IG(j',s)`` and ``W(j,s)`` before ``W(j',s)`` on
  every stage when neither recomputes any stage;
* **SYM4** (split): on every stage the ``W`` ops run in the order of the ``I`` ops.

Proof (constructive: :func:`canonical` performs it). Take any valid schedule, keep every op's
time and GPU and only change which microbatch each op belongs to. (1) Relabel microbatches by
the start of ``F(.,0)``: SYM1. (2) For each cut ``k = 0 .. 2S-2`` in turn (between chain
positions ``k`` and ``k+1``), let the *class* be the microbatches with no ``R`` on a stage whose
activation crosses the cut (stages ``<= k`` for a forward cut ``k <= S-1``, stages ``< s`` for
the cut after ``IG(s)``). Within the class, give the suffixes (the ops at positions ``> k``,
with the ``W`` and ``R`` of the stages whose input-gradient op is there) to the prefixes in
order: the ``i``-th prefix to end gets the ``i``-th suffix to start. Precedence holds at the cut:
the ``i``-th suffix start is at or after the end of its own prefix, and among the ``i`` first
suffixes some prefix ends no earlier than the ``i``-th prefix end (the lag between two stages is
the same for every microbatch). Nothing else links prefix and suffix (no ``R`` crosses within
the class), and memory is unchanged: on one GPU the live count at an instant is the number of
storing ops started minus releasing ops ended, which does not depend on labels, and every pair
still stores before it releases. Classes shrink along the forward cuts, so within a class the
order at every earlier position is the order at position 0: SYM2 and, for microbatches without
any ``R`` (in every class), SYM3 for ``IG``. Swaps at a cut move only ops after it, so later
cuts do not undo earlier ones. (3) On each stage, give the ``W`` ops to the microbatches in the
order of their ``I`` ops (the ``i``-th ``W`` starts after the ``i``-th ``I`` ends, by the same
counting): SYM4, and SYM3 for ``W``. ``W`` has no successor and the live count is unchanged.
Backward rematerialization (an ``R`` after ``I``) is outside the branch and bound's model; the
CP-SAT model takes it with ``backward=True`` and then imposes SYM1 alone (a relabelling of
identical microbatches, valid whatever each recomputes).
"""

from __future__ import annotations

from fractions import Fraction

from schedules.ops import Op
from schedules.schedule import Schedule
from schedules.simulate import simulate

RULES = ("SYM1", "SYM2", "SYM3", "SYM4")


def _as_split(sched: Schedule) -> Schedule:
    """A fused ``B`` in a split instance becomes ``I, W`` at its place (loses nothing:
    docs/search.md, "Split form")."""
    inst = sched.instance
    if not inst.split or not any(op.kind == "B" for seq in sched.orders for op in seq):
        return sched
    orders = []
    for seq in sched.orders:
        out = []
        for op in seq:
            if op.kind == "B":
                out += [Op(op.stage, "I", op.microbatch), Op(op.stage, "W", op.microbatch)]
            else:
                out.append(op)
        orders.append(tuple(out))
    return Schedule(inst, tuple(orders), source=sched.source)


def canonical(sched: Schedule) -> Schedule:
    """A schedule with the same op times (so a makespan no larger, after ASAP re-timing) that
    satisfies SYM1-SYM4: the relabelling of the module docstring. ``sched`` must be valid."""
    sched = _as_split(sched)
    inst = sched.instance
    S, m = inst.S, inst.m
    ig = "I" if inst.split else "B"
    res = simulate(sched)
    assert res.valid, f"canonical needs a valid schedule: {res.errors[:3]}"
    times = res.op_times()
    bundles: list[dict] = [dict() for _ in range(m)]
    for op, t in times.items():
        bundles[op.microbatch][(op.kind, op.stage)] = t

    def pos(key) -> int:
        kind, s = key
        return s if kind == "F" else 2 * S - 1 - s

    def at(k: int):
        return ("F", k) if k < S else (ig, 2 * S - 1 - k)

    L = sorted(bundles, key=lambda b: b[("F", 0)][0])                      # step (1)
    for k in range(2 * S - 1):                                             # step (2)
        crossing = range(k + 1) if k <= S - 1 else range(2 * S - 1 - k)
        members = [i for i in range(m) if not any(("R", t) in L[i] for t in crossing)]
        members.sort(key=lambda i: L[i][at(k)][1])
        suffixes = sorted(({key: v for key, v in L[i].items() if pos(key) > k} for i in members),
                          key=lambda suf: suf[at(k + 1)][0])
        for i, suf in zip(members, suffixes):
            L[i] = {key: v for key, v in L[i].items() if pos(key) <= k} | suf
    if inst.split:                                                         # step (3)
        for s in range(S):
            by_i = sorted(range(m), key=lambda i: L[i][("I", s)][0])
            ws = sorted(L[i][("W", s)] for i in range(m))
            for i, w in zip(by_i, ws):
                L[i][("W", s)] = w
    per_gpu: list[list[tuple[Fraction, Op]]] = [[] for _ in range(inst.P)]
    gpu = inst.stage_to_rank
    for j, b in enumerate(L):
        for (kind, s), (start, _) in b.items():
            per_gpu[gpu[s]].append((start, Op(s, kind, j)))
    out = Schedule(inst, tuple(tuple(op for _, op in sorted(seq, key=lambda x: x[0]))
                               for seq in per_gpu), source=sched.source)
    after = simulate(out)
    assert after.valid and after.makespan <= res.makespan, "canonical relabelling broke a schedule"
    return out


def violations(sched: Schedule) -> list[str]:
    """The SYM rules ``sched`` breaks (one message each), judged on its ASAP times."""
    sched = _as_split(sched)
    inst = sched.instance
    S, m = inst.S, inst.m
    ig = "I" if inst.split else "B"
    times = simulate(sched).op_times()
    rec = [{op.stage for op in times if op.kind == "R" and op.microbatch == j} for j in range(m)]
    out = []

    def before(a: Op, b: Op) -> bool:
        return times[a][1] <= times[b][0]

    for j in range(m - 1):
        if not before(Op(0, "F", j), Op(0, "F", j + 1)):
            out.append(f"SYM1: F({j},0) after F({j + 1},0)")
    for j in range(m):
        for k in range(j + 1, m):
            for s in range(1, S):
                if not any(t < s for t in rec[j] | rec[k]) and not before(Op(s, "F", j),
                                                                          Op(s, "F", k)):
                    out.append(f"SYM2: F({j},{s}) after F({k},{s})")
            if rec[j] or rec[k]:
                continue
            for s in range(S):
                for kind in ((ig, "W") if inst.split else (ig,)):
                    if not before(Op(s, kind, j), Op(s, kind, k)):
                        out.append(f"SYM3: {kind}({j},{s}) after {kind}({k},{s})")
    if inst.split:
        for s in range(S):
            for j in range(m):
                for k in range(m):
                    if (j != k and before(Op(s, "I", j), Op(s, "I", k))
                            and not before(Op(s, "W", j), Op(s, "W", k))):
                        out.append(f"SYM4: W({j},{s}) after W({k},{s}) though I({j},{s}) is first")
    return out
