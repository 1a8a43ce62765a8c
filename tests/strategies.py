"""Hypothesis strategies: instances, random *valid* schedules and mutations of them.

Random valid schedules come from a randomized list scheduler that covers orders no generator
would produce. It appends one ready op at a time (all predecessors already listed, so the
per-GPU orders can never contain a cycle), chooses at every forward whether to keep the
activation or checkpoint it (recompute later: an ``R`` op), chooses per ``(j, s)`` between the
fused ``B`` and the split ``I, W`` form when the instance has split durations, and never lets a
GPU hold more than ``K`` live activations.

It never deadlocks. A move that stores an activation (a kept forward, an ``R``) is accepted
only if the state after it is *safe*: the canonical completion below finishes from it. The
canonical completion runs every remaining forward as a checkpoint (no memory), every pending
``W`` (frees memory), then advances the backward chains of all microbatches while it can; a
chain at stage ``s`` advances with ``B``/``I`` if ``(j, s)`` is stored, or with ``R`` then
``B``/``I`` if its GPU has a free slot. Advancing a chain never raises memory after the step,
so the set of advanceable chains only grows: the completion succeeds iff some completion
exists in which every remaining forward is a checkpoint, which holds iff any completion exists
(a checkpointed forward holds less memory than a kept one, for no shorter a time). Moves that
store nothing (checkpointed forwards, ``B``, ``I``, ``W``) cannot turn a safe state unsafe:
they only release memory or enable more ops. The initial state is safe for every ``K >= 1``
(the completion then runs each microbatch's backward with one slot per GPU). So some move is
always accepted, and :func:`random_schedule` asserts that the result is valid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from hypothesis import note, strategies as st

from schedules import Instance, Op, Schedule, document_from_schedule, simulate

CI_EXAMPLES = 40
"""``max_examples`` of the ``ci`` profile (tests/conftest.py)."""


def scaled(n: int) -> int:
    """``n`` examples under the ``ci`` profile, proportionally more under ``thorough`` (for
    tests that set their own, smaller ``max_examples`` because each example is slow)."""
    from hypothesis import settings

    return max(1, round(n * settings.default.max_examples / CI_EXAMPLES))


# ----------------------------------------------------------------------------- instances

DURATIONS = st.builds(Fraction, st.integers(1, 6), st.sampled_from([1, 1, 1, 2, 3]))
"""Positive rationals such as 1, 2, 3/2, 5/3 (integers are the common case)."""


@st.composite
def instances(draw, *, max_P: int = 4, max_v: int = 3, max_m: int = 5, max_pairs: int = 24,
              K=None, split: Optional[bool] = None, c: bool = False, v: Optional[int] = None,
              max_K: Optional[int] = None, explicit: bool = False,
              placement: Optional[str] = None) -> Instance:
    """Small instances: ``P``, ``v``, ``m`` with ``S*m <= max_pairs``, both placements, ``K``
    from 1 to unconstrained, rational durations, fused or split backward, optional ``c``.

    ``K`` None means drawn, ``"inf"`` unconstrained, else that value; ``split`` None means
    drawn; ``explicit`` also draws arbitrary ``stage_to_rank`` lists (each GPU ``v`` stages, in
    any order), which the simulator handles but the bounds' theory does not cover.
    """
    P = draw(st.integers(1, max_P))
    vv = v if v is not None else draw(st.integers(1, max_v))
    vv = max(1, min(vv, max_pairs // P)) if v is None else vv
    S = vv * P
    m = draw(st.integers(1, max(1, min(max_m, max_pairs // S))))
    if placement is None:
        placement = draw(st.sampled_from(["looped", "vshape"])) if vv > 1 else "looped"
    stage_to_rank = None
    if explicit and P > 1 and draw(st.integers(0, 2)) == 0:
        stage_to_rank = tuple(draw(st.permutations(list(range(P)) * vv)))
    if K is None:
        top = max_K if max_K is not None else vv * m + 1
        KK = draw(st.one_of(st.none(), st.integers(1, max(1, top))))
    else:
        KK = None if K == "inf" else K
    f = draw(DURATIONS)
    is_split = draw(st.booleans()) if split is None else split
    kw = dict(P=P, m=m, K=KK, v=vv, placement=placement, f=f, stage_to_rank=stage_to_rank)
    if is_split:
        kw["b_I"] = draw(DURATIONS)
        kw["b_W"] = draw(DURATIONS)
    else:
        kw["b"] = draw(DURATIONS)
    if c:
        kw["c"] = draw(st.sampled_from([Fraction(0), Fraction(0), Fraction(1, 2), Fraction(1)]))
    return Instance(**kw)


# --------------------------------------------------------------- random valid schedules

@dataclass
class _State:
    inst: Instance
    done: set          # (stage, kind, j)
    kept: set          # (s, j) whose activation is currently stored (kept F, or R done)
    checkpointed: set  # (s, j) whose forward was run as a checkpoint (needs R later)
    live: list         # live activations per GPU
    orders: list       # per GPU list of Op


def _fits(state: _State, p: int) -> bool:
    K = state.inst.K
    return K is None or state.live[p] < K


def _grad_done(state: _State, s: int, j: int) -> bool:
    """The input-gradient op (B or I) of (j, s) is listed."""
    return (s, "B", j) in state.done or (s, "I", j) in state.done


def _safe(state: _State) -> bool:
    """True iff the canonical completion (module docstring) finishes from ``state``."""
    inst = state.inst
    S, K = inst.S, inst.K
    live = list(state.live)
    kept = set(state.kept)
    # pending W ops release their activation
    for (s, kind, j) in state.done:
        if kind == "I" and (s, "W", j) not in state.done:
            live[inst.gpu(s)] -= 1
            kept.discard((s, j))
    # chain position of every microbatch: the highest stage whose input gradient is not listed
    pos = {}
    for j in range(inst.m):
        s = S - 1
        while s >= 0 and _grad_done(state, s, j):
            s -= 1
        if s >= 0:
            pos[j] = s
    progress = True
    while pos and progress:
        progress = False
        for j in list(pos):
            s = pos[j]
            while s >= 0:
                p = inst.gpu(s)
                if (s, j) in kept:
                    live[p] -= 1           # B (or I then W) releases it
                elif K is None or live[p] < K:
                    pass                   # R then B: needs one free slot for a moment
                else:
                    break
                s -= 1
                progress = True
            if s < 0:
                del pos[j]
            else:
                pos[j] = s
    return not pos


def _moves(state: _State) -> list:
    """Ready moves, in a canonical order: ``(op, keep)``; keep is meaningful for F only."""
    inst = state.inst
    S, done = inst.S, state.done
    out = []
    for j in range(inst.m):
        for s in range(S):
            if (s, "F", j) not in done:
                if s == 0 or (s - 1, "F", j) in done:
                    p = inst.gpu(s)
                    if _fits(state, p):
                        out.append((Op(s, "F", j), True))
                    out.append((Op(s, "F", j), False))
                continue
            if (s, j) in state.checkpointed and (s, "R", j) not in done:
                if _fits(state, inst.gpu(s)):
                    out.append((Op(s, "R", j), None))
                continue
            if _grad_done(state, s, j):
                if (s, "I", j) in done and (s, "W", j) not in done:
                    out.append((Op(s, "W", j), None))
                continue
            if s == S - 1 or _grad_done(state, s + 1, j):
                out.append((Op(s, "B", j), None))
                if inst.split:
                    out.append((Op(s, "I", j), None))
    return out


def _apply(state: _State, op: Op, keep) -> None:
    inst = state.inst
    s, j, p = op.stage, op.microbatch, inst.gpu(op.stage)
    state.done.add((s, op.kind, j))
    state.orders[p].append(op)
    if op.kind == "F":
        if keep:
            state.kept.add((s, j))
            state.live[p] += 1
        else:
            state.checkpointed.add((s, j))
    elif op.kind == "R":
        state.kept.add((s, j))
        state.live[p] += 1
    elif op.kind in ("B", "W"):
        state.kept.discard((s, j))
        state.live[p] -= 1


def _copy(state: _State) -> _State:
    return _State(state.inst, set(state.done), set(state.kept), set(state.checkpointed),
                  list(state.live), state.orders)


def _est(state: _State, ends: dict, free: list, op: Op):
    """Earliest start of ``op`` if appended now (ASAP: its GPU's free time, its predecessors'
    ends, plus ``c`` across GPUs)."""
    inst = state.inst
    s, j, k = op.stage, op.microbatch, op.kind
    p = inst.gpu(s)
    t = free[p]

    def after(key):
        nonlocal t
        e = ends[key] + (inst.c if inst.gpu(key[0]) != p else 0)
        t = max(t, e)

    if k == "F" and s > 0:
        after((s - 1, "F", j))
    elif k == "R":
        after((s, "F", j))
    elif k in ("B", "I"):
        if s == inst.S - 1:
            after((s, "F", j))
        else:
            after((s + 1, "I", j) if (s + 1, "I", j) in ends else (s + 1, "B", j))
        if (s, j) in state.checkpointed:
            after((s, "R", j))
    elif k == "W":
        after((s, "I", j))
    return t


def random_schedule(inst: Instance, choose, timed: bool = False, slack=0) -> Schedule:
    """A valid schedule of ``inst``; ``choose(n)`` picks an index in ``range(n)`` at each step.

    ``timed=False``: any ready move may be picked. ``timed=True``: a randomized *greedy* list
    scheduler: only moves whose earliest start is within ``slack`` of the earliest one are
    offered first (the others, by start time, only if those are all unsafe), which gives
    near-optimal schedules that probe the bounds much closer than uniform choices.
    """
    state = _State(inst, set(), set(), set(), [0] * inst.P, [[] for _ in range(inst.P)])
    assert _safe(state), "the empty state must be safe"
    ends: dict = {}
    free = [Fraction(0)] * inst.P
    total_pairs = inst.S * inst.m
    while True:
        moves = _moves(state)
        if not moves:
            break
        if timed:
            est = [_est(state, ends, free, op) for op, _ in moves]
            low = min(est) + slack
            order = [i for i in range(len(moves)) if est[i] <= low]
            first = choose(len(order))
            order = order[first:] + order[:first] + sorted(
                (i for i in range(len(moves)) if est[i] > low), key=lambda i: est[i])
        else:
            first = choose(len(moves))
            order = [(first + k) % len(moves) for k in range(len(moves))]
        for i in order:
            op, keep = moves[i]
            stores = op.kind == "R" or (op.kind == "F" and keep)
            if stores:
                trial = _copy(state)
                trial.done.add((op.stage, op.kind, op.microbatch))
                trial.kept.add((op.stage, op.microbatch))
                trial.live[inst.gpu(op.stage)] += 1
                if not _safe(trial):
                    continue
            if timed:
                start = _est(state, ends, free, op)
                ends[(op.stage, op.kind, op.microbatch)] = start + inst.duration(op.kind)
                free[inst.gpu(op.stage)] = start + inst.duration(op.kind)
            _apply(state, op, keep)
            break
        else:  # pragma: no cover - the module docstring proves this cannot happen
            raise AssertionError(f"random list scheduler stuck on {inst}")
    sched = Schedule.from_strings(inst, state.orders, source="greedy" if timed else "random")
    assert len(state.done) >= 2 * total_pairs
    res = simulate(sched)
    assert res.valid, (res.errors, json.dumps(document_from_schedule(sched)))
    if timed:  # the greedy's own times are the ASAP times of the orders it built
        assert res.makespan == max(ends.values())
    return sched


@st.composite
def schedules_of(draw, inst: Instance) -> Schedule:
    """Random valid schedules of one instance."""
    return random_schedule(inst, lambda n: draw(st.integers(0, n - 1)) if n > 1 else 0)


@st.composite
def greedy_schedules(draw, instance_strategy=None) -> Schedule:
    """An instance, then a randomized greedy (time-aware) valid schedule of it: near-optimal
    orders, to probe the lower bound from close by."""
    inst = draw(instance_strategy if instance_strategy is not None else instances())
    slack = draw(st.sampled_from([Fraction(0), Fraction(0), Fraction(1, 2), Fraction(2)]))
    return random_schedule(inst, lambda n: draw(st.integers(0, n - 1)) if n > 1 else 0,
                           timed=True, slack=slack)


@st.composite
def valid_schedules(draw, instance_strategy=None) -> Schedule:
    """An instance, then a random valid schedule of it."""
    inst = draw(instance_strategy if instance_strategy is not None else instances())
    return draw(schedules_of(inst))


def note_schedule(schedule: Schedule, label: str = "schedule") -> None:
    """On failure, print the schedule as an orders document that ``pipebounds simulate`` reads."""
    from hypothesis.control import currently_in_test_context

    if currently_in_test_context():
        note(f"{label} (orders document): {json.dumps(document_from_schedule(schedule))}")


# ------------------------------------------------------------------------------ orders
def replace_orders(schedule: Schedule, orders, inst: Optional[Instance] = None) -> Schedule:
    return Schedule(inst or schedule.instance, tuple(tuple(seq) for seq in orders),
                    source="mutated")


def _r_in_place(seq) -> bool:
    """Every R of the list sits after its F and before its backward op (the ``recompute`` rule)."""
    where = {(op.stage, op.kind, op.microbatch): i for i, op in enumerate(seq)}
    for (s, kind, j), i in where.items():
        if kind == "R":
            back = where.get((s, "I", j), where.get((s, "B", j)))
            if where.get((s, "F", j), -1) > i or (back is not None and back < i):
                return False
    return True


@st.composite
def perturbed_orders(draw, inst_strategy=None) -> Schedule:
    """A random valid schedule with a few random swaps inside GPU orders (which keep every R
    between its F and its backward): often still valid, often deadlocked or above ``K``."""
    sched = draw(valid_schedules(inst_strategy if inst_strategy is not None
                                 else instances(max_pairs=16, c=True, explicit=True)))
    orders = [list(seq) for seq in sched.orders]
    for _ in range(draw(st.integers(1, 3))):
        p = draw(st.integers(0, len(orders) - 1))
        seq = orders[p]
        if len(seq) < 2:
            continue
        i = draw(st.integers(0, len(seq) - 2))
        k = draw(st.integers(i + 1, min(len(seq) - 1, i + 4)))
        trial = list(seq)
        trial[i], trial[k] = trial[k], trial[i]
        if _r_in_place(trial):
            orders[p] = trial
    return replace_orders(sched, orders)


def arbitrary_orders(inst_strategy=None):
    """Structurally valid orders of either kind: :func:`shuffled_orders` (mostly deadlocked)
    or :func:`perturbed_orders` (a mix of valid, deadlocked and over-memory)."""
    return st.one_of(shuffled_orders(inst_strategy), perturbed_orders(inst_strategy))


@st.composite
def shuffled_orders(draw, inst_strategy=None) -> Schedule:
    """Structurally valid but arbitrary orders: every op once on its GPU, in a random order per
    GPU (so they may deadlock or exceed ``K``); random recomputes placed after their forward
    and before their backward in the GPU's list."""
    inst = draw(inst_strategy if inst_strategy is not None
                else instances(max_pairs=16, c=True, explicit=True))
    orders = []
    for p in range(inst.P):
        ops = []
        for s in inst.stages_of(p):
            for j in range(inst.m):
                ops.append(Op(s, "F", j))
                if inst.split and draw(st.booleans()):
                    ops += [Op(s, "I", j), Op(s, "W", j)]
                else:
                    ops.append(Op(s, "B", j))
        seq = draw(st.permutations(ops))
        seq = list(seq)
        # random recomputes, put between F and the backward op in this GPU's list
        for s in inst.stages_of(p):
            for j in range(inst.m):
                if draw(st.integers(0, 3)) == 0:
                    fi = seq.index(Op(s, "F", j))
                    bop = Op(s, "I", j) if Op(s, "I", j) in seq else Op(s, "B", j)
                    bi = seq.index(bop)
                    if fi < bi:
                        at = draw(st.integers(fi + 1, bi))
                        seq.insert(at, Op(s, "R", j))
        orders.append(seq)
    return Schedule(inst, tuple(tuple(x) for x in orders), source="shuffled")


