"""torch's own pipelining runtime on local gloo processes, fed a torch-csv export (tests only).

:func:`run_csvs` runs every CSV in turn on ``P`` processes (the gloo set-up and the per-item
loop of :func:`pipebounds.torch.launch.run_on_ranks`, shared with ``pipebounds execute``); each
rank loads the CSV into ``_PipelineScheduleRuntime._load_csv`` with ``PipelineStage`` objects of
the built-in MLP (pipebounds.torch.models), runs one ``step`` (losses summed:
``scale_grads=False``) and returns its stages' gradients, or the error torch raised.
"""

from __future__ import annotations

import os
import tempfile

import torch

from pipebounds.torch.launch import run_on_ranks
from pipebounds.torch.models import ModelSpec, build_stages, loss_fn, microbatches
from schedules.interop.torch import instance_from_pipeline_order, read_torch_csv


def _run_csv(rank: int, text: str) -> dict:
    """One rank's step of torch's runtime on one compute-only CSV: ``{stage: [grads]}``."""
    from torch.distributed.pipelining import PipelineStage
    from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

    inst = instance_from_pipeline_order(read_torch_csv(text))
    spec = ModelSpec()
    mods = build_stages(spec, inst.S)
    inputs, targets = microbatches(spec, inst.m)
    stages = [PipelineStage(mods[s], s, inst.S, torch.device("cpu"))
              for s in inst.stages_of(rank)]
    sched = _PipelineScheduleRuntime(stages, inst.m, loss_fn=loss_fn, scale_grads=False)
    with tempfile.TemporaryDirectory(prefix="pipebounds-torchcsv-") as tmp:
        path = os.path.join(tmp, "s.csv")
        with open(path, "w") as fh:
            fh.write(text)
        sched._load_csv(path)
    args = (torch.cat(inputs),) if 0 in inst.stages_of(rank) else ()
    kwargs = (dict(target=torch.cat(targets), losses=[]) if inst.S - 1 in inst.stages_of(rank)
              else {})
    sched.step(*args, **kwargs)
    return {s: [p.grad.clone() if p.grad is not None else None for p in mods[s].parameters()]
            for s in inst.stages_of(rank)}


def run_csvs(csvs: list[str], P: int) -> list[list]:
    """Per CSV, per rank: ``{stage: [grad of each parameter]}`` or ``{"rank", "error": ...}``
    (None when the rank did not get to it)."""
    per_rank, _ = run_on_ranks(_run_csv, csvs, P, timeout=60)
    return [[rows[k] if k < len(rows) else None for rows in per_rank] for k in range(len(csvs))]


def planted_failure(rank: int, item: int) -> dict:
    """A task for :func:`run_on_ranks` that fails on rank 1 at item 1 (tests its failure path)."""
    if rank == 1 and item == 1:
        raise ValueError("planted")
    return {"rank": rank, "item": item}
