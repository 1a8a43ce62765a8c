"""The theorem registry (bounds/theorems.py, its checks in proofs_checks/registry.py): one entry
per theorem id of the docs, each with a bound function, its docs section and at least one
machine check; every term of ``lower_bound`` carries exactly one registered id, and every
registered id is in the docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bounds import theorems
from bounds.evaluate import TERM_IDS
from proofs_checks import load_checks
from proofs_checks.registry import THEOREMS, checks_of
from schedules import Instance

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("docs/theory.md", "docs/theory_multiwave.md", "docs/theory_frontier.md")
ID = re.compile(r"^\| ((?:T|S|MW|H|KF|OV|D)\d+[a-z]?)\b")


def doc_ids() -> set[str]:
    """The ids in the first column of the status table of each theory doc (its first table)."""
    out = set()
    for doc in DOCS:
        in_table = False
        for line in (ROOT / doc).read_text().splitlines():
            if line.startswith("|"):
                in_table = True
                m = ID.match(line)
                if m:
                    out.add(m.group(1))
            elif in_table:
                break
    return out


load_checks()


def test_the_docs_have_ids():
    assert {"T0", "T1", "T3", "S1", "MW1", "MW7", "MW8d", "KF0", "KF4"} <= doc_ids()


def test_the_checks_read_the_one_registry():
    """proofs_checks keeps no theorem table of its own: its THEOREMS is bounds.theorems'."""
    assert THEOREMS == theorems.all_theorems()
    assert all(th is theorems.all_theorems()[tid] for tid, th in THEOREMS.items())


@pytest.mark.parametrize("tid", sorted(doc_ids()))
def test_every_doc_theorem_has_an_entry_a_bound_a_section_and_a_check(tid):
    assert tid in THEOREMS, f"{tid} is in the docs but has no @theorem entry in bounds/"
    th = THEOREMS[tid]
    assert th.lemma or callable(th.bound), f"{tid} has no bound function"
    assert checks_of(tid), f"{tid} has no machine check (name it in a check's theorems=)"
    doc, _, heading = th.doc.partition("#")
    assert any(line.lstrip("#").strip() == heading
               for line in (ROOT / doc).read_text().splitlines() if line.startswith("#")), \
        f"{tid}: no section {heading!r} in {doc}"


def test_every_registered_id_appears_in_the_docs():
    missing = set(THEOREMS) - doc_ids()
    assert not missing, f"registered in bounds.theorems but in no status table of {DOCS}: {missing}"


def _emittable_terms() -> set[str]:
    """Every term name lower_bound emits on a grid that reaches each branch of the term
    functions (fused and split, v = 1, 2, 3, both placements, K = 1, 2, big, None, m = 1, 2,
    5, per-stage costs and a delay)."""
    from bounds import lower_bound

    names = set()
    for v, pl in ((1, "looped"), (2, "looped"), (2, "vshape"), (3, "looped")):
        for K in (1, 2, 40, None):
            for m in (1, 2, 5):
                for d in (dict(f=1, b=2), dict(f=2, b=1), dict(f=1, b_I=1, b_W=1)):
                    inst = Instance(P=3, m=m, K=K, v=v, placement=pl, **d)
                    names |= {n for n, _ in lower_bound(inst).terms}
                    # the full model's forms (backward recomputation, docs/theory.md A.11)
                    names |= {n for n, _ in lower_bound(inst, backward_remat=True).terms}
    for d in (dict(f=[1, 2], b=[2, 3]), dict(f=[1, 2], b_I=[1, 1], b_W=[1, 2]), dict(c=1)):
        for K in (1, None):   # K = 1: the memory terms H5, H6 of per-stage costs
            names |= {n for n, _ in lower_bound(Instance(P=2, m=2, K=K, **d)).terms}
    # K = 1, v = 2 with a delay: H10
    names |= {n for n, _ in lower_bound(Instance(P=2, m=2, K=1, v=2, c=1)).terms}
    # two directions (MODEL.md, Directions): theorem D1 only
    names |= {n for n, _ in lower_bound(Instance(P=4, m=8, directions=2)).terms}
    return names


def test_every_term_lower_bound_emits_has_exactly_one_id():
    emitted = _emittable_terms()
    owners = {n: [t.id for t in THEOREMS.values() if n in t.terms] for n in emitted}
    bad = {n: ids for n, ids in owners.items() if len(ids) != 1}
    assert not bad, f"terms without exactly one theorem: {bad}"
    assert all(TERM_IDS[n] == owners[n][0] for n in emitted)
    # and no theorem claims a term lower_bound never emits (a stale name)
    claimed = {n for t in THEOREMS.values() for n in t.terms}
    assert claimed == emitted, claimed ^ emitted


def test_a_term_claimed_twice_is_caught(monkeypatch):
    """The derivation of TERM_IDS refuses a term owned by two theorems."""
    reg = dict(theorems._REGISTRY)
    reg["X1"] = theorems.Theorem("X1", "duplicate", theorems.SINGLE + "x", terms=("fill_drain",))
    monkeypatch.setattr(theorems, "_REGISTRY", reg)
    with pytest.raises(ValueError, match="fill_drain"):
        theorems.term_ids()


def test_each_exact_term_has_one_exact_theorem_with_a_condition():
    ex = theorems.exact_theorems()
    assert ex["mw_gpu_subset"].id == "MW8d" and ex["fill_drain"].id == "T1"
    assert all(callable(th.exact) for th in ex.values())


def test_every_term_id_is_registered_and_its_bound_evaluates_the_term():
    from bounds import lower_bound

    assert set(TERM_IDS.values()) <= set(THEOREMS)
    insts = [Instance(P=3, m=m, K=K, v=v, placement=pl, **d)
             for K in (1, 2, None) for m in (1, 4) for v, pl in ((1, "looped"), (2, "looped"), (2, "vshape"))
             for d in (dict(f=1, b=2), dict(f=2, b_I=1, b_W=1))]
    for inst in insts:
        lb = lower_bound(inst)
        for name, value in lb.terms:
            th = THEOREMS[TERM_IDS[name]]
            assert name in th.terms
            if len(th.terms) == 1 and th.id != "MW8d":   # one term: the function is the term
                assert th.bound(inst) == value, (name, inst)
        if lb.exact:  # the theorem named holds its exact case here
            assert THEOREMS[lb.theorem].exact(inst), (lb.theorem, inst)


def test_a_missing_check_is_caught(monkeypatch):
    """The test can fail: with no checks registered every theorem lacks one."""
    from proofs_checks import registry

    monkeypatch.setattr(registry, "CHECKS", [])
    assert not registry.checks_of("T1")
