"""Schedule generators (schedules/generators): validity on the whole grid, refusals, and the
published figures (REFERENCES.md), each with the exact quantity and conditions it holds in.

Quantities: *global makespan* ``T`` (MODEL.md); *global bubble* ``T - v m (f + b)`` (GPU work
per microbatch is ``v(f+b)``); *per-rank bubble* ``max_p (span_p - busy_p)`` where ``span_p`` is
GPU ``p``'s first op start to last op end (what the zero-bubble papers call the bubble).
The closed forms below are the published ones (or, where noted, hand-derived: e.g. GPU ``P-1``
of any pipeline cannot start before ``(P-1) f``); none is fitted to the measurements.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from fractions import Fraction

import pytest

from schedules import Instance, simulate
from schedules.generators import GENERATORS, Generator, GeneratorError, Requires, generate
from schedules.generators.building_block import block_schedule
from schedules.generators.list_scheduler import list_schedule
from schedules.generators.vshape_controllable import v_half_memory, v_min_memory

CLI_NAMES = ["gpipe", "1f1b", "interleaved", "interleaved-short", "looped-bfs", "hanayo",
             "zb-h1", "zb-h2", "zb-2p", "interleaved-zb", "zbv", "v-half", "v-min", "dualpipev",
             "dualpipev-fb", "dualpipe"]
GRID_P = range(1, 9)
GRID_M = range(1, 25)


def waves(gen: Generator) -> list[int]:
    r = gen.requires
    if r.v_max is not None:
        return list(range(r.v_min, r.v_max + 1))
    return sorted({r.v_min, 2, 3})


def home(gen: Generator, P: int, m: int, v: int, split=(1, 1, 1)) -> Instance:
    f, bi, bw = split
    two = {"directions": 2, "m": m + m % 2} if gen.requires.directions == 2 else {"m": m}
    return Instance(P=P, v=v, placement=gen.requires.placement or "looped", f=f, **two,
                    **({"b_I": bi, "b_W": bw} if gen.requires.split else {"b": bi + bw}))


def per_rank_bubble(res) -> Fraction:
    inst = res.schedule.instance
    spans = [Fraction(e[-1] - s[0], inst.unit) for s, e in zip(res.start, res.end)]
    return max(sp - busy for sp, busy in zip(spans, res.busy))


def global_bubble(res) -> Fraction:
    inst = res.schedule.instance
    return res.makespan - inst.v * inst.m * (inst.f + inst.b)


# ------------------------------------------------------------------------------ registry
def test_registry_has_every_cli_name():
    assert list(GENERATORS) == CLI_NAMES
    for name, gen in GENERATORS.items():
        assert gen.name == name and gen.summary and gen.function.__doc__


@pytest.mark.parametrize("name", CLI_NAMES)
def test_valid_on_the_whole_grid(name):
    """Every P <= 8, m <= 24 and the family's waves: valid, or refused with GeneratorError."""
    gen = GENERATORS[name]
    refused = built = 0
    for P, m, v in itertools.product(GRID_P, GRID_M, waves(gen)):
        inst = home(gen, P, m, v)
        try:
            sched = generate(name, inst)
        except GeneratorError as exc:
            assert name in str(exc)
            refused += 1
            continue
        res = simulate(sched)
        assert res.valid, (name, P, m, v, res.errors[:3])
        assert sched.source == name
        built += 1
    if name.startswith("dualpipev"):  # needs m >= 2P, as torch's ScheduleDualPipeV
        assert refused == sum(1 for P, m in itertools.product(GRID_P, GRID_M) if m < 2 * P)
    elif name == "dualpipe":  # needs P even and m >= 2P (m rounded up to even by home())
        assert refused == sum(1 for P, m in itertools.product(GRID_P, GRID_M)
                              if P % 2 or m + m % 2 < 2 * P)
    else:
        assert refused == 0
    assert built > 0


