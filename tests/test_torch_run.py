"""pipebounds.torch.run_schedule on 2 and 4 local gloo processes (skipped without torch).

Every family of the generators at P = 2 (a few at P = 4), memory fitted at K = 1, an optimal
recompute with backward rematerialization, a v = 2 schedule and solver schedules whose last
stage runs its forwards out of microbatch order are executed on a small float64 MLP: on every
rank the gradients equal a sequential reference within 1e-9, the losses equal the reference's,
the executed actions are the document's order, and the measured peak of live (stage,
microbatch) activations (saved-tensor hooks) equals the simulator's peak.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch.distributed")

from schedules.generators import GENERATORS  # noqa: E402
from schedules.io import schedule_from_document  # noqa: E402
from torch_run_cases import cases, has_backward_remat, last_stage_out_of_order  # noqa: E402

CASES = {P: cases(P) for P in (2, 4)}


@pytest.fixture(scope="module")
def reports():
    from pipebounds.torch.launch import execute_documents

    out = {}
    for P, docs in CASES.items():  # one spawn per world size: every document in turn
        out[P] = dict(zip(docs, execute_documents(list(docs.values()), P)))
    return out


def test_the_cases_cover_what_the_issue_asks():
    two, four = CASES[2], CASES[4]
    assert {name.removeprefix("family ") for name in two if name.startswith("family ")} == \
        {n for n, g in GENERATORS.items() if g.requires.directions == 1}
    for docs in (two, four):
        assert any(last_stage_out_of_order(d) for n, d in docs.items() if n.startswith("solver"))
        assert has_backward_remat(docs["optimal_remat backward"])
        assert any(schedule_from_document(d).instance.v == 2 for d in docs.values())
        fitted = schedule_from_document(docs["fit_memory K=1 1f1b"])
        assert fitted.instance.K == 1 and any(op.kind == "R" for _, op in fitted.ops())


@pytest.mark.parametrize("P, name", [(P, n) for P in CASES for n in CASES[P]])
def test_run_matches_reference_and_simulator(reports, P, name):
    rep = reports[P][name]
    sched = schedule_from_document(CASES[P][name])
    assert rep["valid"]
    for r in rep["ranks"]:
        assert "error" not in r, r["error"]
        assert r["grad_error"] <= 1e-9, (r["rank"], r["grad_error"])
        assert r["peak_activations"] == r["simulated_peak"], r
        assert r["ops"] == [str(op) for op in sched.orders[r["rank"]]]
        assert r["peak_bytes"] > 0
    assert None not in rep["losses"] and rep["loss_error"] <= 1e-12


def test_run_on_ranks_reports_a_failing_rank():
    """The shared gloo launcher (pipebounds execute and the tests' torch-runtime worker): a
    task that raises on one rank is recorded there as that rank's error for that item, the
    items before it keep their results, and the failure is reported (no hang, no result made
    up for the item)."""
    from pipebounds.torch.launch import run_on_ranks
    from torch_runtime_worker import planted_failure

    per_rank, failure = run_on_ranks(planted_failure, [0, 1, 2], 2, timeout=30)
    assert failure is not None
    assert per_rank[1] == [{"rank": 1, "item": 0}, {"rank": 1, "error": "ValueError: planted"}]
    assert per_rank[0][0] == {"rank": 0, "item": 0} and len(per_rank[0]) <= 2
    assert all(r.get("item") != 2 for rows in per_rank for r in rows)
