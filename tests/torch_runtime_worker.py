"""torch's own pipelining runtime on local gloo processes, fed a torch-csv export (tests only).

:func:`run_csvs` spawns ``P`` processes; each loads every CSV in turn into
``_PipelineScheduleRuntime._load_csv`` with ``PipelineStage`` objects of the built-in MLP
(pipebounds.torch.models), runs one ``step`` (losses summed: ``scale_grads=False``) and returns
its stages' gradients, or the error torch raised.
"""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta

import torch

from pipebounds.torch.launch import _free_port
from pipebounds.torch.models import ModelSpec, build_stages, loss_fn, microbatches
from schedules.interop.torch import instance_from_pipeline_order, read_torch_csv


def _worker(rank, world, port, csvs, outdir):
    import torch.distributed as dist
    from torch.distributed.pipelining import PipelineStage
    from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

    torch.set_num_threads(1)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=60))
    out = []
    try:
        for k, text in enumerate(csvs):
            inst = instance_from_pipeline_order(read_torch_csv(text))
            spec = ModelSpec()
            mods = build_stages(spec, inst.S)
            inputs, targets = microbatches(spec, inst.m)
            stages = [PipelineStage(mods[s], s, inst.S, torch.device("cpu"))
                      for s in inst.stages_of(rank)]
            sched = _PipelineScheduleRuntime(stages, inst.m, loss_fn=loss_fn, scale_grads=False)
            path = os.path.join(outdir, f"s{k}.csv")
            with open(path, "w") as fh:
                fh.write(text)
            sched._load_csv(path)
            kwargs = {}
            if 0 in inst.stages_of(rank):
                args = (torch.cat(inputs),)
            else:
                args = ()
            if inst.S - 1 in inst.stages_of(rank):
                kwargs = dict(target=torch.cat(targets), losses=[])
            try:
                sched.step(*args, **kwargs)
                res = {s: [p.grad.clone() if p.grad is not None else None
                           for p in mods[s].parameters()] for s in inst.stages_of(rank)}
            except Exception as exc:  # noqa: BLE001 - what torch does is the result
                res = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                out.append(res)
                torch.save(out, os.path.join(outdir, f"rank{rank}.pt"))
                raise SystemExit(1)
            out.append(res)
            torch.save(out, os.path.join(outdir, f"rank{rank}.pt"))
            dist.barrier()
    finally:
        torch.save(out, os.path.join(outdir, f"rank{rank}.pt"))
    dist.destroy_process_group()


def run_csvs(csvs: list[str], P: int) -> list[list]:
    """Per CSV, per rank: ``{stage: [grad of each parameter]}`` or ``{"error": ...}`` (None when
    the rank did not get to it)."""
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory(prefix="pipebounds-torchcsv-") as outdir:
        try:
            mp.spawn(_worker, args=(P, _free_port(), csvs, outdir), nprocs=P, join=True)
        except Exception:  # noqa: BLE001 - a rank failed: read what each one recorded
            pass
        per_rank = []
        for r in range(P):
            path = os.path.join(outdir, f"rank{r}.pt")
            per_rank.append(torch.load(path, weights_only=False) if os.path.exists(path) else [])
    return [[rows[k] if k < len(rows) else None for rows in per_rank] for k in range(len(csvs))]
