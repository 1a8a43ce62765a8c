"""Memory-aware lower bounds with per-stage costs and a communication delay (docs/theory.md
A.9, theorems H4-H10): the uniform theorems MW1/MW8c, T3, T2/S3, MW7, S1, MW11 and MW9 with
per-stage durations
``f_s, b_s`` (split ``b_I,s, b_W,s``) and the delay ``c`` on every precedence between stages on
different GPUs.

* **H4** (GPU subset over the chain graph; MW1, and at ``K = 1`` MW8c): for a GPU ``p`` and a
  set ``A`` of its op types, ``T >= min_A head + m sum_A duration + min_A tail``, heads and tails
  the longest paths of one microbatch's precedence graph (:func:`chain_graph`) with ``c`` on
  every edge between GPUs; at ``K = 1`` the graph has the forced ``R`` of every stage below the
  top stage of its GPU, waiting for the release of the GPU's higher stages. Any ``v``.
* **H5** (single slot, ``K = 1``, ``v = 1``; T3): GPU ``p`` with ``f = f_p``, ``u = f_p + b_p``
  and the kept hold's chain gap ``G_p = sum_{s > p} (f_s + g_s) + 2 c (P - 1 - p)``:
  fused ``T >= head(p) + min_x Λ_p(x) + down(p)``; split ``T >= head(p) + min_x Λ_p(x) - b_W,p
  + max(b_W,p, down(p) + b_W,0)``.
* **H6** (memory-time, finite ``K``, ``v = 1``; T2 and S3): T2's and S3's argument per GPU with
  the per-stage hold lengths and the window ``[head(p), T - down(p)]`` (fused) or
  ``[head(p), T]`` (split).
* **H7** (memory slots, finite ``K``, any ``v``; MW7): :func:`memory_slots_value` (the choice
  of recomputed pairs relaxed to reals, so at most MW7 on uniform instances).
* **H8** (split drain, ``v = 1``; S1): :func:`split_drain_value`.
* **H9** (first backward, finite ``K``, any ``v``; MW11): :func:`first_backward_value`.
* **H10** (single slot per GPU, ``K = 1``, ``v >= 2``; MW9): :func:`wave_slot_value`.

With uniform durations and ``c = 0`` H4, H5, H6 and H8 equal their uniform theorems (tests). The forms that
hold with backward recomputation: H4 with the chain of A.11 (``R(j,s)`` waits for the end of
``I(j,s')``) and H10 with that chain and the drain of A.11; H5-H9 split are not claimed there
(left out).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from schedules.instance import Instance

from .heterogeneous import downs, heads
from .multi_wave import min_single_slot_waste, subset_best
from .single_wave import _memory_time_min, input_drain, single_slot_waste, slot_edge
from .theorems import SINGLE, theorem

DOC = SINGLE + "A.9 Per-stage costs and communication (H1–H10)"
"""The docs section of H4-H10."""


def chain_graph(inst: Instance, backward: bool = False) -> dict:
    """``{(kind, stage): (head, tail, duration)}`` of one microbatch's op types (``F``, the
    input-gradient op ``B`` or ``I``, ``W`` split, and at ``K = 1`` the forced ``R``), with
    per-stage durations and ``c`` on every precedence between different GPUs.

    ``head``: the longest path of predecessors' durations and delays before the op starts;
    ``tail``: the longest path after it ends. At ``K = 1`` the ``R(j,s)`` of a stage below the
    top stage of its GPU is forced (MW8's lemma: a kept ``(j,s)`` would be live with a higher
    stage of the GPU) and starts after the release of every higher stage ``s'`` of the GPU: the
    end of ``W(j,s')`` (split), of ``B(j,s')`` (fused), or, with ``backward``, of ``I(j,s')``
    (docs/theory.md A.11). Same-GPU edges have no delay.
    """
    S, c, gpu = inst.S, inst.c, inst.stage_to_rank
    f = inst.durations_of("F")
    split = inst.split
    g = inst.durations_of("I" if split else "B")
    w = inst.durations_of("W") if split else (0,) * S
    ig = "I" if split else "B"
    top: dict[int, int] = {}
    for s in range(S):
        top[gpu[s]] = s
    forced = [inst.K == 1 and s < top[gpu[s]] for s in range(S)]
    lag_f = [0] + [c if gpu[s] != gpu[s - 1] else 0 for s in range(1, S)]   # F(s-1) -> F(s)
    lag_b = [c if s + 1 < S and gpu[s] != gpu[s + 1] else 0 for s in range(S)]  # IG(s+1) -> IG(s)
    wait_w = split and not backward      # R of a lower stage waits for W (else for the IG)
    hF = [Fraction(0)] * S
    for s in range(1, S):
        hF[s] = hF[s - 1] + f[s - 1] + lag_f[s]
    hR: dict[int, Fraction] = {}
    hG = [Fraction(0)] * S
    rel: dict[int, Fraction] = {}      # latest release end so far of each GPU's higher stages
    prev = hF[S - 1] + f[S - 1]
    for s in range(S - 1, -1, -1):
        p = gpu[s]
        start = prev if s == S - 1 else prev + lag_b[s]
        if forced[s]:
            hR[s] = max(hF[s] + f[s], rel[p])
            start = max(start, hR[s] + f[s])
        hG[s] = start
        prev = start + g[s]
        end = prev + (w[s] if wait_w else 0)
        rel[p] = max(rel[p], end) if p in rel else end
    tG = [Fraction(0)] * S
    tW = [Fraction(0)] * S
    tR: dict[int, Fraction] = {}
    after: dict[int, Fraction] = {}    # longest continuation through a lower stage's R
    for s in range(S):
        p = gpu[s]
        cont = after.get(p, Fraction(0))
        down = g[s - 1] + tG[s - 1] + lag_b[s - 1] if s else Fraction(0)
        if split:
            tW[s] = cont if wait_w else Fraction(0)
            tG[s] = max(down, w[s] + tW[s], Fraction(0) if wait_w else cont)
        else:
            tG[s] = max(down, cont)
        if forced[s]:
            tR[s] = g[s] + tG[s]
            after[p] = max(after[p], f[s] + tR[s]) if p in after else f[s] + tR[s]
    tF = [Fraction(0)] * S
    nxt = g[S - 1] + tG[S - 1]
    for s in range(S - 1, -1, -1):
        tF[s] = max(nxt, f[s] + tR[s]) if forced[s] else nxt
        nxt = f[s] + tF[s] + lag_f[s]
    out = {}
    for s in range(S):
        out[("F", s)] = (hF[s], tF[s], f[s])
        if forced[s]:
            out[("R", s)] = (hR[s], tR[s], f[s])
        out[(ig, s)] = (hG[s], tG[s], g[s])
        if split:
            out[("W", s)] = (hG[s] + g[s], tW[s], w[s])
    return out


@theorem("H4", "GPU subset over the chain graph, per-stage costs and c", DOC,
         terms=("hetero_gpu_subset",))
def gpu_subset_value(inst: Instance, backward: bool = False) -> Fraction:
    """H4: MW1 over :func:`chain_graph`, maximised over GPUs and sets of op types."""
    types: list[list[tuple]] = [[] for _ in range(inst.P)]
    gpu = inst.stage_to_rank
    for (kind, s), (h, t, d) in chain_graph(inst, backward).items():
        types[gpu[s]].append((kind, s, h, t, d))
    return subset_best(types, inst.m)[0]


def _gap(inst: Instance, p: int) -> Fraction:
    """``G_p`` (``v = 1``): the chain a kept hold of GPU ``p`` contains besides its own ``F`` and
    input-gradient op: the stages above ``p`` up and down, ``2c`` per GPU crossing."""
    f = inst.durations_of("F")
    g = inst.durations_of("I" if inst.split else "B")
    return sum((f[s] + g[s] for s in range(p + 1, inst.P)), Fraction(0)) + 2 * inst.c * (
        inst.P - 1 - p)


@theorem("H5", "single slot, per-stage costs and c (K = 1, v = 1)", DOC,
         terms=("hetero_single_slot",))
def single_slot_value(inst: Instance) -> Optional[Fraction]:
    """H5 (``K = 1``, ``v = 1``); None elsewhere.

    >>> single_slot_value(Instance(P=3, m=4, K=1, f=3, b=2))   # = T3 when uniform, c = 0
    Fraction(34, 1)
    """
    if inst.K != 1 or inst.v != 1:
        return None
    f, b = inst.durations_of("F"), inst.durations_of("B")
    head, down = heads(inst), downs(inst)
    best = None
    for p in range(inst.P):
        G = _gap(inst, p)
        lam = inst.m * (f[p] + b[p]) + min_single_slot_waste(inst.m, G, f[p], inst.m)
        if inst.split:
            w = inst.durations_of("W")
            val = head[p] + lam - w[p] + max(w[p], down[p] + w[0])
        else:
            val = head[p] + lam + down[p]
        best = val if best is None else max(best, val)
    return best


@theorem("H6", "memory-time, per-stage costs and c (v = 1)", DOC,
         terms=("hetero_memory_time",))
def memory_time_value(inst: Instance) -> Optional[Fraction]:
    """H6 (finite ``K < m``, ``v = 1``); None elsewhere.

    >>> memory_time_value(Instance(P=4, m=8, K=2, f=1, b=2))   # = T2 when uniform, c = 0
    Fraction(33, 1)
    """
    if inst.K is None or inst.v != 1 or inst.K >= inst.m:
        return None
    f, b = inst.durations_of("F"), inst.durations_of("B")
    g = inst.durations_of("I" if inst.split else "B")
    w = inst.durations_of("W") if inst.split else None
    head, down = heads(inst), downs(inst)
    k = min(inst.K, inst.m)
    best = None
    for p in range(inst.P):
        u = f[p] + b[p]
        kept = f[p] + _gap(inst, p) + g[p] + (w[p] if inst.split else 0)
        edge = slot_edge(k, f[p], w[p] if inst.split else b[p])
        inner = _memory_time_min(inst.m, 0, inst.K, f[p], u, kept, u, edge)
        val = head[p] + inner + (0 if inst.split else down[p])
        best = val if best is None else max(best, val)
    return best


def terms(inst: Instance, backward: bool = False) -> list[tuple[str, Fraction, bool]]:
    """``(name, value, exact)`` of H4-H10 for ``inst`` (never exact). ``backward``: only the
    forms proven with backward recomputation (H4 on A.11's chain, H10 with its drain)."""
    out = [("hetero_gpu_subset", gpu_subset_value(inst, backward and inst.split), False)]
    if backward and inst.split:
        slot = wave_slot_value(inst, True)
        if slot is not None:
            out.append(("hetero_wave_slot", slot, False))
        return out
    slot = single_slot_value(inst)
    if slot is not None:
        out.append(("hetero_single_slot", slot, False))
    mem = memory_time_value(inst)
    if mem is not None:
        out.append(("hetero_memory_time", mem, False))
    slots = memory_slots_value(inst)
    if slots is not None:
        out.append(("hetero_memory_slots", slots, False))
    drain = split_drain_value(inst)
    if drain is not None:
        out.append(("hetero_split_drain", drain, False))
    first = first_backward_value(inst)
    if first is not None:
        out.append(("hetero_first_backward", first, False))
    slot = wave_slot_value(inst)
    if slot is not None:
        out.append(("hetero_wave_slot", slot, False))
    return out


@theorem("H7", "memory slots, per-stage costs and c (finite K; MW7)", DOC,
         terms=("hetero_memory_slots",))
def memory_slots_value(inst: Instance) -> Optional[Fraction]:
    """H7 (finite ``K``, any ``v``): MW7 per GPU with per-stage round trips, relaxed.

    GPU ``p`` stores ``n = v m`` activations in ``[head, T - tail]`` (``head``: of its lowest
    stage's ``F``; ``tail``: the least tail of its releasing ops, ``down(s_1)`` fused, 0 split).
    A kept ``(j, s)`` is live at least ``L_s``, from the start of ``F(j, s)`` to the end of its
    release in :func:`chain_graph` (with ``K >= 2``: no forced ``R``); a recomputed one at least
    ``f_s + b_s`` and costs ``f_s`` more work. With ``x_s`` recomputed pairs of stage ``s``:
    ``K (T - head - tail) >= sum_s ((m - x_s) L_s + x_s (f_s + b_s)) + E`` and
    ``T - head - tail >= m sum_s (f_s + b_s) + sum_s x_s f_s``, ``E = k(k-1)/2 (f_min + r_min)``
    (L3 with the shortest store and release ops of the GPU, ``k = min(K, n)``). The minimum
    over real ``x_s in [0, m]`` (a fractional knapsack: recompute first the stages with the
    largest saving ``L_s - f_s - b_s`` per ``f_s``, until the two sides meet) is a lower bound
    on the minimum over integers. None when ``K`` is None or ``K >= v m``.
    """
    if inst.K is None or inst.K >= inst.v * inst.m:
        return None
    K, m = inst.K, inst.m
    f, b = inst.durations_of("F"), inst.durations_of("B")
    rel = inst.durations_of("W") if inst.split else b
    graph = chain_graph(inst.with_(K=None)) if inst.K == 1 else chain_graph(inst)
    ig = "I" if inst.split else "B"
    down = downs(inst)
    best = None
    for p in range(inst.P):
        st = inst.stages_of(p)
        n = len(st) * m
        k = min(K, n)
        edge = slot_edge(k, min(f[s] for s in st), min(rel[s] for s in st))
        head = graph[("F", st[0])][0]
        tail = Fraction(0) if inst.split else down[st[0]]
        L = {}
        for s in st:
            end = graph[("W", s)] if inst.split else graph[(ig, s)]
            L[s] = end[0] + end[2] - graph[("F", s)][0]
        work = m * sum((f[s] + b[s] for s in st), Fraction(0))
        slots = m * sum((L[s] for s in st), Fraction(0)) + edge
        # fractional knapsack, best saving per unit of work first
        order = sorted(st, key=lambda s: -(L[s] - f[s] - b[s]) / f[s])
        inner = None
        for s in order:
            save = L[s] - f[s] - b[s]
            # x in [0, m] of stage s: work + x f_s vs (slots - x save) / K
            if (work + m * f[s]) * K >= slots - m * save:
                x = (slots - work * K) / (f[s] * K + save)
                x = min(max(x, Fraction(0)), Fraction(m))
                inner = max(work + x * f[s], (slots - x * save) / K)
                break
            work += m * f[s]
            slots -= m * save
        if inner is None:
            inner = max(work, slots / K)
        val = head + tail + inner
        best = val if best is None or val > best else best
    return best


@theorem("H8", "split drain, per-stage costs and c (v = 1; S1)", DOC,
         terms=("hetero_split_drain",))
def split_drain_value(inst: Instance) -> Optional[Fraction]:
    """H8 (split, ``v = 1``; S1): ``T >= head(p) + m u_p + max(0, down(p) + b_W,0 - k b_W,p)``,
    ``k = min(K, m)``: after the last ``I`` of GPU ``p`` it runs at most ``k`` ops ``W`` (each
    releases an activation live at that ``I``'s end) while the chain ``down(p)`` and ``W(j, 0)``
    still run. None outside split ``v = 1``."""
    if not inst.split or inst.v != 1:
        return None
    k = inst.m if inst.K is None else min(inst.K, inst.m)
    f, b, w = inst.durations_of("F"), inst.durations_of("B"), inst.durations_of("W")
    head, down = heads(inst), downs(inst)
    return max(head[p] + inst.m * (f[p] + b[p]) + max(Fraction(0), down[p] + w[0] - k * w[p])
               for p in range(inst.P))


def _largest(values: list[Fraction], m: int, k: int) -> Fraction:
    """The sum of the ``k`` largest entries of the multiset holding each of ``values``
    ``m`` times."""
    total, left = Fraction(0), k
    for x in sorted(values, reverse=True):
        n = min(m, left)
        total += n * x
        left -= n
        if not left:
            break
    return total


@theorem("H9", "first backward, per-stage costs and c (finite K; MW11)", DOC,
         terms=("hetero_first_backward",))
def first_backward_value(inst: Instance) -> Optional[Fraction]:
    """H9 (finite ``K``, any ``v``, fused or split; MW11 per stage): for every GPU ``p`` with
    stages ``s_1 < ... < s_v`` and ``k = min(K, v m)``,

    ``T >= h_p + m sum_{s on p} (f_s + b_s) - F_k + end_p``,

    ``h_p = head(S-1) + f_{S-1} + sum_{s_v < s <= S-1} g_s + c X`` (the earliest start of a
    backward op of stage ``s_v``: the forward chain, then the input-gradient chain down to
    ``s_v``, ``c`` at each of its ``X`` GPU crossings; ``g = b`` fused, ``b_I`` split);
    ``F_k`` the sum of the ``k`` largest of the GPU's forward durations, each stage's counted
    ``m`` times; fused ``end_p = down(s_1)``; split
    ``end_p = max(0, min_{s on p} (down(s) + b_W,0) - W_k)``, ``W_k`` likewise the ``k``
    largest ``b_W,s``.

    Proof (MW11's, docs/theory.md A.9): the GPU's first backward op (``B`` or ``I``) is of
    stage ``s_v`` (a lower stage's waits for it on its chain) and starts at ``t_1 >= h_p``.
    Before ``t_1`` the GPU runs only ``F`` and ``R`` ops, and an activation stored by one of
    them is live at ``t_1`` (only a backward op of the GPU releases it), so at most ``k`` of
    them store, each for a different pair. A forward that stores nothing is paid again by its
    pair's ``R`` (same duration), so the work before ``t_1`` net of the recomputations it
    causes is at most ``F_k``: the rest of the GPU's work, at least
    ``m sum (f_s + b_s) - F_k``, runs after ``t_1``. Fused, the last op is a ``B(j, s)`` with
    ``s >= s_1``, followed by ``down(s) >= down(s_1)``. Split, let ``e`` be the end of the
    GPU's last ``I``, of ``(j, s)``: after it only ``W`` ops run, at most ``k`` (each releases
    a pair live at ``e``), of total ``x <= W_k``, and the chain ``down(s)`` with ``W(j, 0)``
    follows ``e``; so ``T >= e + max(x, down(s) + b_W,0)`` with ``e >= t_1 + rest - x``.
    Only for schedules without backward recomputation (with it, H4 alone is claimed). None
    when ``K`` is None.

    >>> first_backward_value(Instance(P=2, m=2, v=2, K=2, placement="vshape", f=[1, 3, 1, 2],
    ...                               b=[1, 4, 2, 2], c=1))
    Fraction(28, 1)
    """
    if inst.K is None:
        return None
    m, S = inst.m, inst.S
    k = min(inst.K, inst.v * m)
    f, b = inst.durations_of("F"), inst.durations_of("B")
    g = inst.durations_of("I" if inst.split else "B")
    gpu, c = inst.stage_to_rank, inst.c
    head, down = heads(inst), downs(inst)
    # up[s]: from the end of F(j, S-1) to the start of the input-gradient op of (j, s)
    up = [Fraction(0)] * S
    for s in range(S - 2, -1, -1):
        up[s] = up[s + 1] + g[s + 1] + (c if gpu[s + 1] != gpu[s] else 0)
    top_end = head[S - 1] + f[S - 1]
    best = None
    for p in range(inst.P):
        st = inst.stages_of(p)
        rest = m * sum((f[s] + b[s] for s in st), Fraction(0)) - _largest([f[s] for s in st], m, k)
        if inst.split:
            w = inst.durations_of("W")
            chain = min(down[s] + w[0] for s in st)
            end = max(Fraction(0), chain - _largest([w[s] for s in st], m, k))
        else:
            end = down[st[0]]
        val = top_end + up[st[-1]] + rest + end
        best = val if best is None or val > best else best
    return best


def wave_slot_span(m: int, v: int, base: Fraction, low: Fraction, top: Fraction, G: Fraction,
                   equal: bool) -> Fraction:
    """H10's least busy span of one GPU with ``v`` stages: ``min_{0 <= x <= m} (base + R(x))``.

    ``base = m sum_{s on p} (f_s + b_s)`` (every op once), ``low = l`` the sum of the lower
    stages' ``f_s`` (each of their ``m`` pairs is recomputed), ``top = f_t`` the top stage's
    forward, ``G`` the gap of a kept top pair. With ``x`` kept top pairs the recomputations and
    the forced idle take at least ``R(x) = m l + (m - x) f_t + I(x)``, ``I(0) = 0`` and
    ``I(x) = max(0, G - N(x) + (x - 1) max(0, G - l))``, ``N(x) = (m - x)(l + f_t)`` (the free
    forwards of the microbatches not kept); ``equal`` (every forward of the GPU lasts
    ``f_t``): also ``R(x) >= single_slot_waste(v m, G, f_t, x)`` (L5, as in MW9).

    >>> wave_slot_span(3, 2, Fraction(36), Fraction(3), Fraction(2), Fraction(6), False)
    Fraction(49, 1)
    """
    delta = max(Fraction(0), G - low)
    best = None
    for x in range(m + 1):
        idle = Fraction(0) if x == 0 else max(
            Fraction(0), G - (m - x) * (low + top) + (x - 1) * delta)
        rest = m * low + (m - x) * top + idle
        if equal:
            rest = max(rest, single_slot_waste(v * m, G, top, x))
        best = rest if best is None or rest < best else best
    return base + best


@theorem("H10", "single slot per GPU, per-stage costs and c (K = 1, v >= 2; MW9)", DOC,
         terms=("hetero_wave_slot",))
def wave_slot_value(inst: Instance, backward: bool = False) -> Optional[Fraction]:
    """H10 (``K = 1``, ``v >= 2``, any placement, fused or split; MW9 per stage): for every
    GPU ``p`` with stages ``s_1 < ... < s_v = t``,

    ``T >= head(F(s_1)) + wave_slot_span(m, v, m sum_{s on p} (f_s + b_s), l, f_t, G, equal)
    + end_p``,

    ``l = sum_{i < v} f_{s_i}``, ``G = head(X(t)) - head(F(t)) - f_t`` (the longest path of
    :func:`chain_graph` from the end of ``F(., t)`` to the start of the input-gradient op
    ``X(., t)``), ``equal`` when every forward of the GPU lasts ``f_t``, fused
    ``end_p = tail(B(s_1))``, split ``end_p = tail(I(s_1)) - b_W,s_1``.

    Proof (docs/theory.md A.9): no lower pair is kept (MW8's lemma), so every lower forward
    stores nothing and is paid again by an ``R``; with ``x`` kept top pairs the other ``m - x``
    are recomputed too. During the gap of a kept ``(j, t)`` (from the end of ``F(j, t)`` to the
    start of ``X(j, t)``, at least ``G``) its activation is the GPU's only one, so the GPU runs
    only forwards that store nothing there; the kept holds are disjoint. Ordered by time, the
    ``k``-th kept microbatch's lower forwards precede its ``F(j_k, t)``, so they lie in the
    gaps of the first ``k - 1`` kept holds only: all gaps together hold at most
    ``(x - 1) l + N(x)`` of free forwards, the last gap at most ``N(x)``, which gives the idle
    ``I(x)``; with equal forwards, MW9's count (L5) holds as well. All ops and gaps lie after
    ``head(F(s_1))``. The GPU's last input-gradient op is of stage ``s_1`` (that of ``(j, s)``
    precedes that of ``(j, s_1)`` on the chain); fused it is the last op, followed by its tail;
    split, after it the GPU runs only its pair's ``W`` (one slot), and it is followed by its
    tail. None outside ``K = 1``, ``v >= 2``.

    ``backward`` (split, backward recomputation allowed: docs/theory.md A.11): the chain of
    :func:`chain_graph`'s backward form, and after the last ``I`` the GPU may run ``n`` ops
    ``W`` (at most ``b_W,max`` each), ``n - 1`` of them of pairs stored again by backward ``R``
    ops (at least ``f_min`` each): ``end_p`` becomes
    ``input_drain(tail(I(s_1)) - b_W,s_1, 1, v m, f_min, b_W,max)`` over the GPU's stages.
    The plain split form is false there (docs/theory.md A.9).

    >>> wave_slot_value(Instance(P=2, m=3, K=1, v=2, placement="vshape", f=[1, 3, 2, 2],
    ...                          b_I=2, b_W=[2, 1, 2, 1], c=1))   # = OPT (H1-H9: 197/4)
    Fraction(55, 1)
    """
    if inst.K != 1 or inst.v < 2:
        return None
    m = inst.m
    backward = backward and inst.split
    graph = chain_graph(inst, backward)
    f, b = inst.durations_of("F"), inst.durations_of("B")
    ig = "I" if inst.split else "B"
    w = inst.durations_of("W") if inst.split else (Fraction(0),) * inst.S
    best = None
    for p in range(inst.P):
        st = inst.stages_of(p)
        t = st[-1]
        low = sum((f[s] for s in st[:-1]), Fraction(0))
        G = graph[(ig, t)][0] - graph[("F", t)][0] - f[t]
        base = m * sum((f[s] + b[s] for s in st), Fraction(0))
        equal = all(f[s] == f[t] for s in st)
        end = graph[(ig, st[0])][1] - w[st[0]]
        if backward:
            end = input_drain(end, 1, inst.v * m, min(f[s] for s in st), max(w[s] for s in st))
        span = wave_slot_span(m, inst.v, base, low, f[t], G, equal)
        val = graph[("F", st[0])][0] + span + end
        best = val if best is None or val > best else best
    return best
