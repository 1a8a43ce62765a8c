"""The torch-csv export runs correctly in torch's own runtime (skipped without torch).

The planted fault: a valid schedule whose last stage runs its forwards out of microbatch order.
torch 2.13 keeps losses in forward order and reads them by microbatch number, so the order
written as it is trains wrongly (split backward: no error, wrong gradients); the export
renumbers the microbatches and torch's runtime then gives the sequential reference's gradients.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch.distributed.pipelining")

from pipebounds.torch.models import ModelSpec, build_stages, microbatches, sequential_reference  # noqa: E402
from schedules import Instance, Schedule, simulate  # noqa: E402
from schedules.interop.torch import to_torch_csv, torch_microbatch_numbers  # noqa: E402
from torch_runtime_worker import run_csvs  # noqa: E402

SPLIT = Schedule.from_strings(Instance(P=2, m=4, b_I=1, b_W=1), {
    0: ["0F0", "0F1", "0F2", "0F3", "0I0", "0W0", "0I2", "0W2", "0I1", "0W1", "0I3", "0W3"],
    1: ["1F0", "1I0", "1W0", "1F2", "1I2", "1W2", "1F1", "1I1", "1W1", "1F3", "1I3", "1W3"]})
FUSED = Schedule.from_strings(Instance(P=2, m=4), {
    0: ["0F0", "0F1", "0F2", "0F3", "0B0", "0B2", "0B1", "0B3"],
    1: ["1F0", "1B0", "1F2", "1B2", "1F1", "1B1", "1F3", "1B3"]})


def grad_error(result, S):
    ref = sequential_reference(build_stages(ModelSpec(), S), *microbatches(ModelSpec(), 4))[1]
    err = 0.0
    for rank_result in result:
        for s, grads in rank_result.items():
            for g, r in zip(grads, ref[s]):
                err = max(err, float("inf") if g is None else float((g - r).abs().max()))
    return err


def _transport_fault(r) -> bool:
    """A rank that recorded nothing, or gloo's own report of a lost peer."""
    return r is None or ("error" in r and "Connection closed" in r["error"])


def test_planted_fault_is_wrong_as_written_and_right_once_renumbered():
    for sched in (SPLIT, FUSED):
        assert simulate(sched).valid and torch_microbatch_numbers(sched) == (0, 2, 1, 3)
    raw_split = to_torch_csv(SPLIT, renumber=False)
    fixed = [to_torch_csv(SPLIT), to_torch_csv(FUSED)]
    assert "1F1" in raw_split.splitlines()[1].split(",")[6] and fixed[0] != raw_split
    results = run_csvs([fixed[0], fixed[1], raw_split], 2)
    if any(_transport_fault(r) for res in results[:2] for r in res):
        # gloo lost a rank (a peer's "Connection closed", seen once on a loaded machine): that is
        # no answer about the export, so the three runs go once more and are judged as before
        results = run_csvs([fixed[0], fixed[1], raw_split], 2)
    for res in results[:2]:
        assert all(r is not None and "error" not in r for r in res), res
        assert grad_error(res, 2) <= 1e-9
    raw = results[2]
    # as written, torch's runtime trains wrongly: it fails or its gradients are off
    failed = any(r is None or "error" in r for r in raw)
    assert failed or grad_error(raw, 2) > 1e-6
