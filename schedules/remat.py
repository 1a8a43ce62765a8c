"""Rematerialization: fit any valid schedule to a memory limit ``K`` by inserting ``R`` ops.

MODEL.md: a rematerialized activation ``(j,s)`` is stored by its recompute ``R(j,s)`` (its
forward stores nothing) and live from the start of ``R`` to the end of ``B(j,s)`` (or
``W(j,s)``). Peak memory is a property of the per-GPU orders, so fitting is done GPU by GPU
on the orders alone:

**Rule (Belady).** Walk GPU ``p``'s order keeping the set of live activations.

* At a forward ``F(j,s)``: if fewer than ``K`` are live, it stores. Otherwise one activation
  is *checkpointed*: among the live ones stored by their forward whose backward has not started,
  and ``(j,s)`` itself, the one whose backward comes latest in the order (Belady's rule: the
  furthest next use) is marked rematerialized; it stops counting (its forward now stores
  nothing), and ``(j,s)`` stores unless it was the one chosen.
* At the backward (``B`` or ``I``) of a rematerialized ``(j,s)``: ``R(j,s)`` is inserted right
  before it and stores. If ``K`` are already live, room is made first by checkpointing (as above)
  or, when every live activation is past its ``I`` (split form, waiting for ``W``), by moving
  the pending ``W`` that comes first in the order up to this point.

**Soundness.** ``R(j,s)`` comes after ``F(j,s)`` (which precedes the backward on the same GPU)
and right before its backward; moved ``W`` ops stay after their ``I``: every new precedence
points backwards in the same GPU's order, so no deadlock is created. Each storing op finds
fewer than ``K`` live activations (room can always be made: an ``F`` can checkpoint itself, and
for an ``R`` the live set holds only activations stored by ``F`` — which can be checkpointed — or
waiting for their ``W`` — which can be moved), so the peak is at most ``K`` for every ``K >= 1``.
The result is checked with :func:`schedules.simulate.simulate` before it is returned.

Existing ``R`` ops are dropped first (the schedule is refitted from its plain form).
The order of the other ops is unchanged except for moved ``W`` ops, so the makespan grows by at
most the recomputes on the critical path; :func:`fit_memory` is a heuristic, not an optimum.

**Polish** (``polish=True``, the default). A recompute placed right before its backward may
delay it while the GPU idled a little earlier. Each such ``R`` (its backward starts exactly when
it ends, and the GPU idles within the ``window`` ops before it) is tried up to ``window``
positions earlier in its GPU's order (never before its ``F``, never where the peak would exceed
``K``) and moved to the best position by (makespan, sum of op end times), if strictly better
than the current schedule. Moving an ``R`` earlier on its own GPU adds no cross-GPU precedence,
so it cannot deadlock either. At most ``budget`` trial simulations are run.

>>> from schedules import Instance, simulate
>>> from schedules.generators import generate
>>> base = generate("1f1b", Instance(P=4, m=8))
>>> fitted = fit_memory(base, 1)
>>> r = simulate(fitted)
>>> r.valid, r.peak_memory, fitted.orders[3][:4]
(True, [1, 1, 1, 1], (Op(stage=3, kind='F', microbatch=0), Op(stage=3, kind='B', microbatch=0), Op(stage=3, kind='F', microbatch=1), Op(stage=3, kind='B', microbatch=1)))
>>> [str(op) for op in fitted.orders[0][:8]]   # F1 F2 F3 checkpointed (latest backwards)
['0F0', '0F1', '0F2', '0F3', '0B0', '0F4', '0R1', '0B1']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .instance import require
from .ops import Op
from .progress import Progress, progress_for
from .schedule import Schedule
from .errors import InputError
from .instance import require_one_direction

if TYPE_CHECKING:
    from .simulate import SimulationResult


class RematError(InputError):
    """``fit_memory`` got a bad ``K`` or a schedule it cannot fit (an invalid base schedule)."""


def _fit_order(order: Sequence[Op], K: int) -> list[Op]:
    order = [op for op in order if op.kind != "R"]
    grad_pos: dict[tuple[int, int], int] = {}
    w_pos: dict[tuple[int, int], int] = {}
    for i, op in enumerate(order):
        pair = (op.stage, op.microbatch)
        if op.kind in ("B", "I"):
            grad_pos[pair] = i
        elif op.kind == "W":
            w_pos[pair] = i
    far = len(order) + 1
    live: dict[tuple[int, int], str] = {}  # pair -> "F" (stored by F), "R", "W" (waits for W)
    remat: set[tuple[int, int]] = set()
    moved_w: set[tuple[int, int]] = set()
    out: list[Op] = []

    def checkpoint_one(extra=None) -> bool:
        """Checkpoint the F-stored live activation (or ``extra``) with the latest backward."""
        cands = [x for x, how in live.items() if how == "F"]
        if extra is not None:
            cands.append(extra)
        if not cands:
            return False
        victim = max(cands, key=lambda x: grad_pos.get(x, far))
        remat.add(victim)
        live.pop(victim, None)
        return True

    for op in order:
        pair = (op.stage, op.microbatch)
        if op.kind == "F":
            out.append(op)
            if len(live) < K:
                live[pair] = "F"
            else:
                checkpoint_one(extra=pair)
                if pair not in remat:
                    live[pair] = "F"
        elif op.kind in ("B", "I"):
            if pair in remat:
                while len(live) >= K:
                    if checkpoint_one():
                        continue
                    waiting = [x for x, how in live.items() if how == "W"]
                    if not waiting:
                        raise RematError(f"cannot make room for R{pair}: K={K}")
                    x = min(waiting, key=lambda y: w_pos.get(y, far))
                    out.append(Op(x[0], "W", x[1]))
                    moved_w.add(x)
                    del live[x]
                out.append(Op(op.stage, "R", op.microbatch))
                live[pair] = "R"
            out.append(op)
            if op.kind == "B":
                live.pop(pair, None)
            else:
                live[pair] = "W"
        elif op.kind == "W":
            if pair in moved_w:
                continue
            out.append(op)
            live.pop(pair, None)
    return out


def _peak(seq: Sequence[Op]) -> int:
    recomputed = {(op.stage, op.microbatch) for op in seq if op.kind == "R"}
    split = {(op.stage, op.microbatch) for op in seq if op.kind == "W"}
    live = peak = 0
    for op in seq:
        pair = (op.stage, op.microbatch)
        if op.kind == "R" or (op.kind == "F" and pair not in recomputed):
            live += 1
            peak = max(peak, live)
        if op.kind == "W" or (op.kind == "B" and pair not in split):
            live -= 1
    return peak


def _score(schedule: Schedule):
    """(makespan, sum of all op end times): lower is better; None if invalid."""
    from .simulate import simulate

    res = simulate(schedule)
    if res.makespan is None:
        return None, res
    return (res.makespan, int(res.end_units.sum())), res


def _polish(schedule: Schedule, K: int, window: int, budget: int, bar=None,
            deadline=None) -> Schedule:
    orders = [list(seq) for seq in schedule.orders]
    inst = schedule.instance
    best, res = _score(schedule)
    sims = 0

    def out_of_time() -> bool:
        return deadline is not None and deadline.expired()

    for p in range(len(orders)):
        if sims >= budget or out_of_time():
            break
        recs = [op for op in orders[p] if op.kind == "R"]
        for rop in recs:
            if sims >= budget or out_of_time():
                break
            seq = orders[p]
            i = seq.index(rop)
            lo = int(res.offsets[p])
            starts = res.start_units[lo:lo + len(seq)]
            ends = res.end_units[lo:lo + len(seq)]
            # the backward right after R waits for R (not only for its gradient input)?
            if i + 1 >= len(seq) or starts[i + 1] != ends[i]:
                continue
            # idle time on this GPU within the window before R: somewhere to move it to
            first = max(0, i - window)
            idle = any(starts[k] > (ends[k - 1] if k > 0 else 0) for k in range(first, i + 1))
            if not idle:
                continue
            f_pos = seq.index(Op(rop.stage, "F", rop.microbatch))
            best_seq, best_res = None, None
            for k in range(i - 1, max(f_pos, i - window - 1), -1):
                if sims >= budget or out_of_time():
                    break
                cand = seq[:k] + [rop] + seq[k:i] + seq[i + 1:]
                if _peak(cand) > K:
                    break
                trial = orders[:p] + [cand] + orders[p + 1:]
                sims += 1
                if bar is not None:
                    bar.update()
                score, r = _score(Schedule(inst, tuple(map(tuple, trial))))
                if score is not None and score < best:
                    best, best_seq, best_res = score, cand, r
            if best_seq is not None:
                orders[p] = best_seq
                res = best_res
    return Schedule(inst, tuple(map(tuple, orders)), schedule.source)


def fit_memory(schedule: Schedule, K: int, polish: bool = True, window: int = 6,
               budget: int = 800, progress: Progress = None, deadline=None) -> Schedule:
    """``schedule`` with ``R`` ops inserted (and some ``W`` moved earlier) so that every GPU holds
    at most ``K`` activations; the result carries ``K`` in its instance. See the module docstring
    and :func:`fit_memory_simulated` (the same, with the result's simulation)."""
    return fit_memory_simulated(schedule, K, polish, window, budget, progress, deadline)[0]


def fit_memory_simulated(schedule: Schedule, K: int, polish: bool = True, window: int = 6,
                         budget: int = 800, progress: Progress = None, deadline=None
                         ) -> tuple[Schedule, "SimulationResult"]:
    """``schedule`` with ``R`` ops inserted (and some ``W`` moved earlier) so that every GPU holds
    at most ``K`` activations, and the simulation of the result that proved it valid (a caller
    that scores the fit need not simulate it again); the result carries ``K`` in its instance.
    See the module docstring.

    ``polish`` moves recomputes earlier when that lowers the makespan (at most ``window``
    positions each, at most ``budget`` trial simulations in all). ``progress``: None (silent),
    True (a tqdm bar on stderr when it is a terminal) or ``callback(done, total)``, counting the
    GPUs fitted and then the polish's trial simulations (:mod:`schedules.progress`).
    ``deadline`` (:class:`schedules.deadline.Deadline`): the polish stops when it expires (the
    schedule is valid at every step, so it is returned as far as it got).
    """
    require_one_direction(schedule, "fit_memory (rematerialization to K)")
    require(schedule, Schedule, "schedule", "fit_memory")
    if isinstance(K, bool) or not isinstance(K, int) or K < 1:
        raise RematError(f"fit_memory: K must be a whole number >= 1, got {K!r:.60}")
    from .simulate import simulate

    inst = schedule.instance.with_(K=K)
    bar = progress_for(progress, inst.P + (budget if polish else 0), "fit_memory")
    orders = []
    for seq in schedule.orders:
        orders.append(tuple(_fit_order(seq, K)))
        bar.update()
    orders = tuple(orders)
    if orders == tuple(tuple(seq) for seq in schedule.orders):
        source = schedule.source  # K does not bind: nothing recomputed
    else:
        source = schedule.source + f"+remat(K={K})" if schedule.source else f"remat(K={K})"
    fitted = Schedule(inst, orders, source)
    result = simulate(fitted)
    if result.valid and polish and not (deadline is not None and deadline.expired()) \
            and any(op.kind == "R" for _, op in fitted.ops()):
        fitted = _polish(fitted, K, window, budget, bar, deadline)
        result = simulate(fitted)
    bar.close()
    if not result.valid:
        base = simulate(schedule.with_instance(schedule.instance.with_(K=None)))
        if not base.valid:
            raise RematError("the base schedule is invalid: " + "; ".join(base.errors[:3]))
        raise RematError("internal error, fitted schedule invalid: " + "; ".join(result.errors[:3]))
    return fitted, result
