"""The theorem registry (proofs_checks/registry.py): one entry per theorem id of the docs, each
with a bound function, its docs section and at least one machine check; every term of
``lower_bound`` carries a registered id."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bounds.evaluate import TERM_IDS
from proofs_checks import load_checks
from proofs_checks.registry import THEOREMS, checks_of
from schedules import Instance

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("docs/theory.md", "docs/theory_multiwave.md")
ID = re.compile(r"^\| ((?:T|S|MW|H)\d+[a-z]?)\b")


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
    assert {"T0", "T1", "T3", "S1", "MW1", "MW7", "MW8d"} <= doc_ids()


@pytest.mark.parametrize("tid", sorted(doc_ids()))
def test_every_doc_theorem_has_an_entry_a_bound_a_section_and_a_check(tid):
    assert tid in THEOREMS, f"{tid} is in the docs but not in proofs_checks.registry.THEOREMS"
    th = THEOREMS[tid]
    assert th.lemma or callable(th.bound), f"{tid} has no bound function"
    assert checks_of(tid), f"{tid} has no machine check (name it in a check's theorems=)"
    doc, _, heading = th.doc.partition("#")
    assert any(line.lstrip("#").strip() == heading
               for line in (ROOT / doc).read_text().splitlines() if line.startswith("#")), \
        f"{tid}: no section {heading!r} in {doc}"


def test_registry_has_no_theorem_the_docs_lack():
    assert set(THEOREMS) <= doc_ids()


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
