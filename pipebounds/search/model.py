"""The integer form of an :class:`~schedules.instance.Instance` that the exact schedulers use.

Times are integers in units of ``1/instance.unit`` (MODEL.md: every duration is a rational,
``unit`` is the lcm of their denominators), so no Fraction is touched during the search.
For microbatch ``j`` the chain of ops is ``F(j,0) .. F(j,S-1)``, then the input-gradient ops
(``B``, or ``I`` when split) ``S-1 .. 0``; ``W(j,s)`` follows ``I(j,s)``; an optional ``R(j,s)``
lies between ``F(j,s)`` and the input-gradient op of ``(j,s)``.

>>> from schedules import Instance
>>> mdl = Model.of(Instance(P=2, m=3, f=1, b="3/2"))
>>> mdl.unit, mdl.dF, mdl.dIG, mdl.dW, mdl.gpu
(2, 2, 3, 0, (0, 1))
>>> mdl.tail_after_ig
(0, 3)
"""

from __future__ import annotations

from dataclasses import dataclass

from schedules.instance import Instance


@dataclass(frozen=True)
class Model:
    """Integer durations, placement, lags and chain tails of one instance.

    ``dIG`` is the duration of the input-gradient op (``b`` fused, ``b_I`` split), ``dW`` that of
    ``W`` (0 when fused). Per-stage costs (MODEL.md, *Extensions*): ``dFs[s]``, ``dIGs[s]``,
    ``dWs[s]`` are the durations on stage ``s``; the scalars ``dF, dIG, dW`` are their largest
    values (the durations themselves when uniform; used only for horizons). ``lag_f[s]`` is the
    delay between ``F(j,s-1)`` and ``F(j,s)`` (``c`` when
    they run on different GPUs), ``lag_b[s]`` the delay between the input-gradient ops of
    ``(j,s+1)`` and ``(j,s)``. ``tail_after_ig[s]`` is the length of the chain that must still run
    after the input-gradient op of ``(j,s)`` ends (the lower stages' input-gradient ops, then
    ``W(j,0)``; or ``W(j,s)`` alone if longer): a lower bound on ``T - end(IG(j,s))``.
    ``tail_after_f[s]`` is the same after ``F(j,s)``.
    """

    instance: Instance
    P: int
    m: int
    S: int
    K: int                 # memory limit; m*v+1 (never binding) when unconstrained
    bounded: bool          # True iff K can bind (remat is worth considering)
    unit: int
    dF: int
    dIG: int
    dW: int
    split: bool
    gpu: tuple[int, ...]
    lag_f: tuple[int, ...]
    lag_b: tuple[int, ...]
    tail_after_f: tuple[int, ...]
    tail_after_ig: tuple[int, ...]
    dFs: tuple[int, ...] = ()
    dIGs: tuple[int, ...] = ()
    dWs: tuple[int, ...] = ()

    @classmethod
    def of(cls, inst: Instance) -> "Model":
        u = inst.unit
        S = inst.S
        dFs = tuple(int(x * u) for x in inst.durations_of("F"))
        if inst.split:
            dIGs = tuple(int(x * u) for x in inst.durations_of("I"))
            dWs = tuple(int(x * u) for x in inst.durations_of("W"))
        else:
            dIGs, dWs = tuple(int(x * u) for x in inst.durations_of("B")), (0,) * S
        dF, dIG, dW = max(dFs), max(dIGs), max(dWs)
        c = int(inst.c * u)
        gpu = tuple(inst.stage_to_rank)
        lag_f = tuple(0 if s == 0 or gpu[s] == gpu[s - 1] else c for s in range(S))
        lag_b = tuple(0 if s == S - 1 or gpu[s] == gpu[s + 1] else c for s in range(S))
        chain = dWs[0]            # IG(j,s-1) .. IG(j,0), W(j,0) after IG(j,s)
        tail_ig = [max(chain, dWs[0])]
        for s in range(1, S):
            chain += lag_b[s - 1] + dIGs[s - 1]
            tail_ig.append(max(chain, dWs[s]))
        tail_f = [0] * S
        acc = tail_ig[S - 1] + dIGs[S - 1]
        tail_f[S - 1] = acc
        for s in range(S - 2, -1, -1):
            acc += lag_f[s + 1] + dFs[s + 1]
            tail_f[s] = acc
        most = inst.v * inst.m
        bounded = inst.K is not None and inst.K < most
        K = inst.K if bounded else most + 1
        return cls(inst, inst.P, inst.m, S, K, bounded, u, dF, dIG, dW, inst.split, gpu,
                   lag_f, lag_b, tuple(tail_f), tuple(tail_ig), dFs, dIGs, dWs)

    @property
    def trivial_horizon(self) -> int:
        """The makespan (units) of one microbatch at a time with every pair recomputed: a valid
        schedule for every ``K >= 1``, so no optimum exceeds it."""
        return (self.m * self.S * (2 * self.dF + self.dIG + self.dW)
                + self.m * (sum(self.lag_f) + sum(self.lag_b)))

    @property
    def ig_kind(self) -> str:
        """The letter of the input-gradient op: ``I`` when split, else ``B``."""
        return "I" if self.split else "B"
