"""The exact K = 1 engine (pipebounds/search/single_slot.py; docs/theory.md A.6, "An exact engine
for `K = 1`"): its optimum equals the independent optimum (the branch and bound without any bound
or known schedule, and the stored table pipebounds/data/optima.jsonl), every schedule it returns
is valid with one activation per GPU and the reported makespan, its status is honest, and
Lemma L8 (the last GPU keeps) loses nothing.

The whole stored sweep (every fused K = 1 row of the table, about 30 s CPU) runs with
``PIPEBOUNDS_K1_FULL=1``; by default the rows with ``P m <= 24``.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipebounds.search import BACKENDS, SolveOptions
from pipebounds.search.single_slot import decide, in_class, solve_single_slot
from schedules import Instance, simulate
from schedules.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
FULL = os.environ.get("PIPEBOUNDS_K1_FULL") == "1"
INDEPENDENT = SolveOptions(use_theory=False, use_known=False, time_limit=60)


def _checked(inst, res):
    """The result's schedule is valid, holds one activation per GPU and has its makespan."""
    assert res.schedule is not None
    sim = simulate(res.schedule)
    assert sim.valid, sim.errors[:3]
    assert max(sim.peak_memory) == 1
    assert sim.makespan == res.makespan


def _table_rows():
    rows = [json.loads(line) for line in
            (ROOT / "pipebounds" / "data" / "optima.jsonl").read_text().splitlines()]
    return [r for r in rows if r["K"] == 1 and r["v"] == 1 and "b_input" not in r
            and not r.get("c") and r["status"] == "optimal" and r.get("independent")
            and (FULL or r["P"] * r["m"] <= 24)]


def test_stored_sweep_equals_the_independent_optima():
    rows = _table_rows()
    assert len(rows) >= (690 if FULL else 300)
    for r in rows:
        inst = Instance(P=r["P"], m=r["m"], K=1, f=Fraction(r["f"]), b=Fraction(r["b"]))
        res = solve_single_slot(inst, INDEPENDENT, nodes=500_000)
        assert res.status == "optimal" and res.makespan == Fraction(r["opt"]), (r, res)
        _checked(inst, res)


@settings(max_examples=25)
@given(P=st.integers(1, 3), m=st.integers(1, 4), f=st.integers(1, 3), b=st.integers(1, 3))
def test_equals_the_branch_and_bound(P, m, f, b):
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    ref = BACKENDS["search"].solve(inst, INDEPENDENT)
    assert ref.status == "optimal"
    res = solve_single_slot(inst, INDEPENDENT)
    assert res.status == "optimal" and res.makespan == ref.makespan
    _checked(inst, res)
    with_theory = solve_single_slot(inst, SolveOptions(use_known=False))
    assert with_theory.makespan == ref.makespan


@pytest.mark.parametrize("P, m, f, b, opt, refuted", [
    (3, 12, 5, 3, 146, []),        # T3 = 144 < T3d = 146 = OPT: found at T3d
    (3, 12, 7, 4, 202, [201]),     # T3d = 201 < OPT = 202: 201 refuted by the search
    (3, 16, 5, 3, 193, [192]),     # T3 = T3d = 192 < OPT = 193: refuted with the memo (L11)
    (3, 16, 2, 1, 74, [73]),       # T3 = T3d = 73 < OPT = 74 (8.6k nodes with the memo)
    (4, 16, 2, 1, 77, [76]),       # T3 = T3d = 76 < OPT = 77 (51k nodes with L12, L13)
])
def test_where_t3_fails(P, m, f, b, opt, refuted):
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    res = solve_single_slot(inst, SolveOptions(use_known=False))
    assert res.status == "optimal" and res.makespan == opt
    assert res.stats["refuted"] == refuted
    _checked(inst, res)


def test_p3_m24_f5_b8_reaches_t3d():
    """The smallest known f <= b instance with T3 < OPT: the engine finds a schedule of
    makespan T3d = 417 (a proven bound), so OPT = 417 (the branch and bound had 428)."""
    inst = Instance(P=3, m=24, K=1, f=5, b=8)
    res = solve_single_slot(inst, SolveOptions(use_known=False))
    assert res.status == "optimal" and res.makespan == 417
    _checked(inst, res)


