"""Searched microbatch ranks: free-order list schedules, the rank found by a hill climb.

The starting schedules of :mod:`pipebounds.synthesis.start` all run each stage's microbatches
in increasing order. :func:`ranked_candidates` searches the schedules of
:func:`schedules.generators.ranked_list.ranked_list_schedule` instead, in which each GPU runs
its ready op of the best-ranked microbatch (the pipeline's entry order staying ``0, 1, ..``),
so that some microbatches go through at once and keep their activations while others, forwarded
early, wait and are recomputed (docs/synthesis.md, *Stop 44*).

The search state is the microbatches in rank order (a permutation) and a cap profile: GPU ``p``'s
cap ``c_0 + (c_1 - c_0) p / (P - 1)`` rounded to a multiple of ``v``, each at least ``v``;
caps above ``K`` leave the excess to :func:`schedules.remat.fit_memory` (no polish: fast),
and a cap below ``K`` on the later GPUs holds fewer microbatches in flight there. A schedule is
scored by its simulated makespan under the limit. The climb starts from the identity rank
under a grid of cap profiles, then repeats a random move (a microbatch moved a few places in
the rank order, two adjacent ones swapped, or one end of the cap profile moved by ``v``),
keeping it when the makespan does not rise (plateaus are crossed), until the deadline or the
target (a lower bound); after :data:`PATIENCE` moves without a shorter schedule it starts again
from the best rank found, perturbed by a few random moves.

Measured (library calls, ``f = b = 1``, one thread; docs/synthesis.md, *Stop 44*): ``P = 16,
m = 64, K = 8`` 176 in 150 s (173 with ``fit_memory``'s polish) where every earlier method had
178 at best (CP-SAT, 600 s) and the bound is 158. The synthesis runs it at ``v = 1`` on
instances past its exact phase (at ``v = 2`` it was no better than the in-order rules).
"""

from __future__ import annotations

import time
from random import Random
from typing import Callable, Optional, Sequence

from schedules.instance import Instance
from .start import Candidate, _fitted

MOVES = (-6, -4, -3, -2, -1, 1, 2, 3, 4, 6)
"""How far a moved microbatch goes in the rank order (positions)."""

PATIENCE = 400
"""Moves without a shorter schedule before the climb restarts from a perturbed best."""

KEEP = 4
"""Distinct best schedules returned (the polish refits the best of them)."""


def cap_profile(P: int, v: int, c0: int, c1: int) -> list[int]:
    """GPU ``p``'s cap: ``c0`` on GPU 0 to ``c1`` on GPU ``P - 1``, linear, rounded to a
    multiple of ``v``, at least ``v``."""
    out = []
    for p in range(P):
        x = c0 + (c1 - c0) * p / max(1, P - 1)
        out.append(max(v, v * round(x / v)))
    return out


def _grid(K: int, v: int, top: int, P: int) -> list[tuple[int, int]]:
    """Cap profiles ``(c0, c1)`` tried from the identity rank: ``c0`` from ``K`` to about
    ``max(top, 2K)``, ``c1`` from ``v`` to ``K``, a few of each."""
    hi = max(top, 2 * K, K + P)
    c0s = sorted({K + round((hi - K) * i / 5) for i in range(6)})
    c1s = sorted({max(v, round(K * i / 4)) for i in range(1, 5)} | {K})
    return [(a, b) for a in c0s for b in c1s]


def _score(inst: Instance, free: Instance, K: int, rank: Sequence[int],
           cc: tuple[int, int]) -> Optional[Candidate]:
    """The free-order list schedule of ``rank`` under the cap profile ``cc``, fitted to ``K``
    (None when the scheduler refuses the caps)."""
    from schedules.generators.common import GeneratorError
    from schedules.generators.ranked_list import ranked_list_schedule

    caps = cap_profile(inst.P, inst.v, *cc)
    try:
        sched = ranked_list_schedule(free, rank, caps, split=inst.split,
                                     source=f"ranked-list[caps={caps[0]}..{caps[-1]}]")
    except GeneratorError:
        return None
    return _fitted(inst, sched, K, max(caps) > K)