@pytest.mark.parametrize("name", CLI_NAMES)
def test_other_durations_valid(name):
    gen = GENERATORS[name]
    for P, m, dur in itertools.product((1, 3, 5), (5, 11), ((2, 3, 1), (1, 1, 2), ("1/2", 2, 1))):
        for v in waves(gen):
            try:
                sched = generate(name, home(gen, P, m, v, dur))
            except GeneratorError:
                assert (name.startswith("dualpipev") and m < 2 * P) or (
                    name == "dualpipe" and (P % 2 or m + 1 < 2 * P))
                continue
            assert simulate(sched).valid


@pytest.mark.parametrize("name,inst,words", [
    ("gpipe", Instance(P=2, m=2, v=2), "v=1"),
    ("1f1b", Instance(P=2, m=2, v=2), "v=1"),
    ("interleaved", Instance(P=2, m=2), "v >= 2"),
    ("interleaved", Instance(P=2, m=2, v=2, placement="vshape"), "looped"),
    ("hanayo", Instance(P=2, m=2, v=2), "vshape"),
    ("zb-h1", Instance(P=2, m=2), "split"),
    ("zb-h2", Instance(P=2, m=2, v=2, b_I=1, b_W=1), "v=1"),
    ("zb-2p", Instance(P=2, m=2), "split"),
    ("interleaved-zb", Instance(P=2, m=2, v=2), "split"),
    ("zbv", Instance(P=2, m=2, v=3, placement="vshape", b_I=1, b_W=1), "v=2"),
    ("v-half", Instance(P=2, m=2, v=2, placement="vshape"), "split"),
    ("v-min", Instance(P=2, m=2, v=2, b_I=1, b_W=1), "vshape"),
    ("dualpipev", Instance(P=2, m=3, v=2, placement="vshape", b_I=1, b_W=1), "m >= 2P"),
    ("nosuch", Instance(P=2, m=2), "unknown schedule"),
])
def test_refusals_name_the_problem(name, inst, words):
    with pytest.raises(GeneratorError, match=words) as info:
        generate(name, inst)
    assert isinstance(info.value, ValueError)


def test_generators_ignore_K_and_generate_fits_it():
    inst = Instance(P=4, m=8, b_I=1, b_W=1)
    natural = GENERATORS["zb-h2"](inst.with_(K=2))
    assert natural.orders == GENERATORS["zb-h2"](inst).orders
    fitted = generate("zb-h2", inst.with_(K=2))
    res = simulate(fitted)
    assert res.valid and max(res.peak_memory) <= 2 and fitted.instance.K == 2
    assert any(op.kind == "R" for _, op in fitted.ops())


def test_requires_describe():
    assert Requires(2, 2, "vshape", True).describe() == "v=2, vshape, split"
    assert Requires(2, None, "looped").describe() == "v>=2, looped, fused"


# ----------------------------------------------------------------------- published figures
FUSED = [(1, 2), (1, 1), (2, 3), (Fraction(1, 2), Fraction(3, 2))]


def test_gpipe_and_1f1b_makespan_and_memory():
    """(m+P-1)(f+b) global makespan (REFERENCES.md); peaks m (GPipe), min(P-p, m) (1F1B)."""
    for P, m, (f, b) in itertools.product(GRID_P, GRID_M, FUSED):
        inst = Instance(P=P, m=m, f=f, b=b)
        for name in ("gpipe", "1f1b"):
            res = simulate(generate(name, inst))
            assert res.makespan == (m + P - 1) * (f + b), (name, P, m, f, b)
        assert simulate(generate("gpipe", inst)).peak_memory == [m] * P
        assert simulate(generate("1f1b", inst)).peak_memory == [min(P - p, m) for p in range(P)]


