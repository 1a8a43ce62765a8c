"""The single-GPU relaxation (pipebounds.search.relaxation; docs/theory.md A.7): a valid lower
bound, above bounds.lower_bound on stored optima of data/split_v1_midK_optima.jsonl, and a
planted error (a lag one unit too long) that exceeds a proven optimum."""

import json
from fractions import Fraction
from pathlib import Path

import pytest

from bounds import lower_bound
from pipebounds.search.relaxation import class_problems, gpu_relaxation
from schedules.errors import InputError
from schedules.instance import Instance

DATA = Path(__file__).resolve().parent.parent / "data" / "split_v1_midK_optima.jsonl"


def _rows():
    out = []
    for line in DATA.read_text().splitlines():
        r = json.loads(line)
        if r["status"] == "optimal":
            out.append(r)
    return out


def _inst(r):
    return Instance(P=r["P"], m=r["m"], K=r["K"], f=r["f"], b_I=r["b_input"], b_W=r["b_weight"])


def test_stored_rows_are_consistent():
    rows = _rows()
    assert len(rows) >= 20
    for r in rows:
        inst = _inst(r)
        assert Fraction(r["lower_bound"]) == lower_bound(inst).value
        assert Fraction(r["lower_bound"]) <= Fraction(r["opt"])
        if r["relax_gpu0"] is not None:   # the stored relaxation never exceeds the optimum
            assert Fraction(r["relax_gpu0"]) <= Fraction(r["opt"])


# fast rows (< 1 CPU s each): the relaxation of GPU 0 is the optimum, one unit above every term
# but S4 (docs/theory.md A.7), which reaches it too
RAISED = [(3, 7, 2, 2, 1, 1, 34), (3, 7, 2, 2, 1, 2, 40), (3, 8, 2, 2, 1, 1, 38)]


@pytest.mark.parametrize("P,m,K,f,bi,bw,opt", RAISED)
def test_relaxation_raises_the_bound_to_the_optimum(P, m, K, f, bi, bw, opt):
    inst = Instance(P=P, m=m, K=K, f=f, b_I=bi, b_W=bw)
    row = [r for r in _rows() if _inst(r) == inst]
    assert row and Fraction(row[0]["opt"]) == opt   # CP-SAT without the theory
    terms = dict(lower_bound(inst).terms)
    assert max(x for n, x in terms.items() if n != "split_window_fill") == opt - 1
    assert terms["split_window_fill"] == opt == lower_bound(inst).value
    r = gpu_relaxation(inst, 0, time_limit=60)
    assert r.optimal and r.value == opt


def test_relaxation_never_above_a_stored_optimum_and_planted_error_caught():
    rows = [r for r in _rows() if r["m"] == 7]
    caught = False
    for r in rows:
        inst = _inst(r)
        opt = Fraction(r["opt"])
        for g in range(inst.P):
            assert gpu_relaxation(inst, g, time_limit=30).value <= opt
        planted = gpu_relaxation(inst, 0, time_limit=30, lag_extra=Fraction(1))
        caught = caught or planted.value > opt
    assert caught   # a lag one unit too long is not a relaxation: it exceeds some optimum


def test_cap_proves_the_bound_and_class():
    inst = Instance(P=3, m=7, K=2, f=2, b_I=1, b_W=1)
    r = gpu_relaxation(inst, 0, cap=Fraction(33))
    assert r.status == "INFEASIBLE" and r.value == 34 and r.best is None
    fused = gpu_relaxation(Instance(P=3, m=4, K=2, f=1, b=2), 2, time_limit=30)
    assert fused.optimal and fused.value == lower_bound(Instance(P=3, m=4, K=2, f=1, b=2)).value
    assert class_problems(Instance(P=2, m=2, v=2, K=1)) == ["v != 1"]
    with pytest.raises(InputError):
        gpu_relaxation(Instance(P=2, m=2), 0)