def test_independent_start_refutes_below_t1_for_free():
    inst = Instance(P=3, m=4, K=1, f=1, b=1)
    res = solve_single_slot(inst, INDEPENDENT)
    assert res.stats["independent"] and res.status == "optimal"
    assert res.stats["refuted"] == list(range(int(res.makespan)))


def test_honest_status_on_a_budget_miss():
    """With a one-node budget nothing is refuted or found: never ``optimal``."""
    inst = Instance(P=3, m=12, K=1, f=7, b=4)
    res = solve_single_slot(inst, SolveOptions(use_known=False), nodes=1)
    assert res.status == "unknown" and res.makespan is None
    assert res.lower_bound == 201  # T3d, the theory's proven bound, nothing more
    dec = decide(inst, 201, nodes=1)
    assert not dec.refuted and dec.orders is None


def test_out_of_class_is_refused():
    for inst in (Instance(P=3, m=4, K=2), Instance(P=3, m=4, K=1, b_I=1, b_W=1),
                 Instance(P=3, m=4, K=1, v=2), Instance(P=3, m=4, K=1, c=1)):
        assert not in_class(inst)
        with pytest.raises(InputError):
            solve_single_slot(inst)


@pytest.mark.parametrize("P, m, f, b", [(3, 4, 1, 1), (3, 5, 2, 1), (4, 4, 1, 2), (3, 6, 3, 2)])
def test_last_gpu_keeping_loses_nothing(P, m, f, b):
    """Lemma L8 checked: the complete tree with recomputation allowed on the last GPU refutes
    the same makespans (OPT - 1 refuted, OPT found by both)."""
    from pipebounds.constructions.single_wave.slot_search import _bounded_search

    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    opt = int(solve_single_slot(inst, INDEPENDENT).makespan)
    for last_free in (False, True):
        complete = dict(width_f=m, width_r=m, always_wait=True, last_free=last_free)
        below, n1 = _bounded_search(P, m, f, b, opt - 1, 10**6, **complete)
        at, _ = _bounded_search(P, m, f, b, opt, 10**6, **complete)
        assert below is None and n1 <= 10**6 and at is not None


def test_backend_contract():
    """The engine is a Backend: ``solve`` through the protocol gives the same answer."""
    from pipebounds.search.single_slot import BACKEND

    inst = Instance(P=3, m=12, K=1, f=5, b=3)
    res = BACKEND.solve(inst, SolveOptions(use_known=False))
    assert BACKEND.name == "single_slot" and res.status == "optimal" and res.makespan == 146


def _complete_search(P, m, f, b, T, memo):
    from pipebounds.constructions.single_wave.slot_search import _bounded_search

    return _bounded_search(P, m, f, b, T, 10**6, width_f=m, width_r=m, always_wait=True,
                           last_free=False, check_all=True, memo=set() if memo else None)


@settings(max_examples=20, deadline=None)
@given(P=st.integers(2, 4), m=st.integers(2, 6), f=st.integers(1, 3), b=st.integers(1, 3))
def test_memo_changes_no_decision(P, m, f, b):
    """Lemma L11 checked: the engine's optimum (the memo on) is confirmed by the complete tree
    without the memo, which refutes OPT - 1 (searched out) and finds a schedule at OPT."""
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    res = solve_single_slot(inst, INDEPENDENT)
    assert res.status == "optimal"
    _checked(inst, res)
    opt = int(res.makespan * inst.unit)
    for memo in (False, True):
        below, used = _complete_search(P, m, f, b, opt - 1, memo)
        assert below is None and used <= 10**6
        at, _ = _complete_search(P, m, f, b, opt, memo)
        assert at is not None


def test_t3d_below_opt_at_p3_m12_f2_b1():
    """T3 = T3d = 55 but OPT = 56 at P = 3, m = 12, f = 2, b = 1: the complete tree refutes 55
    with and without the memo (L11), and the engine's schedule of 56 re-simulates."""
    from bounds.single_wave import coupled_slot_value, single_slot_value

    inst = Instance(P=3, m=12, K=1, f=2, b=1)
    assert single_slot_value(inst) == coupled_slot_value(inst) == 55
    for memo in (False, True):
        below, used = _complete_search(3, 12, 2, 1, 55, memo)
        assert below is None and used <= 10**6
    res = solve_single_slot(inst, SolveOptions(use_known=False))
    assert res.status == "optimal" and res.makespan == 56 and res.stats["refuted"] == [55]
    _checked(inst, res)


