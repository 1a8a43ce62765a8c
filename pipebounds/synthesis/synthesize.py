"""``synthesize(inst, K | budget_bytes, time_limit)``: an anytime schedule with a certified gap
(docs/synthesis.md).

1. **Start.** List schedules with searched priority rules and caps, every family
   optimally rematerialized (``best``'s machinery), and rematerializing list schedules
   (:mod:`schedules.generators.remat_list`: recomputes decided while scheduling, every GPU at
   its limit ``K``), all validated; the best is the incumbent,
   so the result is never worse than the best family's.
2. **Exact phase** (small instances: at most :data:`EXACT_OPS` ops; with ``workers >= 2``
   up to :data:`EXACT_OPS_THREADS`): the full CP-SAT model hinted with the incumbent, for
   :data:`EXACT_SHARE` of the remaining time on ``workers`` threads; it may prove the optimum.
3. **Large neighbourhood search** (:mod:`pipebounds.synthesis.neighbourhood`): CP-SAT
   re-optimizes a time window of all GPUs, or a wider window of a few GPUs, of the incumbent,
   warm-started from it; a strictly better simulated schedule becomes the incumbent. Windows
   are drawn at random (``seed``) with weights: the idle time inside the window, scaled up near
   the start and the end when the binding term of the bound is a fill/drain or chain term
   (the bubbles it counts are there) and in the middle when it is a memory term (the steady
   state is where memory limits the microbatches in flight). A window explored to optimality
   without improvement is not drawn again until the incumbent changes; when every window has
   failed, windows grow.
4. **Stop** at the time limit, when the objective meets the lower bound (then ``optimal``), or
   when the channel says so (a signal): the best schedule so far is returned.

Every returned schedule is simulated on the instance with its limit and must be valid.
Features a method does not model are skipped by that method only (``methods`` says so): the
exact phase and the neighbourhoods need a schedule without backward recomputes.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from fractions import Fraction
from typing import Optional

from schedules.compiled import has_backward_recompute
from schedules.errors import InputError
from schedules.instance import Instance
from schedules.simulate import simulate
from pipebounds.search.channel import SILENT, Channel
from .neighbourhood import Base, Window
from .ranks import ranked_candidates
from .result import SynthesisResult
from .start import (PATIENCE, POLISH_TOP, Candidate, block_candidates, check,
                    family_candidates, free_peak, grouped_candidates, list_candidates,
                    polish_candidates, ranked_families, remat_head, remat_list_candidates,
                    searched_candidates)
from schedules.instance import require_one_direction


OBJECTIVES = ("makespan", "span")
CLOCKS = {"wall": time.monotonic, "cpu": time.process_time}
"""The clocks a time limit can be given on (``synthesize(clock=...)``)."""
EXACT_OPS = 400
"""Instances with at most this many ops (``F``, ``B`` or ``I``, ``W``; recomputes not counted:
the model has an optional ``R`` per pair whatever the incumbent) get the exact phase (the full
CP-SAT model)."""
EXACT_OPS_THREADS = 2000
"""With ``workers >= 2`` the exact phase runs on instances of up to this many ops too, after
the searched rules of a large instance (their share :data:`SEARCH_LARGE` unchanged): CP-SAT's
second thread is its own neighbourhood search on the full model, which moved incumbents the
neighbourhoods of :mod:`.neighbourhood` had left (hidden-like set, 60 s wall, two workers:
``P = 8, m = 32, v = 2`` split ``K = 8``, 1,536 ops, 223 to 222; ``P = 6, m = 16, v = 2`` split,
576 ops, 274 to 273; the other four open instances of 512-768 ops unchanged; the searched
rules with the small instances' share and patience instead: 225, worse). One worker keeps
the neighbourhoods only (the atlas sweep's budget)."""
EXACT_SHARE = 0.8
"""Share of the time left after the start that the exact phase gets (measured: on instances of
128-400 ops the full model hinted with the incumbent improves it more per second than the
neighbourhoods; the neighbourhoods get the rest)."""
REMAT_LIST_SHARE = 0.1
"""Share of the limit the rematerializing list scheduler gets after the families, out of the
searched rules' time (:func:`~.start.remat_list_candidates`; its first parameter set runs in
any case: about 0.3-0.5 CPU s at 50k ops). Measured before on the large-P benchmark: taken
before the families, it cost the families phase its last family at ``P = 32``."""
SEARCH_SMALL, SEARCH_LARGE = 0.45, 0.75
"""The searched list rules run until this share of the limit: shorter when the exact phase
follows (small instances), longer on large ones, where the start is most of the quality
(measured: the neighbourhoods move a 600-op schedule by under 2 % in 40 CPU seconds, the
searched rules by 3-4 % in 6)."""
RANKED_SHARE = 0.5
"""At ``v = 1`` the searched rules give this share of their time to the searched microbatch
ranks (:func:`~.ranks.ranked_candidates`, free-order list schedules), which run after them
(measured, *Stop 44*: ``P = 8, m = 32, K = 4``, ``f = b = 1``: 86 in 30 s where the searched
rules and CP-SAT had 89; at ``v = 2`` no better than the rules on the pairs tried, so not
run there). Nor on the small instances that the exact phase follows: CP-SAT finds there what
the ranks find (the ``v = 1`` instances of the hidden-like set: the same results), and with
the ranks taking part of its time, 3 of the first 46 ``P = 4, v = 1`` pairs of the atlas
sweep were no longer proven optimal."""
SMALL_PATIENCE = 100
"""Restarts without improvement after which the searched rules stop when the exact phase
follows (it proves tiny instances in a fraction of a second; :data:`~.start.PATIENCE` on large
ones, where a new climb starts instead)."""
BUILD_SECONDS_PER_OP = 4e-4
"""Measured wall time to build the neighbourhoods' CP-SAT model per op (0.65 s for 1,536 ops
on the loaded 2-core machine, 0.29 s of CPU): no model is built when less time is left, so
the time limit holds."""
FREE_OPS = 50
"""Free ops in a first neighbourhood (windows grow when every window has failed)."""
WALL_PER_CPU = 20.0
"""With a CPU budget (``clock="cpu"``), a CP-SAT solve (the exact phase, a neighbourhood) gets
its CPU seconds times this as its wall limit, and a watchdog thread stops it when its CPU
seconds are spent (:func:`schedules.stopping.watchdog`): one run per exact phase however
loaded the machine (measured before: with the CPU seconds left as the wall limit, a load of 9
on 2 cores ended each run after a tenth of its share, and 24-27 restarts, each rebuilding and
presolving the model, spent the exact phase of a 200-300-op instance)."""


def _wall(clock: str, seconds: float) -> float:
    """A sub-solver's wall limit for ``seconds`` on ``clock`` (:data:`WALL_PER_CPU`)."""
    return seconds * WALL_PER_CPU if clock == "cpu" else seconds


def _past(clock: str, now, until: float):
    """The predicate that stops a sub-solver at ``until`` on a CPU clock (None on the wall
    clock: the solver's own limit is the deadline)."""
    return (lambda: now() >= until) if clock == "cpu" else None


class SynthesisError(InputError):
    """Bad arguments to :func:`synthesize` (the message names the problem)."""


def _limited(inst: Instance, K, budget_bytes) -> Instance:
    """``inst`` with the memory limit to synthesize for (``K`` or the byte budget)."""
    if K is not None and budget_bytes is not None:
        raise SynthesisError("give either K or budget_bytes, not both")
    if budget_bytes is not None:
        if inst.memory is None:
            raise SynthesisError("a byte budget needs a memory model (--memory)")
        from schedules.instance import to_fraction

        return inst.with_(K=None, memory=replace(inst.memory,
                                                  budget=to_fraction(budget_bytes, "budget")))
    if K is not None:
        return inst.with_(K=K)
    if inst.K is None and (inst.memory is None or inst.memory.budget is None):
        return inst  # unconstrained
    return inst


_has_backward_recompute = has_backward_recompute
"""An ``R`` listed after its pair's ``I`` (the one reader: :mod:`schedules.compiled`)."""


def _work_bound(inst: Instance) -> Fraction:
    """The largest per-GPU work ``m * sum_{s on p} (f_s + b_s)``: no GPU's span is shorter."""
    f, b = inst.durations_of("F"), inst.durations_of("B")
    return max(inst.m * sum(f[s] + b[s] for s in inst.stages_of(p)) for p in range(inst.P))


def _lower_bound(inst: Instance, objective: str, backward: bool = False
                 ) -> tuple[Fraction, tuple[str, ...], tuple]:
    """``(bound, binding theorem ids, binding term names)`` for the objective; ``backward``:
    the schedules may recompute between ``I`` and ``W``, so the full model's bound
    (``bounds.lower_bound(inst, backward_remat=True)``, docs/theory.md A.11)."""
    if objective == "span":
        return _work_bound(inst), ("T0",), ("work",)
    from bounds import lower_bound

    try:
        lb = lower_bound(inst, backward_remat=backward)
    except (ValueError, ArithmeticError, NotImplementedError):
        return _work_bound(inst), ("T0",), ("work",)
    ids = lb.term_ids()
    bind = [(i, n) for i, (n, x) in zip(ids, lb.terms) if x == lb.value]
    return Fraction(lb.value), tuple(dict.fromkeys(i for i, _ in bind)), tuple(n for _, n in bind)


def _region(names: tuple) -> str:
    """Where the binding terms say the lost time is: ``ends``, ``middle`` or ``anywhere``."""
    text = " ".join(names)
    if any(w in text for w in ("drain", "fill", "chain", "critical", "first")):
        return "ends"
    if "memory" in text or "slot" in text:
        return "middle"
    return "anywhere"


def _value(inst: Instance, sched, objective: str) -> Fraction:
    if objective == "span":
        from schedules.remat_optimal import min_span

        return min_span(sched.with_instance(inst))
    res = simulate(sched.with_instance(inst))
    return res.makespan


def synthesize(inst: Instance, K: Optional[int] = None, budget_bytes=None,
               time_limit: float = 60.0, objective: str = "makespan",
               channel: Channel = SILENT, seed: int = 0, backward: bool = False,
               families=None, per_family: Optional[float] = None,
               start=(), exact: bool = True, clock: str = "wall",
               workers: int = 1) -> SynthesisResult:
    """A valid schedule of ``inst`` under ``K`` (default ``inst.K``) or ``budget_bytes`` (with
    ``inst.memory``), improved until ``time_limit`` seconds (module docstring).

    ``objective``: ``makespan`` (MODEL.md's ``T``) or ``span`` (the largest per-GPU span, the
    zero-bubble paper's cost). ``channel`` (:class:`pipebounds.search.channel.Channel`) gets each
    improvement (units ``1/inst.unit``) and may stop the run (its best is returned). ``seed``
    drives the choice of windows. ``backward``: the families may also recompute between ``I`` and
    ``W`` (split form). ``families``: precomputed natural family schedules;
    ``per_family``: CP-SAT seconds per family for the optimal remat (default: a share of the
    limit). ``start``: ``(source, schedule)`` pairs to start from as well (e.g. ``best``'s
    entries; each kept only when valid under the limit), so the result is never worse.
    ``exact``: run the exact phase on small instances (off when an exact solver runs next,
    e.g. ``pipebounds solve``'s first incumbent). ``clock``: ``wall`` (``time_limit`` in wall
    seconds) or ``cpu`` (in CPU seconds of this process, ``time.process_time``: a fixed budget
    whatever the machine's load; every phase's deadline is on that clock, the sub-solvers get
    the seconds left as their wall limit, so they never use more CPU). ``seconds`` and
    ``history`` are on the same clock. ``workers``: CP-SAT threads of the exact phase (the
    neighbourhoods use one each; with two or more the exact phase also runs on instances of up
    to :data:`EXACT_OPS_THREADS` ops); on the CPU clock the threads share the budget.
    """
    require_one_direction(inst, "synthesize")
    if clock not in CLOCKS:
        raise SynthesisError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    now = CLOCKS[clock]
    t0 = now()
    if objective not in OBJECTIVES:
        raise SynthesisError(f"objective must be one of {', '.join(OBJECTIVES)}, got "
                             f"{objective!r}")
    if not time_limit > 0:
        raise SynthesisError(f"time_limit must be positive, got {time_limit!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise SynthesisError(f"workers must be a whole number >= 1, got {workers!r}")
    if backward and not inst.split:
        raise SynthesisError("backward recomputation needs the split form (b_I and b_W)")
    work = _limited(inst, K, budget_bytes)
    deadline = t0 + time_limit
    K_eff = work.K
    in_bytes = work.memory is not None and work.memory.budget is not None
    lb, binding, names = _lower_bound(work, objective, backward)
    channel.bound("theory", int(lb * work.unit) if objective == "makespan" else 0)
    methods: list[str] = []
    history: list[tuple[float, Fraction]] = []
    state = {"best": None}

    def offer(c: Candidate, value: Fraction, secondary: Optional[int] = None) -> bool:
        """Keep ``c`` when ``(value, secondary)`` is lexicographically smaller than the
        incumbent's (``secondary``: the sum of ASAP starts, for neighbourhoods that pull
        work earlier without shortening the objective yet)."""
        cur = state["best"]
        if cur is not None and value > cur[1]:
            return False
        if cur is not None and value == cur[1]:  # a tie: the start sums decide (computed
            if secondary is None:                # only then: a simulation at 50k ops is
                secondary = _start_sum(work, c.schedule)  # seconds)
            if state["secondary"] is None:
                state["secondary"] = _start_sum(work, cur[0].schedule)
            if secondary >= state["secondary"]:
                return False
        state["best"], state["secondary"] = (c, value), secondary
        if cur is None or value < cur[1]:
            history.append((round(now() - t0, 3), value))
            channel.incumbent("synthesize", int(value * work.unit),
                              [list(seq) for seq in c.schedule.orders])
        return True

    def done() -> bool:
        return channel.stop() or now() >= deadline or (
            state["best"] is not None and state["best"][1] <= lb)

    def offer_best(cs: list[Candidate]) -> None:
        """Offer the shortest of ``cs`` (the three shortest for the span, whose value the
        makespan does not order)."""
        for c in sorted(cs, key=lambda c: c.makespan)[:3 if objective == "span" else 1]:
            offer(c, c.makespan if objective == "makespan" else _value(work, c.schedule,
                                                                       objective))

    # 1. starting schedules ------------------------------------------------------------------
    byte_caps = _byte_caps(work) if in_bytes else None
    top = free_peak(work) if K_eff is not None and not in_bytes else None
    cands = list_candidates(work, K_eff, t0 + 0.15 * time_limit, byte_caps, channel.stop,
                            lb if objective == "makespan" else None, now=now, top=top)
    methods.append(f"list scheduler: {len(cands)} valid rule/cap combinations")
    if not in_bytes:
        grp = grouped_candidates(work, K_eff, t0 + 0.2 * time_limit, channel.stop, now=now)
        if grp:
            methods.append(f"interleaved schedules with rounds of g microbatches: {len(grp)} "
                           f"valid ({', '.join(c.source for c in grp)})")
        cands += grp
        blk = block_candidates(work, K_eff, t0 + 0.25 * time_limit, channel.stop, now=now)
        if blk:
            methods.append(f"building blocks: {len(blk)} valid "
                           f"({', '.join(c.source for c in blk)})")
        cands += blk
    for src, sched in start:
        ms = check(work, sched)
        if ms is not None:
            cands.append(Candidate(src, sched, ms))
    offer_best(cands)
    if not done():
        if families is None:
            families = ranked_families(work, t0 + 0.3 * time_limit, channel.stop, now)
        n = max(1, len(families))
        share = per_family if per_family is not None else max(0.3, min(5.0, 0.3 * time_limit / n))
        fam, notes, _ = family_candidates(work, None if in_bytes else K_eff,
                                          work.memory.budget if in_bytes else None, backward,
                                          share, t0 + 0.35 * time_limit, families,
                                          channel.stop, now=now)
        methods.append(f"families with optimal remat ({share:.2f} s each): {len(fam)} valid")
        methods.extend(notes)
        offer_best(fam)
        cands += fam
    if K_eff is not None and not in_bytes and not done():
        rl = remat_list_candidates(work, K_eff, now() + REMAT_LIST_SHARE * time_limit,
                                   channel.stop, lb if objective == "makespan" else None,
                                   now=now, skip=remat_head(work, K_eff))
        methods.append(f"rematerializing list scheduler: {len(rl)} valid parameter sets")
        offer_best(rl)
        cands += rl
    base_ops = work.S * work.m * (3 if work.split else 2)
    exact_ops = EXACT_OPS_THREADS if workers > 1 else EXACT_OPS
    run_exact = exact and objective == "makespan" and base_ops <= exact_ops
    small = run_exact and base_ops <= EXACT_OPS
    if not in_bytes and not done():
        until = t0 + (SEARCH_SMALL if small else SEARCH_LARGE) * time_limit
        t_search = now()
        ranked = K_eff is not None and work.v == 1 and work.m >= 2 and not small
        if ranked:
            until, until_ranked = t_search + RANKED_SHARE * (until - t_search), until
        found = searched_candidates(work, K_eff, until, seed, channel.stop,
                                    lb if objective == "makespan" else None,
                                    patience=SMALL_PATIENCE if small else PATIENCE,
                                    restart=not small, now=now, top=top)
        methods.append(f"searched list rules ({now() - t_search:.1f} s, at most "
                       f"{until - t_search:.1f}): best {found[0].makespan if found else None}")
        offer_best(found)
        cands += found
        if ranked and not done():
            t_ranked = now()
            rk = ranked_candidates(work, K_eff, until_ranked, seed, channel.stop,
                                   lb if objective == "makespan" else None, top=top, now=now)
            methods.append(f"searched microbatch ranks ({now() - t_ranked:.1f} s): best "
                           f"{rk[0].makespan if rk else None}")
            offer_best(rk)
            cands += rk
    if K_eff is not None and not in_bytes and not done():
        pol = polish_candidates(work, K_eff, cands,
                                min(deadline, now() + 0.05 * time_limit),
                                stop=channel.stop, now=now)
        methods.append(f"fit_memory's polish on the {POLISH_TOP} best fitted starts: "
                       f"{len(pol)} shorter")
        offer_best(pol)
        cands += pol
    if state["best"] is None:
        raise SynthesisError("no starting schedule fits the memory limit (every list rule and "
                             "family failed)")
    # the neighbourhoods need an incumbent without backward recomputes
    exact_lb = Fraction(0)
    lns_ok = not _has_backward_recompute(state["best"][0].schedule)
    if not lns_ok:
        methods.append("exact phase and neighbourhoods skipped: the incumbent recomputes "
                       "between I and W, which the CP-SAT model does not represent")
    # 2. exact phase -------------------------------------------------------------------------
    if lns_ok and run_exact and not done():
        from pipebounds.search.cpsat import solve_cpsat

        share = EXACT_SHARE * (deadline - now())
        until = now() + share
        runs, statuses = 0, []
        while not done() and until - now() > 0.1:  # restarts: the clock is CPU and the
            runs += 1                                 # wall limit ended the run early
            res = solve_cpsat(work, time_limit=_wall(clock, until - now()), workers=workers,
                              hint=state["best"][0].schedule, channel=_StopOnly(channel),
                              catch_sigint=False, lb_theory=lb,
                              seed=None if runs == 1 else seed + runs,
                              until=_past(clock, now, until))
            statuses.append(res.status)
            if res.schedule is not None:
                ms = check(work, res.schedule)
                if ms is not None:
                    offer(Candidate("cpsat", res.schedule, ms), ms)
            exact_lb = max(exact_lb, res.lower_bound)
            if res.status == "optimal" and state["best"][1] == res.makespan:
                lb = max(lb, res.lower_bound)
                binding = binding + ("solver",)
            if res.status in ("optimal", "infeasible"):
                break
        methods.append(f"exact phase (full CP-SAT, {share:.1f} s, {workers} worker"
                       f"{'s' if workers != 1 else ''}, {runs} run"
                       f"{'s' if runs != 1 else ''}): {', '.join(statuses)}")
    elif objective == "makespan" and lns_ok and exact and not run_exact:
        methods.append(f"exact phase skipped: {base_ops} ops > {exact_ops}"
                       + (f" (with {workers} workers)" if workers > 1 else ""))
    if exact_lb > lb and state["best"][1] >= exact_lb:
        lb, binding = exact_lb, binding + ("solver",)
    # 3. large neighbourhood search ----------------------------------------------------------
    improved = 0
    if lns_ok and not done():
        improved = _lns(work, state, offer, done, deadline, lb, objective, _region(names),
                        seed, methods, time_limit, channel, now, clock)
    cand, value = state["best"]
    final = simulate(cand.schedule.with_instance(work))
    assert final.valid, f"synthesized schedule invalid: {final.errors[:3]}"
    if objective == "makespan":
        assert final.makespan == value
    source = cand.source + (f"+lns({improved})" if improved else "")
    status = "optimal" if value == lb else "feasible"
    sched = cand.schedule.with_instance(work)
    return SynthesisResult(sched, final.makespan, lb, binding, status, source,
                           now() - t0, objective, value, tuple(methods),
                           tuple(history), bool(channel.stop()),
                           {"candidates": len(cands), "improving_neighbourhoods": improved})


def _start_sum(inst: Instance, sched) -> int:
    """The sum of the ASAP start times (units) of the ops other than ``R``."""
    res = simulate(sched.with_instance(inst))
    return sum(int(a * res.unit) for op, (a, _) in res.op_times().items() if op.kind != "R")


class _StopOnly(Channel):
    """Passes only the caller's stop request (the exact phase reports through the driver)."""

    def __init__(self, outer: Channel):
        self.outer = outer

    def stop(self) -> bool:
        return self.outer.stop()


def _byte_caps(inst: Instance) -> list[int]:
    """Activation caps for the list scheduler that fit a byte budget when every stored
    activation costs the most any stage's does (validated afterwards in any case)."""
    mem = inst.memory
    most = max(mem.stored(s) for s in range(inst.S)) or Fraction(1)
    trans = max(mem.transient_of(k) for k in "FBIWR")
    room = min(mem.budget - mem.static_of(p) - trans for p in range(inst.P))
    top = int(room // most) if room > 0 else 0
    caps = [c for c in range(top, inst.v - 1, -1)][:4]
    return caps if caps else []


def _lns(work, state, offer, done, deadline, lb, objective, region, seed, methods,
         time_limit, channel, now=time.monotonic, clock: str = "wall") -> int:
    """The neighbourhood loop; returns how many neighbourhoods improved the incumbent."""
    rng = random.Random(seed)
    improved = tried = accepted = 0
    statuses: dict = {}
    size = FREE_OPS
    base = None
    failed: set = set()
    per = max(0.5, min(2.0, time_limit / 30))
    while not done():
        cand, value = state["best"]
        if base is None:
            if deadline - now() < BUILD_SECONDS_PER_OP * cand.schedule.num_ops:
                methods.append("neighbourhoods stopped: too little time left to build the "
                               "model")
                break
            try:
                base = Base(work, cand.schedule, simulate(cand.schedule.with_instance(work))
                            .makespan, lb if objective == "makespan" else Fraction(0),
                            objective)
            except AssertionError:
                methods.append("neighbourhoods stopped: the model rejected the incumbent")
                break
            failed.clear()
        windows = _windows(base, size, region, work.P)
        open_ = [(w, wt) for w, wt in windows if w not in failed]
        if not open_:
            if size >= base.result.schedule.num_ops:
                break  # every window, at full size, explored
            size = int(size * 1.5) + 1
            failed.clear()
            continue
        ws, wts = zip(*open_)
        win = rng.choices(ws, weights=wts)[0]
        left = deadline - now()
        if left <= 0.05:
            break
        tried += 1
        t_sub = now()
        lim = min(left, per)
        out = base.solve(win, _wall(clock, lim), channel.stop, rng.randrange(1 << 30),
                         until=_past(clock, now, t_sub + lim))
        spent = now() - t_sub
        statuses[base.last_status] = statuses.get(base.last_status, 0) + 1
        if out is not None:
            ms = check(work, out)
            if ms is not None:
                val = ms if objective == "makespan" else _value(work, out, objective)
                src = state["best"][0].source
                before = state["best"][1]
                if offer(Candidate(src, out, ms), val):
                    improved += val < before
                    accepted += 1
                    base = None
                    continue
        failed.add(win)
        if spent >= per * 0.9 and size > 30:
            size = max(30, int(size * 0.8))  # too large to finish: shrink
    methods.append(f"large neighbourhood search: {tried} neighbourhoods, {improved} improving "
                   f"the objective, {accepted} accepted (solver: "
                   + ", ".join(f"{k.lower()} {v}" for k, v in sorted(statuses.items()))
                   + f"; first windows of {FREE_OPS} free ops, {per:.1f} s each; windows "
                   f"weighted to the {region} by the binding term)")
    return improved


def _windows(base: Base, size: int, region: str, P: int) -> list[tuple[Window, float]]:
    """Candidate windows of about ``size`` free ops and their weights (module docstring)."""
    res = base.result
    unit = base.built.mdl.unit
    T = int(res.makespan * unit)
    n = res.schedule.num_ops
    width = max(1, T * size // max(1, n))
    step = max(1, width // 2)
    busy: list[list[tuple[int, int]]] = [[] for _ in range(P)]
    for op, (a, b) in base.times.items():
        busy[base.built.mdl.gpu[op.stage]].append((a, b))
    out = []
    starts = list(range(0, max(1, T - step), step))
    for k, t0 in enumerate(starts):
        t1 = t0 + width
        idle = [t1 - t0 - sum(max(0, min(b, t1) - max(a, t0)) for a, b in busy[p])
                for p in range(P)]
        pos = (t0 + width / 2) / T
        bias = 1.0
        if region == "ends" and (pos < 0.25 or pos > 0.75):
            bias = 3.0
        elif region == "middle" and 0.2 < pos < 0.8:
            bias = 3.0
        out.append((Window(t0, t1), bias * (1 + sum(idle))))
        if P >= 3:  # a few GPUs, a wider window
            g = max(2, P // 3)
            for p0 in range(0, P - g + 1, max(1, g // 2)):
                gp = tuple(range(p0, p0 + g))
                w2 = Window(t0, min(T + 1, t0 + 2 * width), gp)
                out.append((w2, 0.5 * bias * (1 + sum(idle[p] for p in gp))))
    return out
