"""Lower bounds with per-stage costs and a communication delay (docs/theory.md, section
*Per-stage costs and communication*, theorems H1, H2, H3).

Valid for every instance of MODEL.md with its extensions: per-stage durations ``f_s, b_s``
(split ``b_I,s, b_W,s``), communication delay ``c >= 0`` on every precedence between stages on
different GPUs, any placement, any ``v``, any memory limit (``K`` or bytes: the bounds ignore
memory, which only removes schedules). The uniform theorems of docs/theory.md and
docs/theory_multiwave.md are *not* used for non-uniform instances: :func:`bounds.lower_bound`
takes only these terms then.

Notation (all exact Fractions): ``head(s) = sum_{s' < s} f_s' + c * #{1 <= s' <= s : gpu(s') !=
gpu(s'-1)}``, the earliest start of any ``F(j,s)``; ``down(s) = sum_{s' < s} g_s' + c * #{0 <= s'
< s : gpu(s') != gpu(s'+1)}`` with ``g`` the input-gradient duration (``b_s`` fused, ``b_I,s``
split), the chain that must follow the input-gradient op of ``(j,s)`` down to stage 0.

* **H1** (work): ``T >= max_p m * sum_{s on p} (f_s + b_s)``.
* **H2** (chain): fused ``T >= head(S-1) + f_{S-1} + b_{S-1} + c_b(S-1) + down(S-1)``, i.e. the
  whole chain of one microbatch with ``c`` at each GPU crossing; split ``T >= max_s (head(S-1) +
  f_{S-1} + sum_{s' >= s} b_I,s' + c * crossings between S-1 and s + b_W,s)``. Exact
  (``= OPT``) when ``m = 1``, ``v = 1`` and no byte budget.
* **H3** (fill-drain of each GPU ``p``, first stage ``s_p``): fused ``T >= head(s_p) + m *
  sum_{s on p} (f_s + b_s) + down(s_p)``; split ``T >= head(s_p) + m * sum_{s on p} (f_s +
  b_s)`` and ``T >= head(s_p) + m * sum_{s on p} (f_s + b_I,s) + min_{s on p} max(b_W,s,
  down(s) + b_W,0)``.

>>> from schedules import Instance
>>> inst = Instance(P=2, m=2, f=[1, 3], b=[2, 4], c=1)
>>> [(n, int(x)) for n, x, _ in terms(inst)]
[('hetero_work', 14), ('hetero_chain', 12), ('hetero_fill_drain', 19)]
"""

from __future__ import annotations

from fractions import Fraction

from schedules.instance import Instance

from .theorems import SINGLE, term_exact, theorem

H_DOC = SINGLE + "A.9 Per-stage costs and communication (H1–H10)"


def _grad(inst: Instance) -> tuple[Fraction, ...]:
    return inst.durations_of("I" if inst.split else "B")


def heads(inst: Instance) -> list[Fraction]:
    """``head(s)``: the earliest start of ``F(j,s)`` (forwards of the stages below, ``c`` at each
    GPU crossing)."""
    f, gpu, c = inst.durations_of("F"), inst.stage_to_rank, inst.c
    out = [Fraction(0)]
    for s in range(1, inst.S):
        out.append(out[-1] + f[s - 1] + (c if gpu[s] != gpu[s - 1] else 0))
    return out


def downs(inst: Instance) -> list[Fraction]:
    """``down(s)``: the input-gradient chain after that of ``(j,s)``: stages ``s-1 .. 0``, ``c`` at
    each GPU crossing."""
    g, gpu, c = _grad(inst), inst.stage_to_rank, inst.c
    out = [Fraction(0)]
    for s in range(1, inst.S):
        out.append(out[-1] + g[s - 1] + (c if gpu[s] != gpu[s - 1] else 0))
    return out


@theorem("H1", "per-GPU work, per-stage costs", H_DOC, terms=("hetero_work",))
def work(inst: Instance) -> Fraction:
    """H1: the busiest GPU's work ``m * sum_{s on p} (f_s + b_s)``."""
    f, b = inst.durations_of("F"), inst.durations_of("B")
    return max(inst.m * sum((f[s] + b[s] for s in inst.stages_of(p)), Fraction(0))
               for p in range(inst.P))


@theorem("H2", "chain with delays", H_DOC, terms=("hetero_chain",),
         exact=lambda i: chain_exact(i))
def chain(inst: Instance) -> Fraction:
    """H2: one microbatch's chain with ``c`` at each GPU crossing (split: through the latest
    ``W``)."""
    S = inst.S
    top = heads(inst)[S - 1] + inst.durations_of("F")[S - 1]
    down = downs(inst)
    g = _grad(inst)
    if not inst.split:
        return top + g[S - 1] + down[S - 1]
    w = inst.durations_of("W")
    # end of I(j,s) is at least top + (down(S-1) + g_{S-1}) - down(s); then W(j,s)
    through = down[S - 1] + g[S - 1]
    return max(top + through - down[s] + w[s] for s in range(S))


def fill_drain(inst: Instance) -> list[tuple[str, Fraction]]:
    """H3 terms: the largest over GPUs of idle-before + work + forced tail (see module doc)."""
    f, b, g = inst.durations_of("F"), inst.durations_of("B"), _grad(inst)
    head, down = heads(inst), downs(inst)
    best = Fraction(0)
    best_input = Fraction(0)
    for p in range(inst.P):
        st = inst.stages_of(p)
        s0 = st[0]
        full = head[s0] + inst.m * sum((f[s] + b[s] for s in st), Fraction(0))
        if not inst.split:
            best = max(best, full + down[s0])
            continue
        best = max(best, full)
        w = inst.durations_of("W")
        fi = head[s0] + inst.m * sum((f[s] + g[s] for s in st), Fraction(0))
        tail = min(max(w[s], down[s] + w[0]) for s in st)
        best_input = max(best_input, fi + tail)
    out = [("hetero_fill_drain", best)]
    if inst.split:
        out.append(("hetero_fill_drain_input", best_input))
    return out


@theorem("H3", "fill-drain per GPU, per-stage costs", H_DOC,
         terms=("hetero_fill_drain", "hetero_fill_drain_input"))
def fill_drain_value(inst: Instance) -> Fraction:
    """H3: the larger of the :func:`fill_drain` terms."""
    return max(x for _, x in fill_drain(inst))


def chain_exact(inst: Instance) -> bool:
    """H2 = OPT: one microbatch on a single wave, no byte budget (the chain, each GPU running
    its stage's ops in chain order, is a schedule holding one activation per GPU)."""
    budget = inst.memory is not None and inst.memory.budget is not None
    return inst.m == 1 and inst.v == 1 and not budget


def terms(inst: Instance) -> list[tuple[str, Fraction, bool]]:
    """``(name, value, exact)`` of H1, H2, H3 for ``inst`` (any durations, any ``c``)."""
    out = [("hetero_work", work(inst), False),
           ("hetero_chain", chain(inst), term_exact("hetero_chain", inst))]
    out += [(n, x, False) for n, x in fill_drain(inst)]
    return out


def crossings(inst: Instance) -> int:
    """GPU crossings of one microbatch's chain (forward and backward): the number of ``c``
    delays on it."""
    gpu = inst.stage_to_rank
    return 2 * sum(1 for s in range(1, inst.S) if gpu[s] != gpu[s - 1])