def _direct_key(s):
    """The memo key of L11 recomputed from the search state (no incremental digits)."""
    P, m, t, span = s.P, s.m, s.t, s.span
    codes = []
    for j in range(m):
        st, tf, tb = 0, 0, 0
        for q in range(P):
            be = s.bend[q][j]
            if be >= 0:
                d = 4
                if q > 0 and s.bend[q - 1][j] < 0 and be > t[q - 1]:
                    tb = be + 1
            else:
                k = s.kept[q][j]
                d = 0 if k is None else 1 if k else 3 if s.redone[q][j] else 2
                fe = s.fend[q][j]
                if fe >= 0 and q < P - 1 and s.fend[q + 1][j] < 0 and fe > t[q + 1]:
                    tf = fe + 1
            st = st * 5 + d
        codes.append((st * span + tf) * span + tb)
    return tuple(t), tuple(sorted(codes))


@pytest.mark.parametrize("P, m, f, b, T, last_free", [
    (3, 6, 1, 1, 18, False), (4, 6, 2, 1, 32, True), (3, 12, 2, 1, 55, False)])
def test_memo_key_is_the_state(P, m, f, b, T, last_free):
    """The incrementally kept key equals the one recomputed from the state at every node."""
    import sys

    from pipebounds.constructions.single_wave import slot_search as ss

    seen = []

    class Checked(ss._SlotSearch):
        def key(self):
            k = super().key()
            assert k == _direct_key(self)
            seen.append(k)
            return k

    s = Checked(P, m, f, b, T, 2000, None, False, last_free, m, m, True, False)
    s.check_all, s.memo = True, set()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        s.step()
    except (ss._Found, ss._OutOfNodes):
        pass
    finally:
        sys.setrecursionlimit(limit)
    assert len(seen) >= 30


SMALL = [(P, m, f, b) for P in (2, 3, 4) for m in (3, 5, 6) for f, b in ((1, 1), (2, 1), (1, 2),
                                                                          (3, 2))]
"""36 small fused K = 1 instances for the pruning lemmas' with-and-without checks."""

GAP = {(3, 11, 5, 2): 122, (3, 12, 2, 1): 56, (3, 12, 5, 2): 132, (3, 13, 3, 2): 98,
       (3, 13, 5, 3): 158, (4, 11, 5, 2): 129, (4, 12, 2, 1): 59, (4, 12, 5, 2): 139,
       (3, 12, 7, 4): 202, (3, 16, 5, 3): 193}
"""Instances with OPT > T3d (each T3d refuted by the complete tree; the optimum as the engine
proves it without any bound, and without L12 and L13): the trees are searched out there, so
the memo and the pruning do real work."""


def _independent(P, m, f, b, **kw):
    res = solve_single_slot(Instance(P=P, m=m, K=1, f=f, b=b), INDEPENDENT, **kw)
    assert res.status == "optimal"
    return res


def _without_l12_l13(monkeypatch, P, m, f, b):
    """The engine with L11's exact-key memo and L10's hold bound on kept holds only."""
    from pipebounds.constructions.single_wave import slot_search as ss

    with monkeypatch.context() as mp:
        mp.setattr(ss._SlotSearch, "hold_redone", False)
        return _independent(P, m, f, b, dominance=False)


def test_l12_l13_change_no_optimum(monkeypatch):
    """Lemmas L12 (dominance) and L13 (the hold bound on recomputed holds) checked on 46
    instances (36 small ones and the 10 of GAP): the engine's optimum with both equals the one
    without either, every schedule re-simulates, and on GAP (where T3d is refuted) the optimum
    is the stored one, reached in no more nodes than without L12 and L13."""
    for P, m, f, b in SMALL + list(GAP):
        inst = Instance(P=P, m=m, K=1, f=f, b=b)
        res = _independent(P, m, f, b)
        _checked(inst, res)
        old = _without_l12_l13(monkeypatch, P, m, f, b)
        assert res.makespan == old.makespan, (P, m, f, b)
        if (P, m, f, b) in GAP:
            assert res.makespan == GAP[P, m, f, b]
            assert res.nodes <= old.nodes