def identity_best(inst: Instance, K: int, top: Optional[int] = None,
                  deadline: float = float("inf"), stop: Callable[[], bool] = lambda: False,
                  now: Callable[[], float] = time.monotonic
                  ) -> Optional[tuple[Candidate, tuple[int, int]]]:
    """The best fitted schedule of the identity rank (microbatches in index order) over the
    cap profiles of :func:`_grid`, with its profile ``(c0, c1)``; None when none is valid.
    Stops early at ``deadline`` on the clock ``now`` or when ``stop()``."""
    free = inst.with_(K=None, memory=None)
    ident = list(range(inst.m))
    best: Optional[tuple[Candidate, tuple[int, int]]] = None
    for cc in _grid(K, inst.v, top if top is not None else K, inst.P):
        if now() >= deadline or stop():
            break
        got = _score(inst, free, K, ident, cc)
        if got is not None and (best is None or got.makespan < best[0].makespan):
            best = (got, cc)
    return best


def _moved(order: list[int], rng: Random) -> list[int]:
    """``order`` with one microbatch moved a few places (:data:`MOVES`), as a new list."""
    out = list(order)
    i = rng.randrange(len(out))
    out.insert(min(len(out) - 1, max(0, i + rng.choice(MOVES))), out.pop(i))
    return out


def ranked_candidates(inst: Instance, K: int, deadline: float, seed: int = 0,
                      stop: Callable[[], bool] = lambda: False,
                      target=None, top: Optional[int] = None,
                      now: Callable[[], float] = time.monotonic) -> list[Candidate]:
    """The best free-order list schedules of ``inst`` under searched ranks and cap profiles,
    fitted to ``K`` (module docstring), until ``deadline`` on the clock ``now``.

    Parameters
    ----------
    inst : Instance
        The instance with its limit ``K`` (activations; a byte budget is not searched here).
    K : int
        The memory limit the fitted schedules keep.
    deadline : float
        When to stop, on the clock ``now``.
    seed : int
        The moves' random seed.
    stop : callable
        Polled between schedules; True stops the search (a signal).
    target : Fraction, optional
        A lower bound: the search stops at a schedule that meets it.
    top : int, optional
        The unconstrained peak (:func:`pipebounds.synthesis.start.free_peak`): the largest cap
        of the starting grid.

    Returns
    -------
    list of Candidate
        At most :data:`KEEP`, shortest first, each valid under ``K`` (``base``: the schedule
        before the fit, for the polish).
    """
    m, v = inst.m, inst.v
    if m < 2:
        return []
    rng = Random(seed)
    free = inst.with_(K=None, memory=None)
    found: dict[tuple, Candidate] = {}

    def keep(c: Candidate) -> None:
        k = tuple(tuple(seq) for seq in c.schedule.orders)
        if k not in found:
            found[k] = c

    def met(ms) -> bool:
        return target is not None and ms <= target

    start = identity_best(inst, K, top, deadline, stop, now)
    if start is None:
        return []
    keep(start[0])
    # the state: the microbatches in rank order (best first) and the cap profile
    best: tuple = (start[0].makespan, list(range(m)), start[1])
    record = best
    since = 0
    while now() < deadline and not stop() and not met(best[0]):
        _, order, (c0, c1) = best
        if since >= PATIENCE:  # restart from the record, perturbed
            _, order, (c0, c1) = record
            for _ in range(rng.randint(2, 6)):
                order = _moved(order, rng)
            since = 0
        else:
            r = rng.random()
            if r < 0.7:
                order = _moved(order, rng)
            elif r < 0.85:
                i = rng.randrange(m - 1)
                order = order[:i] + [order[i + 1], order[i]] + order[i + 2:]
            elif r < 0.93:
                c0 = max(v, c0 + v * rng.choice((-1, 1)))
            else:
                c1 = max(v, c1 + v * rng.choice((-1, 1)))
        rank = [0] * m
        for pos, j in enumerate(order):
            rank[j] = pos
        got = _score(inst, free, K, rank, (c0, c1))
        since += 1
        if got is None or got.makespan > best[0]:
            continue
        best = (got.makespan, order, (c0, c1))
        if got.makespan < record[0]:
            record, since = best, 0
            keep(got)
    return sorted(found.values(), key=lambda c: c.makespan)[:KEEP]
