"""The bidirectional model (MODEL.md, *Directions*: ``directions = 2``), the ``dualpipe`` family
(deepseek-ai/DualPipe) and theorem D1 (docs/theory.md A.12).

Checked against hand-timed cases, the independent simulator of tests/reference_sim.py (which
reads the GPU of each op from the order it is listed in, so it needs nothing of the directions
extension), the DualPipeV family (DualPipe "cut in half": the same eight steps on ``P/2`` GPUs),
exact optima of tiny instances (proofs_checks/directions.py) and the CLI contract.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from bounds import lower_bound
from pipebounds.cli import main
from reference_sim import reference_simulate
from schedules import Instance, Op, Schedule, simulate
from schedules.generators import GENERATORS, GeneratorError, generate
from schedules.generators.dualpipev import dualpipev
from schedules.instance import DirectionsError, InstanceError
from schedules.io import document_from_schedule, schedule_from_document
from strategies import join_overlaps


def two(P=2, m=2, **kw) -> Instance:
    return Instance(P=P, m=m, directions=2, **kw)


HAND = {0: ["0F0", "1F1", "1B1", "0B0"], 1: ["0F1", "1F0", "1B0", "0B1"]}
"""P = 2, m = 2: microbatch 0 down (stage 0 on GPU 0, stage 1 on GPU 1), microbatch 1 up (stage 0
on GPU 1, stage 1 on GPU 0)."""


# ------------------------------------------------------------------------------ the model
def test_instance_field_and_its_conditions():
    inst = two(P=4, m=8)
    assert inst.directions == 2 and Instance(P=4, m=8).directions == 1
    assert [inst.copy_of(j) for j in range(8)] == [0] * 4 + [1] * 4
    assert [inst.gpu_of(s, 0) for s in range(4)] == [0, 1, 2, 3]
    assert [inst.gpu_of(s, 7) for s in range(4)] == [3, 2, 1, 0]
    assert inst.held_stages(1) == ((0, 1), (1, 2))
    assert Instance.from_dict(inst.to_dict()) == inst and inst.to_dict()["directions"] == 2
    assert "directions" not in Instance(P=4, m=8).to_dict()  # the contract's output unchanged
    for kw, words in ((dict(m=7), "even m"), (dict(v=2), "v=1"), (dict(directions=3), "1 or 2"),
                      (dict(stage_to_rank=[1, 0, 2, 3]), "default placement")):
        with pytest.raises(InstanceError, match=words):
            Instance(**{"P": 4, "m": 8, "directions": 2, **kw})


def test_stage_only_queries_refuse_rather_than_answer_for_one_copy():
    inst = two(P=4, m=8)
    with pytest.raises(DirectionsError, match="gpu_of"):
        inst.gpu(1)
    with pytest.raises(DirectionsError, match="held_stages"):
        inst.stages_of(1)


def test_hand_timed_case_and_the_reference_simulator():
    for c, makespan in ((0, 6), (1, 8)):
        sched = Schedule.from_strings(two(f=1, b=2, c=c), HAND)
        res, ref = simulate(sched), reference_simulate(sched)
        assert res.valid, res.errors
        # c = 0: 0F0, 0F1 [0,1]; 1F1, 1F0 [1,2]; 1B1, 1B0 [2,4]; 0B0, 0B1 [4,6]
        # c = 1: the second forwards at [2,3], the B's at [3,5], the last ones at [6,8]
        assert res.makespan == ref.makespan == makespan
        assert res.peak_memory == ref.peak == [2, 2]
        times = res.op_times()
        assert times[Op(0, "B", 0)] == (makespan - 2, makespan)
        assert lower_bound(sched.instance).value == makespan  # D1's chain term: tight here


def test_placement_names_the_copy():
    bad = {0: ["0F0", "0B0"], 1: ["1F0", "1B0", "1F1", "1B1", "0F1", "0B1"]}
    res = simulate(Schedule.from_strings(two(), bad))
    msgs = [v.message for v in res.violations if v.rule == "placement"]
    assert msgs and any("1F1" in x and "copy 1, microbatch 1" in x and "GPU 0" in x for x in msgs)
    # the hand orders read with one direction put copy 1 on the wrong GPUs
    one = simulate(Schedule.from_strings(Instance(P=2, m=2, b=2), HAND))
    assert {v.rule for v in one.violations} == {"placement"}


def test_orders_documents_round_trip():
    sched = generate("dualpipe", two(P=4, m=8, b_I=1, b_W=1, d_FB=2))
    doc = document_from_schedule(sched)
    assert doc["directions"] == 2
    back = schedule_from_document(json.loads(json.dumps(doc)))
    assert back.instance == sched.instance and back.orders == sched.orders
    assert back.overlaps == sched.overlaps
    assert "directions" not in document_from_schedule(generate("1f1b", Instance(P=2, m=2)))


def test_a_communication_order_is_refused():
    sched = Schedule.from_strings(two(), HAND)
    with pytest.raises(DirectionsError, match="comms"):
        Schedule(sched.instance, sched.orders, "", {0: ["0F0"], 1: []})


# ----------------------------------------------------------------------- random schedules
def random_bidirectional(inst: Instance, rng: random.Random) -> Schedule:
    """A random valid order: ops appended one at a time in a random topological order (each
    op's predecessors already placed), each on its own GPU, so no order deadlocks. Split
    instances draw a fused ``B`` or ``I`` and ``W`` per pair."""
    P, m = inst.P, inst.m
    form = {(s, j): ("B" if not inst.split or rng.random() < 0.3 else "IW")
            for s in range(P) for j in range(m)}
    done: set = set()
    orders: list[list[Op]] = [[] for _ in range(P)]

    def grad(s, j):
        return Op(s, "B" if form[(s, j)] == "B" else "I", j)

    def ready(op):
        s, j = op.stage, op.microbatch
        if op.kind == "F":
            return s == 0 or Op(s - 1, "F", j) in done
        if op.kind in ("B", "I"):
            return (Op(s, "F", j) in done if s == P - 1 else grad(s + 1, j) in done)
        return Op(s, "I", j) in done

    todo = [Op(s, k, j) for s in range(P) for j in range(m)
            for k in (("F", "B") if form[(s, j)] == "B" else ("F", "I", "W"))]
    while todo:
        op = rng.choice([x for x in todo if ready(x)])
        todo.remove(op)
        done.add(op)
        orders[inst.gpu_of(op.stage, op.microbatch)].append(op)
    return Schedule(inst, tuple(map(tuple, orders)), "random")


SIZES = st.sampled_from([(1, 2), (2, 2), (2, 4), (3, 2), (3, 4), (4, 4), (4, 6)])
DURS = st.sampled_from([dict(f=1, b=2), dict(f=2, b=1), dict(f=1, b_I=1, b_W=1),
                        dict(f=Fraction(1, 2), b_I=2, b_W=1), dict(f=1, b_I=1, b_W=2)])


@given(SIZES, DURS, st.sampled_from([0, 1]), st.sampled_from([None, Fraction(1, 2), 1]),
       st.integers(0, 10**6))
@settings(max_examples=60, deadline=None)
def test_bound_never_above_a_random_schedule_and_the_simulators_agree(size, durs, c, ratio,
                                                                        seed):
    rng = random.Random(seed)
    P, m = size
    inst = two(P=P, m=m, c=c, **durs)
    sched = random_bidirectional(inst, rng)
    if ratio is not None:  # F&B ops: d = ratio * (f + b) (d_FI likewise), some pairs joined
        kw = {"d_FB": ratio * (inst.f + inst.b)}
        if inst.split:
            kw["d_FI"] = ratio * (inst.f + inst.b_I)
        sched = join_overlaps(sched.with_instance(inst.with_(**kw)), lambda n: rng.randrange(n))
    res, ref = simulate(sched), reference_simulate(sched)
    assert res.valid, res.errors
    assert not ref.deadlock and res.makespan == ref.makespan and res.busy == ref.busy
    assert res.peak_memory == ref.peak
    lb = lower_bound(sched.instance)
    assert lb.value <= res.makespan and not lb.exact
    assert set(lb.term_ids) == {"D1"}


# ------------------------------------------------------------------------------ the family
GRID = [(P, m) for P in (2, 4, 6, 8) for m in range(2 * P, 3 * P + 3, 2)]
DURATIONS = [dict(b_I=1, b_W=1), dict(f=2, b_I=3, b_W=1), dict(f=1, b_I=1, b_W=2), dict(b=2),
             dict(f=2, b=3), dict(b_I=1, b_W=1, d_FB=2), dict(b_I=1, b_W=1, d_FB=3),
             dict(f=2, b_I=2, b_W=1, d_FB=4), dict(b=3, d_FB=Fraction(5, 2))]


@pytest.mark.parametrize("durs", DURATIONS, ids=str)
def test_dualpipe_valid_mirrored_and_cut_in_half(durs):
    for P, m in GRID:
        inst = two(P=P, m=m, **durs)
        sched = generate("dualpipe", inst)
        res = simulate(sched)
        assert res.valid, (P, m, durs, res.errors[:3])
        assert sched.source == "dualpipe" and (sched.overlaps is not None) == ("d_FB" in durs)
        # GPU r and GPU P-1-r run the same steps with the copies swapped (copy 0 stage s and
        # copy 1 stage s: GPU s and GPU P-1-s)
        half = m // 2
        for r in range(P):
            mirror = [Op(op.stage, op.kind, (op.microbatch + half) % m)
                      for op in sched.orders[r]]
            assert mirror == list(sched.orders[P - 1 - r]), (P, m, r)
        # DualPipeV is DualPipe cut in half: the same timing on P/2 GPUs with m/2 microbatches
        if inst.split:
            v = Instance(P=P // 2, m=half, v=2, placement="vshape", **durs)
            assert simulate(dualpipev(v, overlap="d_FB" in durs)).makespan == res.makespan
        lb = lower_bound(inst)
        assert lb.value <= res.makespan and not lb.exact
        peak = P + 1  # DualPipe README: PP + 1 activations per device
        assert (res.peak_memory == [peak] * P) if "d_FB" not in durs else max(res.peak_memory) <= peak


def test_the_reference_simulator_agrees_on_dualpipe():
    for P, m in ((2, 4), (4, 8), (4, 10), (6, 12)):
        for durs in (dict(b_I=1, b_W=1), dict(b=2, c=1), dict(b_I=1, b_W=1, d_FB=2)):
            sched = generate("dualpipe", two(P=P, m=m, **durs))
            res, ref = simulate(sched), reference_simulate(sched)
            assert ref.makespan == res.makespan and ref.peak == res.peak_memory


@pytest.mark.parametrize("P", [4, 8])
def test_the_published_figure_structure(P):
    """The DualPipe figure (README: 8 ranks, 20 microbatches; and P = 4): GPU ``r`` at chain
    position ``h = min(r, P-1-r)`` runs ``P`` forwards before its first backward (the two middle
    GPUs ``P + 1``: their first main-step pair is a forward then a backward, not one F&B op), of
    which ``P - h - 1`` (middle: ``P - h``) of the direction in which it sits at position ``h``;
    its first backward is of the other direction; it runs ``m/2 - P + h + 1`` pairs of F&B ops
    in the main step (the middle GPUs one fewer), then ``P/2 - h - 1`` more."""
    m = 20
    sched = generate("dualpipe", two(P=P, m=m, b_I=1, b_W=1, d_FB=2))
    for r, seq in enumerate(sched.orders):
        h = min(r, P - 1 - r)
        near = 0 if r < P // 2 else 1  # the copy in which GPU r sits at position h
        middle = h == P // 2 - 1
        first_b = next(i for i, op in enumerate(seq) if op.kind in ("B", "I"))
        warm = seq[:first_b]
        assert all(op.kind == "F" for op in warm) and len(warm) == P + middle
        assert sum(sched.instance.copy_of(op.microbatch) == near for op in warm) == P - h - 1 + middle
        assert sched.instance.copy_of(seq[first_b].microbatch) != near
        joined = len(sched.overlaps[r])
        main_pairs = m // 2 - P + h + 1
        assert joined == 2 * main_pairs - middle + (P // 2 - h - 1), (r, joined)
    res = simulate(sched)
    assert res.valid and max(res.peak_memory) <= P + 1


def test_dualpipe_reaches_the_bound_at_equal_costs():
    """f = b_I = b_W, no F&B: T = m(f+b) + (P/2 - 1) f = D1, so the schedule is optimal (and
    the fused family at P = 4: (m + 1)(f + b))."""
    for P, m in GRID:
        inst = two(P=P, m=m, b_I=1, b_W=1)
        res = simulate(generate("dualpipe", inst))
        assert res.makespan == lower_bound(inst).value == 3 * m + (P // 2 - 1)
    for m in (8, 10, 12):
        inst = two(P=4, m=m, b=2)
        assert simulate(generate("dualpipe", inst)).makespan == lower_bound(inst).value == 3 * (m + 1)


def test_refusals_name_the_reason():
    for inst, words in ((two(P=3, m=6), "even number of GPUs"), (two(P=4, m=6), "m >= 2P"),
                        (Instance(P=4, m=8), "needs directions=2")):
        with pytest.raises(GeneratorError, match=words):
            generate("dualpipe", inst)
    with pytest.raises(GeneratorError, match="fitting to K=3 .* holds 5 activations"):
        generate("dualpipe", two(P=4, m=8, K=3))
    fits = generate("dualpipe", two(P=4, m=8, K=5))  # a K that does not bind needs no fitting
    assert fits.instance.K == 5 and simulate(fits).valid
    for name in GENERATORS:
        if name != "dualpipe":
            with pytest.raises(GeneratorError, match="does not support directions=2"):
                generate(name, two(P=4, m=8, b_I=1, b_W=1))


# ------------------------------------------------------------------------------ theorem D1
def test_D1_holds_against_exact_optima_and_planted_errors_are_caught(monkeypatch):
    from bounds import directions as d1
    from proofs_checks.directions import compare, instances

    # the fused part of P <= 2, m = 2 (a second); the whole range runs in proofs_checks
    small = [i for i in instances("quick") if i.P <= 2 and i.m == 2 and not i.split]
    assert len(small) == 28
    assert compare(lower_bound, small).ok
    real = d1.parts

    def far_end(inst):  # the head counted from the far end of the chain: ceil((P-1)/2)
        x = real(inst)
        return {**x, "a": Fraction(inst.P // 2)}

    def no_saving(inst):  # F&B ops assumed to save nothing
        return {**real(inst), "sigma": Fraction(0)}

    for planted in (far_end, no_saving):
        monkeypatch.setattr(d1, "parts", planted)
        res = compare(lower_bound, small)
        assert not res.ok and "> OPT" in res.detail, planted.__name__
    monkeypatch.setattr(d1, "parts", real)


def test_D1_is_refused_for_per_stage_durations():
    with pytest.raises(DirectionsError, match="per-stage"):
        lower_bound(two(P=2, m=2, f=[1, 2], b=[2, 2]))


# ------------------------------------------------------------------------------ the CLI
def cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_generate_simulate_bound_gantt(tmp_path, capsys):
    flags = ("-P", "4", "-m", "8", "--directions", "2", "--b-input", "1", "--b-weight", "1")
    code, out, err = cli(capsys, "generate", "dualpipe", *flags, "--json")
    assert code == 0 and err == ""
    path = tmp_path / "dp.json"
    path.write_text(out)
    assert json.loads(out)["directions"] == 2
    code, out, _ = cli(capsys, "simulate", str(path), "--json")
    res = json.loads(out)
    assert code == 0 and res["valid"] and res["makespan"] == 25 and res["peak_memory"] == [5] * 4
    assert res["lower_bound"] == 25
    code, out, _ = cli(capsys, "bound", *flags, "--json")
    res = json.loads(out)
    assert code == 0 and res["lower_bound"] == 25 and res["exact"] is False
    assert {t["id"] for t in res["terms"]} == {"D1"}
    code, _, err = cli(capsys, "gantt", str(path), "-o", str(tmp_path / "dp.png"))
    assert code == 0 and (tmp_path / "dp.png").stat().st_size > 0


@pytest.mark.parametrize("args,words", [
    (("solve", "-P", "2", "-m", "2", "--directions", "2", "--time-limit", "1"), "directions=2"),
    (("best", "-P", "2", "-m", "4", "-K", "2", "--directions", "2"), "directions=2"),
    (("frontier", "-P", "2", "-m", "2", "--directions", "2"), "directions=2"),
    (("synthesize", "-P", "2", "-m", "2", "-K", "1", "--directions", "2", "--time-limit", "1"),
     "directions=2"),
    (("generate", "1f1b", "-P", "2", "-m", "2", "--directions", "2"), "directions=2"),
    (("generate", "dualpipe", "-P", "2", "-m", "4", "-K", "2", "--directions", "2"),
     "directions=2"),
    (("bound", "-P", "2", "-m", "3", "--directions", "2"), "even m"),
])
def test_cli_refusals_are_one_line_and_exit_2(capsys, args, words):
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == "" and words in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("args", [("remat", "{doc}", "-K", "1"), ("simulate", "{doc}", "--p2p",
                                                                  "blocking"),
                                  ("export", "{doc}", "--format", "torch-csv", "-o", "{doc}.csv")])
def test_cli_file_commands_refuse(tmp_path, capsys, args):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(document_from_schedule(Schedule.from_strings(two(), HAND))))
    code, out, err = cli(capsys, *(a.format(doc=path) for a in args))
    assert code == 2 and "directions=2" in err and len(err.strip().splitlines()) == 1, err


def test_the_first_steps_read_off_the_published_figure():
    """deepseek-ai/DualPipe README, images/dualpipe.png (8 ranks, 10 microbatches each way;
    the reverse direction's ids omitted there: here copy 1 = microbatches 10..19), read cell by
    cell: device 0: forwards 0..6, then three reverse F, I, W triples, a reverse F, then the
    overlapped 7 & reverse backward; device 5: three reverse forwards around 0, 1, 2, then
    I0 W0 F3 and the overlapped reverse F & B1; device 7: seven reverse forwards, the triples
    F I W of 0, 1, 2, then F3 and the overlapped reverse F & B3."""
    sched = generate("dualpipe", two(P=8, m=20, b_I=1, b_W=1, d_FB=3))
    acts = [sched.actions(r) for r in range(8)]
    assert acts[0][:18] == ["0F0", "0F1", "0F2", "0F3", "0F4", "0F5", "0F6",
                            "7F10", "7I10", "7W10", "7F11", "7I11", "7W11", "7F12", "7I12",
                            "7W12", "7F13", "0F7&7B13"]
    assert acts[5][:12] == ["2F10", "2F11", "2F12", "5F0", "2F13", "5F1", "2F14", "5F2",
                            "5I0", "5W0", "5F3", "2F15&5B1"]
    assert acts[7][:18] == ["0F10", "0F11", "0F12", "0F13", "0F14", "0F15", "0F16",
                            "7F0", "7I0", "7W0", "7F1", "7I1", "7W1", "7F2", "7I2", "7W2",
                            "7F3", "0F17&7B3"]


def test_parameter_bytes_count_both_copies():
    """The bytes model's static memory from a profile: a bidirectional GPU holds the parameters
    of two stages (DualPipe README: parameters 2x). (pipebounds.torch imports torch, which
    the test extras install; as in the project's other torch tests it is needed here.)"""
    pytest.importorskip("torch")
    from pipebounds.torch.profile import memory_object

    profile = {"param_bytes": [10, 20, 30, 40], "activation": [1] * 4,
               "kept_after_input": [1] * 4}
    one = memory_object(Instance(P=4, m=8), profile)["static"]
    both = memory_object(two(P=4, m=8), profile)["static"]
    assert one == [10, 20, 30, 40] and both == [10 + 40, 20 + 30, 30 + 20, 40 + 10]


def test_torch_execution_refuses(tmp_path, capsys):
    pytest.importorskip("torch")
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(document_from_schedule(Schedule.from_strings(two(), HAND))))
    code, out, err = cli(capsys, "execute", str(path), "--world-size", "2")
    assert code == 2 and "directions=2" in err and len(err.strip().splitlines()) == 1, err


def test_D1_takes_per_stage_overlapped_durations():
    """d_FB given per stage (by the forward part's stage): the least one counts, so the bound
    is the one of the uniform instance with that value, and the family stays above it."""
    inst = two(P=4, m=8, b_I=1, b_W=1, d_FB=[2, 3, 3, 2])
    low = two(P=4, m=8, b_I=1, b_W=1, d_FB=2)
    assert lower_bound(inst).value == lower_bound(low).value
    res = simulate(generate("dualpipe", inst))
    assert res.valid and lower_bound(inst).value <= res.makespan


def test_constructions_give_nothing_for_two_directions():
    """The exact constructions are proven for one direction only: none for directions = 2
    (before this guard the K = 1 construction returned a one-direction schedule)."""
    from pipebounds.constructions import optimal_schedule
    from pipebounds.constructions.single_wave import single_slot_schedule

    for kw in (dict(K=1), dict(K=1, b_I=1, b_W=1), dict(K=None)):
        assert optimal_schedule(two(P=2, m=2, **kw)) is None
    assert single_slot_schedule(two(P=2, m=2, K=1)) is None


def test_a_deadlock_names_the_gpus_of_the_copies():
    """Each GPU waits for the other's backward: GPU 0 for 1B0 (copy 0, GPU 1), GPU 1 for 1B1
    (copy 1: stage 1 is on GPU 0)."""
    orders = {0: ["0F0", "0B0", "1F1", "1B1"], 1: ["0F1", "0B1", "1F0", "1B0"]}
    res = simulate(Schedule.from_strings(two(), orders))
    (dead,) = [v.message for v in res.violations if v.rule == "deadlock"]
    assert "waiting for 1B0 (GPU 1)" in dead and "waiting for 1B1 (GPU 0)" in dead
    assert reference_simulate(Schedule.from_strings(two(), orders)).deadlock


def test_bound_batch_reads_directions(tmp_path, capsys):
    """A --batch line with "directions": 2 takes the per-instance path (the array twin has no
    directions) and gives D1, next to a one-direction line that keeps its own theorems."""
    path = tmp_path / "batch.jsonl"
    path.write_text('{"P": 4, "m": 8, "directions": 2}\n{"P": 4, "m": 8}\n')
    code, out, err = cli(capsys, "bound", "--batch", str(path), "--json")
    rows = json.loads(out)
    assert code == 0 and err == ""
    assert rows[0]["lower_bound"] == 27 and {t["id"] for t in rows[0]["terms"]} == {"D1"}
    assert rows[1]["lower_bound"] == 33 and "D1" not in {t["id"] for t in rows[1]["terms"]}