# ---------------------------------------------------------------------------- mutations
@dataclass(frozen=True)
class Mutation:
    """A mutated schedule, the rule it must break, and the rules it may break besides."""

    schedule: Schedule
    original: Schedule
    expected: str
    allowed: frozenset
    what: str


def _reachable(schedule: Schedule) -> dict:
    """{op key: set of op keys reachable through precedences} (tiny instances only)."""
    from reference_sim import precedence_arcs

    succ = {}
    for u, v in precedence_arcs(schedule):
        succ.setdefault(u, []).append(v)
    memo = {}

    def reach(u):
        if u not in memo:
            out = set()
            for v in succ.get(u, ()):
                out.add(v)
                out |= reach(v)
            memo[u] = out
        return memo[u]

    return {(op.stage, op.kind, op.microbatch): reach((op.stage, op.kind, op.microbatch))
            for _, op in schedule.ops()}


MUTATION_KINDS = ("move_gpu", "swap_precedence", "drop", "duplicate", "drop_R_tight",
                  "change_microbatch", "microbatch_out_of_range", "exceed_K", "split_on_fused")


@st.composite
def mutations(draw, kind: str) -> Mutation:
    """One mutation of a random valid schedule, of class ``kind`` (see :data:`MUTATION_KINDS`)."""
    if kind == "move_gpu":
        inst_s = instances(max_pairs=16).filter(lambda i: i.P >= 2)
    elif kind == "drop_R_tight":
        inst_s = instances(max_pairs=16, max_K=2).filter(lambda i: i.K is not None)
    elif kind in ("change_microbatch",):
        inst_s = instances(max_pairs=16).filter(lambda i: i.m >= 2)
    elif kind == "split_on_fused":
        inst_s = instances(max_pairs=16, split=True)
    else:
        inst_s = instances(max_pairs=16, explicit=True)
    sched = draw(valid_schedules(inst_s))
    inst = sched.instance
    orders = [list(seq) for seq in sched.orders]
    P = inst.P

    def pick_op(kinds="FBIWR"):
        cands = [(p, i) for p in range(P) for i, op in enumerate(orders[p]) if op.kind in kinds]
        return draw(st.sampled_from(cands))

    def done(expected, allowed=(), what="", new_inst=None):
        mutated = replace_orders(sched, orders, new_inst)
        return Mutation(mutated, sched, expected, frozenset({expected, *allowed}), what)

    if kind == "move_gpu":
        p, i = pick_op()
        op = orders[p].pop(i)
        q = draw(st.sampled_from([x for x in range(P) if x != p]))
        orders[q].insert(draw(st.integers(0, len(orders[q]))), op)
        return done("placement", {"recompute"}, f"moved {op} from GPU {p} to GPU {q}")
    if kind == "swap_precedence":
        reach = _reachable(sched)
        cands = []
        for p in range(P):
            seq = orders[p]
            for a in range(len(seq)):
                ka = (seq[a].stage, seq[a].kind, seq[a].microbatch)
                for z in range(a + 1, len(seq)):
                    kz = (seq[z].stage, seq[z].kind, seq[z].microbatch)
                    if kz in reach[ka]:
                        trial = list(seq)
                        trial[a], trial[z] = trial[z], trial[a]
                        if _r_in_place(trial):
                            cands.append((p, a, z))
        from hypothesis import assume
        assume(cands)
        p, a, z = draw(st.sampled_from(cands))
        what = f"swapped {orders[p][a]} and {orders[p][z]} on GPU {p}"
        orders[p][a], orders[p][z] = orders[p][z], orders[p][a]
        return done("deadlock", {"memory"}, what)
    if kind == "drop":
        p, i = pick_op("FBIW")
        op = orders[p].pop(i)
        return done("missing" if op.kind in "FB" else "backward", (), f"dropped {op}")
    if kind == "duplicate":
        p, i = pick_op()
        op = orders[p][i]
        orders[p].insert(draw(st.integers(0, len(orders[p]))), op)
        return done("duplicate", {"recompute"}, f"listed {op} twice")
    if kind == "drop_R_tight":
        from reference_sim import _order_peak
        cands = []
        for p in range(P):
            for i, op in enumerate(orders[p]):
                if op.kind == "R":
                    trial = [list(x) for x in orders]
                    del trial[p][i]
                    if max(_order_peak(replace_orders(sched, trial))) > inst.K:
                        cands.append((p, i))
        from hypothesis import assume
        assume(cands)
        p, i = draw(st.sampled_from(cands))
        op = orders[p].pop(i)
        return done("memory", {"deadlock"}, f"dropped {op} (K={inst.K})")
    if kind == "change_microbatch":
        p, i = pick_op("FBIW")
        op = orders[p][i]
        j2 = draw(st.sampled_from([j for j in range(inst.m) if j != op.microbatch]))
        new = Op(op.stage, op.kind, j2)
        orders[p][i] = new
        present = {x for seq in sched.orders for x in seq}
        expected = "duplicate" if new in present else "backward"
        return done(expected, {"duplicate", "missing", "backward", "recompute"},
                    f"changed {op} to {new}")
    if kind == "microbatch_out_of_range":
        p, i = pick_op()
        op = orders[p][i]
        new = Op(op.stage, op.kind, inst.m + draw(st.integers(0, 3)))
        orders[p][i] = new
        return done("range", {"missing", "backward", "recompute"}, f"changed {op} to {new}")
    if kind == "exceed_K":
        peak = max(simulate(sched).peak_memory)
        from hypothesis import assume
        assume(peak >= 2)
        K = draw(st.integers(1, peak - 1))
        return done("memory", (), f"K lowered to {K} below peak {peak}", inst.with_(K=K))
    if kind == "split_on_fused":
        from hypothesis import assume
        assume(any(op.kind in "IW" for _, op in sched.ops()))
        fused = inst.with_(b_I=None, b_W=None, b=inst.b)
        return done("durations", (), "I/W ops on an instance without b_I, b_W", fused)
    raise ValueError(f"unknown mutation kind {kind!r}")


