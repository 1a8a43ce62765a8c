"""pipebounds.synthesis and ``pipebounds synthesize``: every schedule valid (the simulator and
the independent reference simulator), within K or the byte budget, with the makespan reported,
never above the best family's, never below the bound or a proven optimum."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from schedules import Instance, simulate
from schedules.io import schedule_from_document
from schedules.memory import memory_from_json
from pipebounds.synthesis import SynthesisError, synthesize
from reference_sim import reference_simulate

ROOT = Path(__file__).resolve().parent.parent


def _check(inst, res, budget=None):
    """The result's schedule is valid for ``inst`` under its limit, by both simulators, and has
    the reported makespan; the bound is below it and the status honest."""
    sched = res.schedule
    sim = simulate(sched)
    assert sim.valid, sim.errors[:3]
    assert sim.makespan == res.makespan
    ref = reference_simulate(sched)
    assert not ref.deadlock and ref.makespan == res.makespan
    if budget is None:
        assert sched.instance.K == inst.K
        assert max(ref.order_peak) <= inst.K and max(sim.peak_memory) <= inst.K
    else:
        assert max(ref.peak_bytes) <= budget and max(sim.peak_bytes) <= budget
    assert res.lower_bound <= res.value
    assert (res.status == "optimal") == (res.value == res.lower_bound)
    assert res.gap is None or res.gap >= 1


CASES = [
    Instance(P=4, m=8, K=2, b_I=1, b_W=1),                          # the example
    Instance(P=3, m=6, K=2, f=1, b=2),
    Instance(P=2, m=4, K=2, v=2, placement="vshape", b_I=1, b_W=1),
    Instance(P=2, m=4, K=3, v=2),                                   # looped, fused
    Instance(P=3, m=5, K=1, v=2, placement="vshape"),               # K < v
    Instance(P=4, m=6, K=3, f=[1, 2, 1, 1], b=[2, 3, 2, 2], c="1/2"),  # per-stage, c
    Instance(P=4, m=8, K=4, f="1157/100", b_I="1330/100", b_W="1023/100"),  # profiled ratio
]


@pytest.mark.parametrize("inst", CASES, ids=lambda i: repr(i.to_dict()))
def test_synthesized_schedule_is_valid_and_not_worse_than_the_families(inst):
    from pipebounds.services.best import best, family_schedules
    from schedules.remat import RematError, fit_memory

    res = synthesize(inst, time_limit=2.0, per_family=0.5)
    _check(inst, res)
    fams, _ = family_schedules(inst)
    for name, sched in fams.items():  # fit_memory is deterministic: never beaten
        try:
            fitted = fit_memory(sched, inst.K, polish=False)
        except RematError:
            continue
        r = simulate(fitted.with_instance(inst))
        if r.valid:
            assert res.makespan <= r.makespan, name
    top = best(inst, time_limit=0.5, solve_time_limit=None, families=fams).best
    if top is not None and top.status == "optimal":  # its proven optimum over that order
        assert res.makespan <= top.makespan


def test_byte_budget():
    mem = memory_from_json({"activation": [2, 3, 2, 1], "static": [4, 4, 4, 4], "budget": 12})
    inst = Instance(P=4, m=6, b_I=1, b_W=1, memory=mem)
    res = synthesize(inst, budget_bytes=11, time_limit=2.0, per_family=0.5)
    _check(inst, res, budget=11)
    assert res.schedule.instance.memory.budget == 11


def test_backward_recompute_is_valid_and_skips_the_cpsat_methods():
    inst = Instance(P=3, m=4, K=1, b_I=1, b_W=1)
    res = synthesize(inst, time_limit=2.0, backward=True, per_family=0.5)
    _check(inst, res)


def test_span_objective():
    from schedules.remat_optimal import min_span

    inst = Instance(P=3, m=6, K=3, b_I=1, b_W=1)
    res = synthesize(inst, time_limit=2.0, objective="span", per_family=0.5)
    _check(inst, res)
    assert res.value == min_span(res.schedule)
    assert res.lower_bound == 6 * 3  # the per-GPU work m (f + b)


def test_bad_arguments():
    inst = Instance(P=2, m=2, K=1)
    with pytest.raises(SynthesisError, match="objective"):
        synthesize(inst, objective="bubbles")
    with pytest.raises(SynthesisError, match="split"):
        synthesize(inst, backward=True)
    with pytest.raises(SynthesisError, match="memory model"):
        synthesize(inst.with_(K=None), budget_bytes=3)
    for bad in (0, 1.5, True):
        with pytest.raises(SynthesisError, match="workers"):
            synthesize(inst, workers=bad)


def test_exact_phase_on_two_workers():
    """``workers``: the exact phase's CP-SAT threads (its methods line says so); the result is
    still a valid schedule within K, never below the bound, optimal here (the list schedules
    stop above the bound 54, the exact phase proves it)."""
    inst = Instance(P=2, m=3, K=2, v=2, placement="vshape", f=3, b_I=3, b_W=1)
    res = synthesize(inst, time_limit=6.0, workers=2)
    _check(inst, res)
    assert res.status == "optimal" and res.makespan == 54
    phase = [x for x in res.methods if x.startswith("exact phase")]
    assert len(phase) == 1 and "2 workers" in phase[0]


def test_exact_phase_above_exact_ops_needs_two_workers():
    """Above ``EXACT_OPS`` (480 ops here) the exact phase runs only with two or more workers
    (up to ``EXACT_OPS_THREADS``); either way the schedule is valid within K and never below
    the bound."""
    from pipebounds.synthesis.synthesize import EXACT_OPS, EXACT_OPS_THREADS

    inst = Instance(P=4, m=20, K=4, v=2, b_I=1, b_W=1)
    assert EXACT_OPS < inst.S * inst.m * 3 <= EXACT_OPS_THREADS
    phases = {}
    for workers in (1, 2):
        res = synthesize(inst, time_limit=6.0, workers=workers)
        _check(inst, res)
        phases[workers] = [x for x in res.methods if x.startswith("exact phase")]
    assert phases[1] == ["exact phase skipped: 480 ops > 400"]
    assert len(phases[2]) == 1 and phases[2][0].startswith("exact phase (full CP-SAT")
    assert "2 workers" in phases[2][0]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(P=st.integers(1, 3), m=st.integers(1, 4), K=st.integers(1, 3), v=st.integers(1, 2),
       split=st.booleans(), vshape=st.booleans(), f=st.integers(1, 2), b=st.integers(1, 3))
def test_tiny_instances_reach_the_proven_optimum(P, m, K, v, split, vshape, f, b):
    from pipebounds.search import solve

    kw = dict(b_I=b, b_W=1) if split else dict(b=b)
    inst = Instance(P=P, m=m, K=K, v=v, placement="vshape" if vshape else "looped", f=f, **kw)
    res = synthesize(inst, time_limit=20.0, per_family=0.3)
    _check(inst, res)
    opt = solve(inst, time_limit=5.0, engine="cpsat")
    if opt.status == "optimal":
        assert res.makespan >= opt.makespan  # below a proven optimum would be a bug
        assert res.makespan == opt.makespan  # tiny: the exact phase proves it (and stops)
        assert res.status == "optimal"


# ------------------------------------------------------------------------- command line
def _run(*args, stdin=None, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "pipebounds", *args], cwd=ROOT, env=env,
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def test_cli_json_keys_and_instance_file(tmp_path):
    obj = {"P": 4, "m": 6, "K": 3, "f": [1, 2, 1, 1], "b": [2, 3, 2, 2], "c": "1/2"}
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(obj))
    out = _run("synthesize", "--instance", str(path), "--time-limit", "2", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    for key in ("schedule", "makespan", "makespan_exact", "lower_bound", "lower_bound_exact",
                "gap", "gap_exact", "status", "source", "seconds", "binding"):
        assert key in r
    sched = schedule_from_document(r["schedule"])
    sim = simulate(sched)
    assert sim.valid and sim.makespan == Fraction(r["makespan_exact"])
    assert sched.instance.f == (1, 2, 1, 1) and sched.instance.c == Fraction(1, 2)
    assert Fraction(r["gap_exact"]) == Fraction(r["makespan_exact"]) / Fraction(
        r["lower_bound_exact"])


@pytest.mark.parametrize("obj,message", [
    ('{"P": 4, "m": 8, "f": [1, 2]}', "f lists 2 per-stage durations"),
    ('{"m": 8}', "missing 'P'"),
    ('[1, 2]', "must be a JSON object"),
    ('{"P": 2, "m": 2, "colour": 3}', "unknown instance key 'colour'"),
    ('{"P": 2, "m": 2, "memory": {"budget": 3}}', "activation"),
    ('{"P": 2, "m": ', "JSON"),
])
def test_cli_bad_instance_objects(obj, message):
    for command in (["synthesize"], ["bound"], ["best", "-K", "2"], ["solve"]):
        out = _run(*command, "--instance", "-", stdin=obj)
        assert out.returncode == 2, (command, out.stderr)
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
        assert message in out.stderr, (command, out.stderr)


def test_cli_instance_with_flags_is_an_error():
    out = _run("bound", "--instance", "-", "-P", "3", stdin='{"P": 2, "m": 2}')
    assert out.returncode == 2 and "not both" in out.stderr


def test_cli_instance_file_on_bound_solve_best_agrees_with_flags():
    obj = '{"P": 3, "m": 4, "K": 2, "b_input": 1, "b_weight": 1}'
    flags = ["-P", "3", "-m", "4", "-K", "2", "--b-input", "1", "--b-weight", "1"]
    for command in (["bound", "--json"], ["solve", "--json", "--time-limit", "5", "--quiet"]):
        a = json.loads(_run(*command, "--instance", "-", stdin=obj).stdout)
        b = json.loads(_run(*command, *flags).stdout)
        assert a["lower_bound_exact"] == b["lower_bound_exact"], command
    a = json.loads(_run("best", "--json", "-K", "1", "--instance", "-", "--solve-time-limit",
                        "0", stdin=obj).stdout)
    assert a["instance"]["K"] == 1  # -K overrides the object's K


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_cli_signal_keeps_the_best(sig, code):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "pipebounds", "synthesize", "-P", "6", "-m",
                             "16", "-K", "3", "--b-input", "1", "--b-weight", "1", "--json",
                             "--progress", "--time-limit", "120"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    assert "synthesize" in line or "theory" in line
    time.sleep(1.0)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    r = json.loads(out)
    assert r["interrupted"] is True
    sim = simulate(schedule_from_document(r["schedule"]))
    assert sim.valid and sim.makespan == Fraction(r["makespan_exact"])


@pytest.mark.parametrize("inst", [Instance(P=4, m=8, f=[1, 2, 1, 1], b=[2, 3, 2, 2], c="1/2"),
                                  Instance(P=4, m=8, v=2, c=1, placement="vshape")])
def test_list_scheduler_with_delay_and_fused_backward(inst):
    """A fused B readies its successor on another GPU c later: the scheduler must wake then
    (it used to stall)."""
    from schedules.generators.list_scheduler import list_schedule

    sched = list_schedule(inst, cap=[3] * 4)
    r = simulate(sched.with_instance(inst.with_(K=3)))
    assert r.valid and reference_simulate(sched).makespan == r.makespan


def test_best_ranks_the_synthesized_schedule_and_every_entry_has_its_schedule():
    # a whole budget of 2 s (from the process start): with 0.5 s a loaded machine left no
    # family fitted within its share, and there was nothing to rank the synthesis against
    out = _run("best", "-P", "4", "-m", "6", "-K", "2", "--time-limit", "2",
               "--solve-time-limit", "0", "--synthesize", "2", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    names = [e["family"] for e in r["ranking"]]
    assert "synthesized" in names and "1f1b" in names
    for e in r["ranking"]:
        if e.get("makespan") is None:  # nothing fitted within its limit (a loaded machine)
            assert e.get("schedule") is None, e["family"]
            continue
        sim = simulate(schedule_from_document(e["schedule"]))
        assert sim.valid and sim.makespan == Fraction(e["makespan_exact"]), e["family"]
        assert max(sim.peak_memory) <= 2
    ms = [Fraction(e["makespan_exact"]) for e in r["ranking"] if e.get("makespan") is not None]
    assert ms == sorted(ms) and len(ms) >= 2
    syn = next(e for e in r["ranking"] if e["family"] == "synthesized")
    fams = [Fraction(e["makespan_exact"]) for e in r["ranking"]
            if e["family"] != "synthesized" and e.get("makespan") is not None]
    assert Fraction(syn["makespan_exact"]) <= min(fams)
    assert Fraction(r["gap_exact"]) == ms[0] / Fraction(r["lower_bound_exact"]) - 1
    bad = _run("best", "-P", "2", "-m", "2", "-K", "1", "--synthesize", "-1")
    assert bad.returncode == 2 and "--synthesize" in bad.stderr


def test_solve_takes_the_synthesized_incumbent_and_checks_its_option():
    out = _run("solve", "-P", "3", "-m", "4", "-K", "2", "--time-limit", "5", "--synthesize",
               "1", "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    sim = simulate(schedule_from_document(r["schedule"]))
    assert sim.valid and sim.makespan == Fraction(r["makespan_exact"])
    assert Fraction(r["lower_bound_exact"]) <= sim.makespan
    for bad in ("-1", "soon", "inf"):
        out = _run("solve", "-P", "2", "-m", "2", "--synthesize", bad)
        assert out.returncode == 2 and "--synthesize" in out.stderr, bad


def test_remat_instance_file_replaces_the_documents_instance(tmp_path):
    from schedules.generators import generate
    from schedules.io import document_from_schedule

    doc = tmp_path / "d.json"
    doc.write_text(json.dumps(document_from_schedule(generate("1f1b", Instance(P=4, m=6)))))
    obj = '{"P": 4, "m": 6, "f": [1, 2, 1, 1], "b": [2, 3, 2, 2]}'
    out = _run("remat", str(doc), "-K", "2", "--instance", "-", "--time-limit", "5", "--json",
               stdin=obj)
    assert out.returncode == 0, out.stderr
    sched = schedule_from_document(json.loads(out.stdout)["schedule"])
    sim = simulate(sched)
    assert sim.valid and max(sim.peak_memory) <= 2 and sched.instance.f == (1, 2, 1, 1)
    bad = _run("remat", str(doc), "-K", "2", "--instance", "-", stdin='{"P": 3, "m": 6}')
    assert bad.returncode == 2 and "--instance" in bad.stderr and "Traceback" not in bad.stderr


def test_cap_order_samples_every_cap_below_the_peak_once():
    from pipebounds.synthesis.start import CAP_STEPS, _cap_order, cap_step

    # no cap first (a tight cap can be many times the bound), then K, and the caps span K..peak
    caps = _cap_order(3, 2, top=100)
    assert caps[:2] == [None, 3]
    step = cap_step(3, 2, 100)
    assert step == 97 / (CAP_STEPS + 1)
    assert sorted(c for c in caps if c is not None) == [3 + round(d * step)
                                                        for d in range(CAP_STEPS + 1)]
    assert all(c < 100 for c in caps if c is not None) and len(caps) == len(set(caps))
    # near the peak the step is v, as before
    near = _cap_order(3, 2, top=8)
    assert near[:2] == [None, 3] and sorted(c for c in near if c is not None) == [3, 5, 7]
    assert _cap_order(5, 2, top=5) == [None]


def test_searched_rules_give_valid_schedules_within_K_and_stop_at_the_target():
    from schedules.ops import Op
    from pipebounds.synthesis.start import Rule, searched_candidates

    inst = Instance(P=4, m=8, K=2, v=2, b_I=1, b_W=1)
    found = searched_candidates(inst, 2, time.monotonic() + 1.0, seed=1, patience=60)
    assert found
    for c in found:
        sim = simulate(c.schedule.with_instance(inst))
        assert sim.valid and sim.makespan == c.makespan and max(sim.peak_memory) <= 2
    assert [c.makespan for c in found] == sorted(c.makespan for c in found)
    first = searched_candidates(inst, 2, time.monotonic() + 5.0, seed=1, target=Fraction(10**6))
    assert len(first) == 1  # the first valid schedule meets the target: the search stops
    r = Rule(a_F=1.0, a_W=5.0, beta=2.0, gamma=0.0, S=inst.S)  # backward before forward,
    assert r(Op(0, "I", 3), 0) < r(Op(0, "F", 3), 0) < r(Op(0, "W", 3), 0)  # W last
    assert r(Op(0, "I", 3), 0) > r(Op(0, "I", 2), 0)  # older microbatches first


def test_cpu_clock_is_a_cpu_budget_and_a_bad_clock_is_an_error():
    inst = Instance(P=4, m=8, K=3, v=2, b_I=1, b_W=1)  # 192 ops: start, exact phase, LNS
    c0 = time.process_time()
    res = synthesize(inst, time_limit=2.0, clock="cpu", per_family=0.3)
    used = time.process_time() - c0
    _check(inst, res)
    assert res.seconds <= 2.0 + 1.0  # CPU seconds, the result's clock
    assert used <= 2.0 + 1.5  # the grace: a sub-solver's last step and the final check
    assert any("exact phase" in m for m in res.methods)
    with pytest.raises(SynthesisError, match="clock"):
        synthesize(inst, clock="sundial")


def test_trusted_op_equals_the_checked_one():
    from schedules.ops import Op

    for args in [(0, "F", 0), (3, "W", 7), (12, "I", 255), (2, "R", 1)]:
        a, b = Op(*args), Op.trusted(*args)
        assert a == b and hash(a) == hash(b) and a.code == b.code and str(a) == str(b)


def test_workers_help_names_the_exact_phase_sizes(capsys):
    """The command's ``--workers`` help states the sizes the library uses."""
    from pipebounds.cli import build_parser
    from pipebounds.synthesis.synthesize import EXACT_OPS, EXACT_OPS_THREADS

    with pytest.raises(SystemExit):
        build_parser(("synthesize",)).parse_args(["synthesize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"at most {EXACT_OPS} ops" in text and f"up to {EXACT_OPS_THREADS} ops" in text


def test_wave_rule_meets_the_memory_free_bound_on_the_vshape():
    """The wave rule (docs/synthesis.md, Stop 39): uncapped list schedule of a fused v = 2
    vshape instance, m >= 2P, f <= b <= 2f: makespan = bounds.lower_bound without a memory
    limit (so optimal at any K >= its peak), peak at most 3P (4P - 2 at b slightly above
    2f); and synthesize at such a K returns it as optimal at once."""
    from bounds import lower_bound
    from schedules.generators.list_scheduler import list_schedule
    from pipebounds.synthesis.start import wave_rule

    for P in range(2, 7):
        for m in range(2 * P, 3 * P + 1):
            for f, b in ((1, 1), (1, 2), (2, 3), (Fraction(1157, 100), Fraction(2353, 100))):
                inst = Instance(P=P, m=m, v=2, placement="vshape", f=f, b=b)
                r = simulate(list_schedule(inst, cap=None, split=False, key=wave_rule(inst)))
                assert r.valid and r.makespan == lower_bound(inst).value, (P, m, f, b)
                top = 3 * P if b <= 2 * f else 4 * P - 2
                assert max(r.peak_memory) <= top, (P, m, f, b)
    inst = Instance(P=8, m=16, v=2, placement="vshape", f=1, b=2, K=23)
    res = synthesize(inst, time_limit=10)
    assert res.status == "optimal" and res.source.startswith("list[wave")
    assert simulate(res.schedule).makespan == res.makespan == res.lower_bound
    # met at once on an instance the exact phase would take: it is not said to be too large
    small = synthesize(Instance(P=2, m=4, v=2, placement="vshape", f=1, b=2), time_limit=5)
    assert small.status == "optimal"
    assert not any(x.startswith("exact phase skipped") for x in small.methods), small.methods


def test_smaller_rounds_are_candidates_within_K_and_synthesize_keeps_the_best():
    """grouped_candidates (interleaved-short with rounds of g < P): every candidate valid
    (project simulator and the reference one) within K, its reported makespan the simulated
    one, a group no smaller than floor(P/2); synthesize never returns worse than the best of
    them; nothing when K does not bind below vP or the placement is not looped."""
    from pipebounds.synthesis.start import grouped_candidates

    inst = Instance(P=8, m=32, v=2, placement="looped", f=1, b=1, K=12)
    cands = grouped_candidates(inst, 12, float("inf"))
    assert cands and all("group=" in c.source for c in cands)
    for c in cands:
        r = simulate(c.schedule)
        assert r.valid and max(r.peak_memory) <= 12 and r.makespan == c.makespan, c.source
        ref = reference_simulate(c.schedule)
        assert not ref.deadlock and ref.makespan == c.makespan and max(ref.peak) <= 12
        assert int(c.source.split("group=")[1].split("]")[0]) >= 8 // 2
    best = min(c.makespan for c in cands)
    res = synthesize(inst, time_limit=3)
    assert simulate(res.schedule).valid and res.makespan <= best
    split = Instance(P=8, m=16, v=2, placement="looped", f=1, b_I=1, b_W=1, K=11)
    zb = grouped_candidates(split, 11, float("inf"))
    assert zb and all(c.source.startswith("interleaved-zb[group=") for c in zb)
    for c in zb:
        r = simulate(c.schedule)
        assert r.valid and max(r.peak_memory) <= 11 and r.makespan == c.makespan, c.source
    one = Instance(P=1, m=4, v=2, placement="looped", f=1, b=1, K=1)
    assert all(simulate(c.schedule).valid for c in grouped_candidates(one, 1, float("inf")))
    assert grouped_candidates(inst.with_(K=16), 16, float("inf")) == []
    assert grouped_candidates(Instance(P=8, m=32, v=2, placement="vshape", K=12), 12,
                              float("inf")) == []


def test_building_blocks_are_candidates_within_K_and_synthesize_keeps_the_best():
    """block_candidates (the fused V-shape block and list schedules ranked by its times):
    every candidate valid (project simulator and the reference one) within K, its reported
    makespan the simulated one; the block itself with no recompute once K reaches its peak,
    and synthesize never worse than the best of them; nothing on looped or split instances or
    without K."""
    from pipebounds.synthesis.start import block_candidates
    from schedules.generators.building_block import block_schedule

    inst = Instance(P=8, m=64, v=2, placement="vshape", f=1, b=1, K=10)
    peak = max(simulate(block_schedule(inst.with_(K=None))).peak_memory)
    cands = block_candidates(inst, 10, float("inf"))
    assert [c.source for c in cands][:2] == ["block", "list[block,cap=26]+remat(K=10)"]
    for c in cands:
        r = simulate(c.schedule)
        assert r.valid and max(r.peak_memory) <= 10 and r.makespan == c.makespan, c.source
        ref = reference_simulate(c.schedule)
        assert not ref.deadlock and ref.makespan == c.makespan and max(ref.peak) <= 10
    assert peak <= 10 and not any(op.kind == "R" for seq in cands[0].schedule.orders
                                  for op in seq)
    tight = block_candidates(inst.with_(K=5), 5, float("inf"))
    assert tight and all(simulate(c.schedule).valid and max(simulate(c.schedule).peak_memory)
                         <= 5 for c in tight)
    res = synthesize(inst, time_limit=3)
    assert simulate(res.schedule).valid and res.makespan <= min(c.makespan for c in cands)
    assert block_candidates(inst.with_(placement="looped"), 10, float("inf")) == []
    assert block_candidates(Instance(P=8, m=64, v=2, placement="vshape", b_I=1, b_W=1,
                                     K=10), 10, float("inf")) == []
    assert block_candidates(inst.with_(K=None), None, float("inf")) == []


def test_a_split_instance_generates_the_split_families_first():
    """At a short limit only the first families are generated (:func:`ranked_families`): on a
    split instance ``zbv`` comes before ``hanayo`` and ``interleaved-zb`` before
    ``interleaved``, on a fused one the other way round."""
    from pipebounds.synthesis.start import family_priority

    split = family_priority(Instance(P=4, m=8, v=2, placement="vshape", K=4, f=1, b_I=1, b_W=1))
    fused = family_priority(Instance(P=4, m=8, v=2, placement="vshape", K=4, f=1, b=2))
    assert split.index("zbv") < split.index("hanayo")
    assert split.index("interleaved-zb") < split.index("interleaved")
    assert fused.index("hanayo") < fused.index("zbv")
    assert sorted(split) == sorted(fused)


@pytest.mark.parametrize("placement", ["looped", "vshape"])
def test_the_families_phase_fits_one_family_whatever_the_time_left(placement):
    """With the start phase's time already over, the first family is still generated and
    fitted to ``K`` (the synthesis at a short limit is then never worse than it)."""
    from pipebounds.synthesis.start import family_candidates, ranked_families

    inst = Instance(P=4, m=8, v=2, placement=placement, K=3, f=1, b=1)
    over = lambda: 1.0  # noqa: E731 (a clock past every deadline)
    fams = ranked_families(inst, 0.0, now=over)
    assert len(fams) == 1
    cands, _, _ = family_candidates(inst, 3, None, False, 0.1, 0.0, fams, now=over)
    assert len(cands) == 1
    res = simulate(cands[0].schedule.with_instance(inst))
    assert res.valid and max(res.peak_memory) <= 3 and res.makespan == cands[0].makespan