def _cut_nodes_with_a_completion(memo_cls, cases, checks=60):
    """Run the complete tree with ``memo_cls`` on ``cases`` ``(P, m, f, b, T)``; at each of the
    first ``checks`` nodes the memo cuts, search the node's subtree without any memo (at most
    20k nodes): return how many cut nodes had a leaf, and how many subtrees were searched out."""
    import copy
    import sys

    from pipebounds.constructions.single_wave import slot_search as ss

    tally = {"leaf": 0, "out": 0, "checked": 0}

    class Oracle(ss._SlotSearch):
        def step(self):
            memo = self.memo
            if memo is not None and tally["checked"] < checks and memo.dominated(
                    *self.dominance_key()):
                tally["checked"] += 1
                sub = copy.deepcopy(self)
                sub.memo, sub.count, sub.nodes = None, 0, 20_000
                try:
                    sub.expand()
                    tally["out"] += 1
                except ss._Found:
                    tally["leaf"] += 1
                except ss._OutOfNodes:
                    pass
            super().step()

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        for P, m, f, b, T in cases:
            s = Oracle(P, m, f, b, T, 10**6, None, False, False, m, m, True, False)
            s.check_all, s.memo = True, memo_cls()
            try:
                s.step()
            except (ss._Found, ss._OutOfNodes):
                pass
    finally:
        sys.setrecursionlimit(limit)
    return tally


ORACLE_CASES = [(3, 11, 5, 2, 122), (3, 12, 2, 1, 56), (3, 12, 2, 1, 57), (3, 13, 3, 2, 97)]


def test_no_cut_node_has_a_completion():
    """L12 checked node by node: of the nodes the dominance memo cuts, none has a leaf in its
    subtree (searched without any memo), and most subtrees are searched out (the check
    decides)."""
    from pipebounds.constructions.single_wave.slot_search import DominanceMemo

    tally = _cut_nodes_with_a_completion(DominanceMemo, ORACLE_CASES)
    assert tally["checked"] == 60 and tally["leaf"] == 0 and tally["out"] >= 40, tally


def test_a_planted_dominance_error_is_caught():
    """The node-by-node check can fail: a memo that compares the microbatch states but not the
    times (a node is cut once a node in the same states was searched out) cuts nodes that have
    a completion."""
    from pipebounds.constructions.single_wave.slot_search import DominanceMemo

    class StatesOnly(DominanceMemo):
        def dominated(self, states, vec):
            return bool(self.groups.get(states))

    assert _cut_nodes_with_a_completion(StatesOnly, ORACLE_CASES)["leaf"] > 0


def test_a_planted_hold_bound_error_is_caught(monkeypatch):
    """The with-and-without check can fail: a hold bound one unit too strong (the backward
    below taken to end one unit later than the state allows) changes the optimum the engine
    reports (or leaves it unproven) on GAP."""
    from pipebounds.constructions.single_wave import slot_search as ss

    eta = ss._SlotSearch.eta
    monkeypatch.setattr(ss._SlotSearch, "eta", lambda self, j, q: eta(self, j, q) + 1)
    wrong = 0
    for (P, m, f, b), opt in GAP.items():
        res = solve_single_slot(Instance(P=P, m=m, K=1, f=f, b=b),
                                SolveOptions(use_theory=False, use_known=False, time_limit=5))
        wrong += res.status != "optimal" or res.makespan != opt
        if wrong:
            break
    assert wrong > 0


@pytest.mark.parametrize("P, m, f, b, T", [(3, 13, 3, 2, 97), (3, 16, 5, 3, 192),
                                           (4, 12, 2, 1, 58)])
def test_l12_l13_refute_with_fewer_nodes(P, m, f, b, T):
    """Where T3d is refuted, the complete tree with L12 and L13 is searched out in fewer nodes
    than with neither (the counts: docs/theory.md A.6)."""
    from pipebounds.constructions.single_wave import slot_search as ss

    used = []
    for new in (False, True):
        s = ss._SlotSearch(P, m, f, b, T, 10**6, None, False, False, m, m, True, False)
        s.check_all, s.hold_redone = True, new
        s.memo = ss.DominanceMemo() if new else set()
        import sys

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(100_000)
        try:
            s.step()
        finally:
            sys.setrecursionlimit(limit)
        used.append(s.count)
    assert used[1] < used[0] <= 10**6, used