def hill_climb(schedule: Schedule, rng, steps: int = 200) -> Schedule:
    """Local search on the orders: random moves of one op inside its GPU's order and removals
    of ``R`` ops, keeping a move when the result is valid and not longer. Brings random or
    greedy schedules close to optimal on small instances (to probe the bound from close by)."""
    best, best_T = schedule, simulate(schedule).makespan
    for _ in range(steps):
        orders = [list(seq) for seq in best.orders]
        p = rng.randrange(len(orders))
        seq = orders[p]
        if len(seq) < 2:
            continue
        i = rng.randrange(len(seq))
        if seq[i].kind == "R" and rng.random() < 0.3:
            del seq[i]
        else:
            op = seq.pop(i)
            k = max(0, min(len(seq), i + rng.choice([-3, -2, -1, 1, 2, 3])))
            seq.insert(k, op)
        cand = Schedule(best.instance, tuple(tuple(x) for x in orders), source="hill-climb")
        res = simulate(cand)
        if res.valid and res.makespan <= best_T:
            best, best_T = cand, res.makespan
    return best


# ------------------------------------------------------------------ overlapped F&B ops
def with_overlap_durations(inst: Instance, ratio: Fraction) -> Instance:
    """``inst`` with ``d_FB`` (and ``d_FI`` when split) ``= ratio * (f_s + min b_s')`` per
    forward stage ``s`` (``min`` over the backward stages of its GPU): the largest the model
    allows, scaled by ``ratio`` in ``(0, 1]``."""
    S = inst.S
    kw = {}
    kinds = [("d_FB", "B")] + ([("d_FI", "I")] if inst.split else [])
    for key, kind in kinds:
        kw[key] = [ratio * (inst.duration_of("F", s)
                            + min(inst.duration_of(kind, t) for t in range(S)
                                  if inst.gpu(t) == inst.gpu(s))) for s in range(S)]
    return inst.with_(**kw)