def test_interleaved_makespan_when_m_at_least_P():
    """Megatron: bubble (P-1)(f+b) in per-stage durations, i.e. global makespan
    (vm + P - 1)(f + b), published for m a multiple of P; it holds for every m >= P with the
    uneven rounds (all tested f, b). Peak on GPU p is the warm-up plus one,
    min(vm, (v-1)g + 2(P-1-p) + 1) with g the first round's size."""
    from schedules.generators.interleaved import rounds_of
    for P, v, m, (f, b) in itertools.product(GRID_P, (2, 3, 4), GRID_M, FUSED[:3]):
        if m < P or (f, b) != (1, 2) and m % 3:
            continue
        res = simulate(generate("interleaved", Instance(P=P, m=m, v=v, f=f, b=b)))
        assert res.makespan == (v * m + P - 1) * (f + b), (P, m, v, f, b)
        g = len(rounds_of(P, m)[0])
        assert res.peak_memory == [min(v * m, (v - 1) * g + 2 * (P - 1 - p) + 1)
                                   for p in range(P)], (P, m, v)


def test_interleaved_short_matches_interleaved_at_lower_memory():
    """interleaved-short (warm-up (v-1)g + P-1-p): never slower than interleaved, peak on GPU p
    min(vm, (v-1)g + P - p); for P | m the makespan is the memory-free bound MW5,
    (vm + P - 1)(f + b), so it is optimal at every K >= vP (the range the docs claim)."""
    from bounds import lower_bound
    from schedules.generators.interleaved import rounds_of
    for P, v, m, (f, b) in itertools.product(GRID_P, (2, 3), range(1, 4 * max(GRID_P) + 1),
                                             FUSED[:3] + [(2, 1)]):
        if m > 4 * P:
            continue
        inst = Instance(P=P, m=m, v=v, f=f, b=b)
        res = simulate(generate("interleaved-short", inst))
        assert res.valid, (P, m, v, f, b)
        assert res.makespan <= simulate(generate("interleaved", inst)).makespan, (P, m, v, f, b)
        g = len(rounds_of(P, m)[0])
        assert res.peak_memory == [min(v * m, (v - 1) * g + P - p) for p in range(P)]
        if m % P == 0:
            assert res.makespan == (v * m + P - 1) * (f + b) == lower_bound(inst).value
            assert res.makespan == lower_bound(inst.with_(K=v * P)).value, (P, m, v, f, b)


