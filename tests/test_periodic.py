"""Periodic templates (pipebounds.search.periodic; docs/synthesis.md, *Periodic steady state*):
unrolled, a template is a valid schedule within ``K`` for every ``m`` (both simulators), never
below the bound, within the stated makespan; no template is found below the bound's slope (a
falsification check of the memory bounds' asymptotic form, which a planted error fails)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pipebounds.search.periodic import (PeriodicError, bound_slope, candidate_periods,
                                        periodic_template)
from schedules.instance import Instance
from tests.schedule_checks import assert_valid_within_K

pytest.importorskip("ortools")

BASE = Instance(P=4, m=8, K=2, f=1, b=2)
ROOT = Path(__file__).resolve().parent.parent


def _work_period(inst: Instance) -> int:
    """A period at which one microbatch at a time, every pair recomputed, fits (units): all its
    ops in sequence, with the delays."""
    kinds = ("F", "R", "I", "W") if inst.split else ("F", "R", "B")
    work = sum(int(inst.duration_of(k, s) * inst.unit) for s in range(inst.S) for k in kinds)
    return work + 2 * int(inst.c * inst.unit) * inst.S


def test_unrolled_template_is_valid_for_every_m():
    res = periodic_template(BASE, q=3, L=11, time_limit=30)
    assert res.status == "feasible" and res.template.slope == Fraction(11, 3)
    tpl = res.template
    for m in (1, 2, 3, 4, 7, 16):
        sched = tpl.unroll(m)
        inst = sched.instance
        assert_valid_within_K(sched, inst)
        from schedules import simulate

        # the repetition's own timing bounds the ASAP makespan (module docstring)
        assert simulate(sched).makespan <= Fraction((math.ceil(m / 3) - 1) * 11 + tpl.horizon,
                                                    inst.unit)


def test_below_the_bound_slope_is_infeasible():
    s, tol = bound_slope(BASE)
    assert s == Fraction(39, 11) and tol < Fraction(1, 10**4)  # T2's slope: B + f r*/m at the crossing, d = P
    res = periodic_template(BASE, q=2, L=7, time_limit=30)  # 7/2 < 39/11
    assert res.status == "infeasible"


def test_planted_error_is_caught():
    """The check that can fail: a bound whose slope were 5 % too high is refuted by a template
    the search finds (11/3 < 1.05 * 39/11)."""
    planted = bound_slope(BASE)[0] * Fraction(105, 100)
    res = periodic_template(BASE, q=3, L=11, time_limit=30)
    assert res.status == "feasible"
    assert res.template.slope < planted  # the planted slope is refuted
    assert res.template.slope >= bound_slope(BASE)[0]  # the real one is not


def test_candidate_periods_sorted_and_not_below():
    s = Fraction(39, 11)
    cands = candidate_periods(s, 1, 12)
    ratios = [Fraction(L, q) for q, L in cands]
    assert ratios == sorted(ratios) and len(set(ratios)) == len(ratios)
    assert all(r >= s for r in ratios) and ratios[0] == s


def test_errors_name_the_problem():
    with pytest.raises(PeriodicError, match="q and L"):
        periodic_template(BASE, q=0, L=5)
    with pytest.raises(PeriodicError, match="memory limit"):
        periodic_template(Instance(P=2, m=4, f=1, b=1), q=1, L=4)
    with pytest.raises(PeriodicError, match="one direction"):
        periodic_template(Instance(P=2, m=4, K=2, f=1, b=1, directions=2), q=1, L=4)
    res = periodic_template(BASE, q=1, L=_work_period(BASE), time_limit=20)
    with pytest.raises(PeriodicError, match="m must be"):
        res.template.unroll(0)


@st.composite
def small_instances(draw):
    v = draw(st.sampled_from([1, 2]))
    P = draw(st.integers(2, 3))
    split = draw(st.booleans())
    kw = dict(P=P, m=4, v=v, K=draw(st.integers(1, 3)), f=draw(st.integers(1, 3)),
              c=draw(st.sampled_from([0, 0, 1])))
    if v == 2:
        kw["placement"] = draw(st.sampled_from(["looped", "vshape"]))
    if split:
        kw.update(b_I=draw(st.integers(1, 3)), b_W=draw(st.integers(1, 2)))
    else:
        kw["b"] = draw(st.integers(1, 4))
    return Instance(**kw)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(small_instances(), st.integers(1, 2), st.integers(1, 6))
def test_property_templates_valid_and_never_below_the_bound(inst, q, m):
    """A template at a period where one microbatch at a time fits is found; unrolled it is a
    valid schedule within K, never below the bound; and no template is found below the bound's
    slope (q = 1, 2, the largest period below it)."""
    res = periodic_template(inst, q=q, L=q * _work_period(inst), time_limit=20)
    assert res.status == "feasible"
    sched = res.template.unroll(m)
    assert_valid_within_K(sched, sched.instance)
    s, tol = bound_slope(inst)
    L = math.ceil(q * (s - 2 * tol) * inst.unit) - 1
    if L >= 1:
        below = periodic_template(inst, q=q, L=L, time_limit=10)
        assert below.status != "feasible", (inst, q, L)


# ------------------------------------------------------------------------- command line
def _run(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "pipebounds", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_cli_synthesize_periodic_start():
    """``synthesize --periodic S``: the JSON reports the template; the schedule is valid, within
    K, never above the unrolled template's makespan (it is a start) nor below the bound."""
    from schedules.io import schedule_from_document

    out = _run("synthesize", "-P", "4", "-m", "40", "-K", "3", "-f", "1", "-b", "1",
               "--periodic", "10", "--time-limit", "24", "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    per = r["periodic"]
    # T2's slope 20/9 is a template's (q = 9, found in about 1.5 s of the 10)
    assert per["found"] and per["bound_slope_exact"] == "20/9"
    assert Fraction(per["ratio_exact"]) >= Fraction(20, 9)
    assert Fraction(per["ratio_exact"]) == Fraction(per["period_exact"]) / per["q"]
    sched = schedule_from_document(r["schedule"])
    assert_valid_within_K(sched, sched.instance)
    assert Fraction(r["makespan_exact"]) <= Fraction(per["makespan_exact"])
    assert Fraction(r["makespan_exact"]) >= Fraction(r["lower_bound_exact"])


@pytest.mark.parametrize("args,message", [
    (["--periodic", "-1"], "--periodic"),
    (["--periodic", "2", "--directions", "2"], "--periodic: periodic templates need one "
                                               "direction"),
])
def test_cli_periodic_errors(args, message):
    out = _run("synthesize", "-P", "2", "-m", "4", "-K", "2", "--time-limit", "2", *args)
    assert out.returncode != 0 and message in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("kw,budget,on", [
    (dict(P=4, m=64, K=3), None, True),            # m = 16 P, K < P: on
    (dict(P=4, m=63, K=3), None, False),           # m < 16 P
    (dict(P=4, m=64, K=4), None, False),           # K = v P: memory does not bind
    (dict(P=16, m=256, K=3), None, False),         # P > 8
    (dict(P=4, m=64, K=3, directions=2), None, False),  # not covered: off, not an error
    (dict(P=4, m=64, K=3), 1000, False),           # a byte budget
    (dict(P=4, m=128, K=7, v=2), None, True),      # v = 2, K < v P
])
def test_periodic_auto_decides_where_it_runs(kw, budget, on):
    """``--periodic auto`` (the default) takes a third of the time on large ``m / P`` with
    memory binding, and nothing elsewhere; explicit seconds are capped at half."""
    from pipebounds.cli.synthesize import periodic_seconds

    inst = Instance(**kw)
    assert periodic_seconds("auto", inst, budget, 30.0) == (10.0 if on else 0.0)
    assert periodic_seconds(25.0, inst, budget, 30.0) == 15.0
    assert periodic_seconds(0.0, inst, budget, 30.0) == 0.0


def test_cli_periodic_auto_is_the_default():
    """Without ``--periodic`` a large ``m / P`` instance gets a periodic start (the JSON key),
    a small one none; ``--periodic 0`` turns it off."""
    base = ("synthesize", "-P", "2", "-m", "32", "-K", "1", "-f", "1", "-b", "2", "--json",
            "--quiet", "--time-limit", "9")
    r = json.loads(_run(*base).stdout)
    assert r["periodic"]["found"]
    assert Fraction(r["makespan_exact"]) <= Fraction(r["periodic"]["makespan_exact"])
    assert "periodic" not in json.loads(_run(*base, "--periodic", "0").stdout)
    small = json.loads(_run("synthesize", "-P", "2", "-m", "8", "-K", "1", "--json", "--quiet",
                            "--time-limit", "3").stdout)
    assert "periodic" not in small


@pytest.mark.parametrize("sig,code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_cli_signal_during_the_periodic_phase_keeps_the_best(sig, code):
    """A signal while the periodic template is searched ends the run soon, with the best
    schedule (CP-SAT must neither swallow the signal nor replace the command's handler)."""
    import signal
    import time

    from schedules.io import schedule_from_document

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "pipebounds", "synthesize", "-P", "8", "-m",
                             "128", "-K", "3", "-b", "2", "--periodic", "30", "--time-limit",
                             "60", "--json", "--quiet"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4.0)  # imports done; the template search has 30 s and finds none in them
    t0 = time.monotonic()
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=50)
    assert proc.returncode == code, err
    assert time.monotonic() - t0 < 40  # not the 60 s of the limit
    assert "Traceback" not in err
    r = json.loads(out)
    assert r["interrupted"] is True and r["periodic"]["seconds"] < 30
    sched = schedule_from_document(r["schedule"])
    assert_valid_within_K(sched, sched.instance)