def join_overlaps(schedule: Schedule, picks) -> Schedule:
    """The orders of ``schedule`` with some adjacent forward/backward pairs of a GPU joined into
    ``F&B`` ops (the backward part listed first): ``picks(n)`` chooses among ``n`` options
    (0 = leave the pair apart). A join that would deadlock is not made."""
    from schedules import simulate

    orders = [list(seq) for seq in schedule.orders]
    starts: list[list[int]] = [[] for _ in orders]
    for p, seq in enumerate(orders):
        i = 0
        while i < len(seq) - 1:
            a, b = seq[i], seq[i + 1]
            kinds = {a.kind, b.kind}
            if kinds in ({"F", "B"}, {"F", "I"}) and (a.stage, a.microbatch) != (b.stage, b.microbatch) \
                    and picks(2):
                trial = list(seq)
                if a.kind == "F":
                    trial[i], trial[i + 1] = b, a
                cand = [list(x) for x in starts]
                cand[p].append(i)
                sched = Schedule(schedule.instance, tuple(tuple(s) if q != p else tuple(trial)
                                                         for q, s in enumerate(orders)),
                                 overlaps=tuple(tuple(x) for x in cand))
                if simulate(sched).valid:
                    orders[p], starts = trial, cand
                    seq = trial
                    i += 2
                    continue
            i += 1
    return Schedule(schedule.instance, tuple(tuple(s) for s in orders), "overlapped",
                    overlaps=tuple(tuple(x) for x in starts))


@st.composite
def overlapped_schedules(draw, instance_strategy=None, greedy: bool = False) -> Schedule:
    """A random valid schedule on an instance with overlapped durations (``d_FB``, ``d_FI``
    at a drawn fraction of the parts' sum), with some adjacent forward/backward pairs joined
    into ``F&B`` ops. ``greedy``: start from a time-aware greedy schedule (near-optimal, to
    probe the bound from close by)."""
    strategy = instance_strategy if instance_strategy is not None else instances(max_pairs=16,
                                                                                 c=True)
    sched = draw(greedy_schedules(strategy) if greedy else valid_schedules(strategy))
    ratio = draw(st.sampled_from([Fraction(1, 2), Fraction(2, 3), Fraction(3, 4), Fraction(1)]))
    inst = with_overlap_durations(sched.instance, ratio)
    base = sched.with_instance(inst)
    return join_overlaps(base, lambda n: draw(st.integers(0, n - 1)))