def test_interleaved_grouped_has_no_deadlock_from_half_P_and_smaller_rounds_hold_less():
    """interleaved_grouped(group): valid for every group in max(1, floor(P/2))..P (the
    documented range), peak min(vm, (v-1)g + P - p), never faster than at a larger group, the
    group P being interleaved-short itself; outside the range a clear error."""
    from schedules.generators.common import GeneratorError
    from schedules.generators.interleaved import interleaved_grouped, rounds_of
    for P, v, m in itertools.product(range(1, 10), (2, 3), range(1, 33)):
        if m > 4 * P:
            continue
        inst = Instance(P=P, m=m, v=v, f=1, b=2)
        last = None
        low = max(1, P // 2)
        for group in range(P, low - 1, -1):
            sched = interleaved_grouped(inst, group)
            res = simulate(sched)
            assert res.valid, (P, v, m, group)
            g = len(rounds_of(group, m)[0])
            assert res.peak_memory == [min(v * m, (v - 1) * g + P - p) for p in range(P)]
            if group == P:
                assert sched.orders == generate("interleaved-short", inst).orders
            else:
                assert res.makespan >= last, (P, v, m, group)
            last = res.makespan
        for bad in (low - 1, P + 1):
            with pytest.raises(GeneratorError, match="floor"):
                interleaved_grouped(inst, bad)


def test_interleaved_zb_groups_and_deferrals_have_no_deadlock_and_the_stated_peak():
    """interleaved_zb(group, deferred): valid for every group in floor(P/2)..P and deferring
    p, p // 2 or no W on GPU p; peak min(vm, (v-1)g + P - p + deferred[p]); the defaults are
    torch's order; bad parameters get a clear error."""
    from schedules.generators.common import GeneratorError
    from schedules.generators.interleaved import rounds_of
    from schedules.generators.zero_bubble import interleaved_zb
    for P, v, m in itertools.product(range(2, 9), (2, 3), range(1, 33)):
        if m > 4 * P:
            continue
        inst = Instance(P=P, m=m, v=v, f=1, b_I=1, b_W=1)
        assert interleaved_zb(inst, group=P, deferred=list(range(P))).orders == \
            interleaved_zb(inst).orders
        for group in range(max(1, P // 2), P + 1):
            for deferred in (list(range(P)), [p // 2 for p in range(P)], [0] * P):
                res = simulate(interleaved_zb(inst, group=group, deferred=deferred))
                assert res.valid, (P, v, m, group, deferred)
                g = len(rounds_of(group, m)[0])
                assert res.peak_memory == [min(v * m, (v - 1) * g + P - p + deferred[p])
                                           for p in range(P)], (P, v, m, group, deferred)
    inst = Instance(P=8, m=16, v=2, f=1, b_I=1, b_W=1)
    with pytest.raises(GeneratorError, match="floor"):
        interleaved_zb(Instance(P=1, m=2, v=2, f=1, b_I=1, b_W=1), group=0)
    for kw, word in (({"group": 3}, "floor"), ({"group": 9}, "floor"),
                     ({"deferred": [1] * 7}, "deferred"), ({"deferred": [-1] * 8}, "deferred")):
        with pytest.raises(GeneratorError, match=word):
            interleaved_zb(inst, **kw)


def test_interleaved_bubble_larger_when_m_below_P():
    """m < P (one short round): measured (v m + P - 1)(f + b) + (v - 1)(P - m)(f + b)."""
    for P, m, v in itertools.product(GRID_P, GRID_M, (2, 3)):
        if m < P:
            res = simulate(generate("interleaved", Instance(P=P, m=m, v=v)))
            assert res.makespan == (v * m + P - 1 + (v - 1) * (P - m)) * 3, (P, m, v)


def test_looped_bfs_makespan_and_memory():
    """Looped placement, m >= P: (vm + P - 1)(f + b) (hand-derived: no GPU waits between
    waves); peak vm everywhere."""
    for P, m, v, (f, b) in itertools.product(GRID_P, range(1, 17), (1, 2, 3), FUSED[:2]):
        res = simulate(generate("looped-bfs", Instance(P=P, m=m, v=v, f=f, b=b)))
        assert res.peak_memory == [v * m] * P
        if m >= P:
            assert res.makespan == (v * m + P - 1) * (f + b), (P, m, v)


SPLIT = [(1, 1, 1), (1, 2, 1), (2, 2, 1), (2, 3, 1), (3, 2, 2), (2, 1, 1), (3, 1, 1)]


def test_zb_h1_bubble_and_memory():
    """ZB-H1: per-rank and global bubble (P-1)(f + b_I - b_W) when m >= P and b_W <= f;
    peak min(P, m) on every GPU."""
    for P, m, (f, bi, bw) in itertools.product(GRID_P, GRID_M, SPLIT):
        res = simulate(generate("zb-h1", Instance(P=P, m=m, f=f, b_I=bi, b_W=bw)))
        assert res.peak_memory == [min(P, m)] * P
        if m >= P:
            assert per_rank_bubble(res) == (P - 1) * (f + bi - bw), (P, m, f, bi, bw)
            assert global_bubble(res) == (P - 1) * (f + bi - bw)


def test_zb_h1_deviation_when_b_W_exceeds_f():
    """With b_W > f the published (P-1)(f + b_I - b_W) is not reached (measured: (P-1) b_I
    at f = b_I = 1, b_W = 2): reported in docs/schedules.md."""
    res = simulate(generate("zb-h1", Instance(P=4, m=8, f=1, b_I=1, b_W=2)))
    assert global_bubble(res) > (4 - 1) * (1 + 1 - 2)


def test_interleaved_zb_bubble_and_memory():
    """Interleaved zero bubble (no figure in REFERENCES.md; ZB-H1's holds): global bubble
    (P-1)(f + b_I - b_W) when m >= P and b_W <= f, v = 2, 3; peak (v-1)g + P (capped by vm)."""
    from schedules.generators.interleaved import rounds_of
    for P, m, v, (f, bi, bw) in itertools.product(GRID_P, GRID_M, (2, 3), SPLIT[:4]):
        if m < P:
            continue
        res = simulate(generate("interleaved-zb", Instance(P=P, m=m, v=v, f=f, b_I=bi, b_W=bw)))
        assert global_bubble(res) == (P - 1) * (f + bi - bw), (P, m, v, f, bi, bw)
        g = len(rounds_of(P, m)[0])
        assert max(res.peak_memory) == min(v * m, (v - 1) * g + P)


def test_zb_h2_bubble_and_memory():
    """ZB-H2, m >= 2P: per-rank bubble max(0, (P-1)(f + b_I - 2 b_W)) (published; 0 when
    f = b_I = b_W) on the triples where it holds; global makespan
    m(f+b) + (P-1) max(f, f + b_I - 2b_W) on all tested durations (the first term is GPU P-1's
    start delay, hand-derived); peak min(2P-1, m) on every GPU."""
    holds = {(1, 1, 1), (1, 2, 1), (2, 2, 1), (2, 3, 1), (2, 1, 1), (3, 1, 1), (1, 1, 2)}
    for P, m, (f, bi, bw) in itertools.product(GRID_P, GRID_M, SPLIT + [(1, 1, 2), (1, 2, 2)]):
        res = simulate(generate("zb-h2", Instance(P=P, m=m, f=f, b_I=bi, b_W=bw)))
        assert res.peak_memory == [min(2 * P - 1, m)] * P
        if m >= 2 * P:
            assert global_bubble(res) == (P - 1) * max(f, f + bi - 2 * bw), (P, m, f, bi, bw)
            if (f, bi, bw) in holds:
                assert per_rank_bubble(res) == max(0, (P - 1) * (f + bi - 2 * bw))


def test_zb_h2_per_rank_deviation():
    """Measured deviations from the published per-rank bubble (docs/schedules.md)."""
    for f, bi, bw, expected in ((1, 2, 2, 0), (3, 2, 2, 2)):
        res = simulate(generate("zb-h2", Instance(P=3, m=6, f=f, b_I=bi, b_W=bw)))
        assert max(0, (3 - 1) * (f + bi - 2 * bw)) == expected
        assert per_rank_bubble(res) > expected


def test_zb_2p_memory_and_zero_bubble():
    """ZB-2p: at most 2P live activations on every GPU, any durations; zero per-rank bubble
    when f = b_I = b_W and m >= 2P (the paper's ZB2P figure)."""
    for P, m in itertools.product(range(1, 7), range(1, 19)):
        for dur in ((1, 1, 1), (2, 3, 1), (1, 3, 2), (3, 1, 1)):
            res = simulate(generate("zb-2p", Instance(P=P, m=m, f=dur[0], b_I=dur[1],
                                                      b_W=dur[2])))
            assert res.valid and max(res.peak_memory) <= 2 * P, (P, m, dur)
            if dur == (1, 1, 1) and m >= 2 * P:
                assert per_rank_bubble(res) == 0, (P, m)


def test_zb_auto_memory_limit():
    """The heuristic under other limits: ZB-1p (P activations) fits P; a limit of 1 still
    builds a valid schedule (a W frees the slot before each forward)."""
    from schedules.generators.zb_auto import zb_auto

    for P, m, limit in ((4, 8, 4), (3, 9, 1), (5, 10, 7)):
        res = simulate(zb_auto(Instance(P=P, m=m, b_I=1, b_W=1), limit))
        assert res.valid and max(res.peak_memory) <= limit, (P, m, limit)


def test_zbv_zero_bubble():
    """ZB-V, f = b_I = b_W, m >= 2P: per-rank bubble 0 on every GPU; global makespan
    2m(f+b) + (P-1)f; peak min(2P, 2m) stage activations (1F1B's P microbatches of 2 stages)."""
    for P, m in itertools.product(GRID_P, GRID_M):
        for unit in (1, 2):
            res = simulate(generate("zbv", Instance(P=P, m=m, v=2, placement="vshape", f=unit,
                                                    b_I=unit, b_W=unit)))
            assert max(res.peak_memory) == min(2 * P, 2 * m)
            if m >= 2 * P:
                assert per_rank_bubble(res) == 0, (P, m)
                assert global_bubble(res) == (P - 1) * unit


def one_f_one_b_bubble(P, m, f, b):
    """1F1B's bubble on the same model (one stage per GPU of durations 2f, 2b)."""
    return (P - 1) * 2 * (f + b)


@pytest.mark.parametrize("name,memory,lo,hi", [("v-min", v_min_memory, "1/2", "7/10"),
                                              ("v-half", v_half_memory, "1/2", "4/7")])
def test_controllable_memory_figures(name, memory, lo, hi):
    """V-Min / V-Half (f = b_I = b_W, m = 3P, P = 2..8): peak exactly 2((P+4)//3) / 2((P+2)//2)
    stage activations (the paper's (P+4)//3 and (P+2)//2 microbatches); global bubble between
    the stated fractions of 1F1B's ("about 2/3" and "about 1/2" published)."""
    for P in range(2, 9):
        m = 3 * P
        res = simulate(generate(name, Instance(P=P, m=m, v=2, placement="vshape", b_I=1, b_W=1)))
        assert max(res.peak_memory) == memory(P), (P, res.peak_memory)
        ratio = global_bubble(res) / one_f_one_b_bubble(P, m, 1, 2)
        assert Fraction(lo) <= ratio <= Fraction(hi), (P, ratio)


def test_v_min_below_v_half_below_zbv_memory():
    for P in range(3, 9):
        inst = Instance(P=P, m=3 * P, v=2, placement="vshape", b_I=1, b_W=1)
        peaks = [max(simulate(generate(n, inst)).peak_memory) for n in ("v-min", "v-half", "zbv")]
        assert peaks[0] <= peaks[1] < peaks[2], (P, peaks)


def test_dualpipev_memory_and_makespan():
    """DualPipeV, m >= 2P, f = b_I = b_W: peak 2P + 1 stage activations on every GPU (the
    DualPipe README's figure); global makespan 2m(f+b) + (P-1)f."""
    for P in GRID_P:
        for m in range(2 * P, 25):
            res = simulate(generate("dualpipev", Instance(P=P, m=m, v=2, placement="vshape",
                                                          b_I=1, b_W=1)))
            assert res.peak_memory == [2 * P + 1] * P
            assert global_bubble(res) == P - 1


def test_dualpipev_fb_is_torchs_overlapped_order_and_stays_valid():
    """dualpipev-fb (torch's OVERLAP_F_B chunks as F&B ops): valid, the same ops as dualpipev,
    peak at most 2P + 1 like it (an F&B releases and stores at its end), above the bound OV1."""
    from bounds import lower_bound

    for P in range(1, 6):
        for m in range(2 * P, 3 * P + 2):
            for d in (None, 3, 2, Fraction(3, 2)):
                kw = {} if d is None else {"d_FB": d}
                inst = Instance(P=P, m=m, v=2, placement="vshape", b_I=1, b_W=1, **kw)
                sched = generate("dualpipev-fb", inst)
                res = simulate(sched)
                assert res.valid, (P, m, d, res.errors[:2])
                plain = generate("dualpipev", inst)
                assert [sorted(a) for a in sched.orders] == [sorted(a) for a in plain.orders]
                assert max(res.peak_memory) <= 2 * P + 1
                assert lower_bound(inst).value <= res.makespan


def test_hanayo_memory():
    """v = 2 (V-shape 1F1B): peak min(2P, 2m) like ZB-V; v >= 3: at most the cap 2vP."""
    for P, m, v in itertools.product(range(1, 7), (1, 4, 9), (2, 3)):
        res = simulate(generate("hanayo", Instance(P=P, m=m, v=v, placement="vshape")))
        if v == 2:
            assert max(res.peak_memory) == min(2 * P, 2 * m)
        else:
            assert max(res.peak_memory) <= 2 * v * P


# ----------------------------------------------------------------------- shared mechanisms
def test_list_scheduler_respects_cap_and_never_stalls():
    for P, m, v, cap in itertools.product((1, 3, 5), (1, 4, 7), (1, 2, 3), (1, 2, 3, 5)):
        if cap < v:
            with pytest.raises(GeneratorError, match="below v"):
                list_schedule(Instance(P=P, m=m, v=v), cap=[cap] * P)
            continue
        for placement in ("looped", "vshape"):
            inst = Instance(P=P, m=m, v=v, placement=placement, b_I=1, b_W=2)
            res = simulate(list_schedule(inst, cap=[cap] * P, split=True))
            assert res.valid and max(res.peak_memory) <= cap


def test_list_scheduler_timing_is_asap():
    """The greedy never idles with a ready op, so its own times are the ASAP ones: the makespan
    of 1F1B's rule (cap P-p) equals 1F1B's (m+P-1)(f+b)."""
    for P, m in itertools.product(range(1, 7), range(1, 13)):
        inst = Instance(P=P, m=m)
        res = simulate(list_schedule(inst, cap=[P - p for p in range(P)]))
        assert res.makespan == (m + P - 1) * 3


def test_block_schedule_fused_and_looped():
    for P, m, v in itertools.product((1, 2, 4), (1, 5), (1, 2)):
        for placement in ("looped", "vshape"):
            res = simulate(block_schedule(Instance(P=P, m=m, v=v, placement=placement, f=2, b=3)))
            assert res.valid


# ------------------------------------------------------------------------------------ CLI
def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "pipebounds", *args], capture_output=True,
                          text=True, timeout=60)


def test_cli_generate_list_and_json():
    import json

    from pipebounds.cli import main
    out = run_cli("generate", "--list")
    assert out.returncode == 0
    for name in CLI_NAMES:
        assert name in out.stdout
    out = run_cli("generate", "zb-h1", "-P", "3", "-m", "6", "--b-input", "1", "--b-weight", "1",
                  "-K", "2", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["source"].startswith("zb-h1") and doc["K"] == 2
    from schedules import schedule_from_document
    res = simulate(schedule_from_document(doc))
    assert res.valid and max(res.peak_memory) <= 2
    assert main(["generate", "1f1b", "-P", "2", "-m", "3"]) == 0


@pytest.mark.parametrize("args", [("generate", "zbv", "-P", "2", "-m", "4"),
                                  ("generate", "nosuch", "-P", "2", "-m", "4"),
                                  ("generate", "1f1b"),
                                  ("generate", "-P", "2", "-m", "2")])
def test_cli_generate_bad_input_exits_2(args):
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stderr.startswith("error:") and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_explicit_stage_to_rank():
    """A permuted single-wave placement and an explicit list equal to the V placement work."""
    perm = Instance(P=4, m=6, stage_to_rank=[2, 0, 3, 1], b_I=1, b_W=1)
    for name in ("gpipe", "1f1b", "zb-h1", "zb-h2", "zb-2p", "looped-bfs"):
        res = simulate(generate(name, perm))
        assert res.valid, (name, res.errors[:2])
    assert simulate(generate("1f1b", perm)).makespan == (6 + 4 - 1) * 3
    vee = Instance(P=3, m=6, stage_to_rank=[0, 1, 2, 2, 1, 0], b_I=1, b_W=1)
    assert vee.placement == "vshape"  # a list equal to a named placement carries its name
    for name in ("zbv", "v-min", "v-half", "dualpipev", "hanayo"):
        assert simulate(generate(name, vee)).valid
    with pytest.raises(GeneratorError, match="looped"):
        generate("interleaved", vee)
