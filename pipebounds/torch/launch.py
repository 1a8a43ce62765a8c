"""Run orders documents on local gloo processes and check them: :func:`execute_documents`
(``pipebounds execute``).

``world_size`` processes are spawned (``torch.multiprocessing``, start method ``spawn``), join
one gloo group on ``127.0.0.1`` (:func:`run_on_ranks`, :func:`init_gloo`: the set-up the
tests' torch-runtime worker shares) and run every document in turn with :func:`run_schedule` on a
built-in model (:mod:`.models`, the same parameters and microbatches on every rank). The parent
then computes, per document and rank,

* ``grad_error``: the largest absolute difference between the rank's parameter gradients and a
  sequential reference (one process, microbatch after microbatch, the same float arithmetic
  up to summation order);
* ``peak_activations`` measured against ``simulated_peak`` (:func:`schedules.simulate.simulate`'s
  ``peak_memory`` of the rank: the model predicts it exactly from the orders);
* ``step_seconds`` measured, and, when a profile (:mod:`.profile`) is given, the simulated
  makespan of the same orders with the profiled per-stage durations (``predicted_seconds``).
"""

from __future__ import annotations

import os
import socket
import tempfile
from datetime import timedelta
from functools import partial
from typing import Callable, Optional, Sequence

import torch

from schedules.io import schedule_from_document
from schedules.simulate import simulate

from .models import ModelSpec, build_stages, loss_fn, microbatches, sequential_reference
from .run import run_schedule
from schedules.instance import require_one_direction


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def init_gloo(rank: int, world: int, port: int, timeout: float) -> None:
    """Join the local gloo group of ``world`` ranks on ``127.0.0.1:port`` as ``rank`` (one
    thread, the loopback interface when there is one)."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    if os.path.isdir("/sys/class/net/lo"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=timeout))


def _rank_main(rank: int, world: int, port: int, task: Callable, items: list, outdir: str,
               timeout: float) -> None:
    """One spawned rank of :func:`run_on_ranks`: ``task(rank, item)`` for each item in turn,
    its results saved after each (``outdir/rank<r>.pt``); on an exception the rank records
    ``{"rank", "error"}`` and exits, so that its peers' receives fail at once instead of
    timing out."""
    import torch.distributed as dist

    init_gloo(rank, world, port, timeout)
    results: list = []
    path = os.path.join(outdir, f"rank{rank}.pt")
    try:
        for item in items:
            try:
                res = task(rank, item)
            except Exception as exc:  # noqa: BLE001 - reported to the parent per item
                results.append({"rank": rank, "error": f"{type(exc).__name__}: {exc}"})
                torch.save(results, path)
                raise SystemExit(1)
            results.append(res)
            torch.save(results, path)
            dist.barrier()
    finally:
        torch.save(results, path)
    dist.destroy_process_group()


def run_on_ranks(task: Callable, items: Sequence, world_size: int,
                 timeout: float = 120) -> tuple[list[list], Optional[str]]:
    """Run ``task(rank, item)`` (a picklable function) for every item, in order, on
    ``world_size`` spawned processes of one gloo group (:func:`init_gloo`), with a barrier
    after each item: ``(per_rank, failure)``, ``per_rank[r]`` the results rank ``r`` recorded
    (shorter than ``items`` when it stopped; an item it failed on is ``{"rank", "error"}``) and
    ``failure`` the last line of torch's report when a rank failed (None otherwise)."""
    import torch.multiprocessing as mp
    from torch.multiprocessing.spawn import ProcessException

    with tempfile.TemporaryDirectory(prefix="pipebounds-ranks-") as outdir:
        failure = None
        try:
            mp.spawn(_rank_main, args=(world_size, _free_port(), task, list(items), outdir,
                                       timeout), nprocs=world_size, join=True)
        except ProcessException as exc:  # a rank failed: its peers stopped too
            failure = str(exc).strip().splitlines()[-1][:300]
        per_rank = []
        for r in range(world_size):
            path = os.path.join(outdir, f"rank{r}.pt")
            per_rank.append(torch.load(path, weights_only=False) if os.path.exists(path) else [])
    return per_rank, failure


def _run_document(rank: int, doc: dict, spec: ModelSpec) -> dict:
    """One rank's part of one orders document (:func:`execute_documents`)."""
    inst = schedule_from_document(doc).instance
    stages = build_stages(spec, inst.S)
    mine = {s: stages[s] for s in inst.stages_of(rank)}
    inputs, targets = microbatches(spec, inst.m)
    res = run_schedule(doc, mine, inputs, targets, loss_fn)
    res["grads"] = {s: [p.grad.detach().clone() if p.grad is not None
                        else torch.zeros_like(p) for p in mod.parameters()]
                    for s, mod in mine.items()}
    return res


def execute_documents(docs: Sequence[dict], world_size: int, spec: Optional[ModelSpec] = None,
                      check: bool = True, profile: Optional[dict] = None,
                      timeout: float = 120) -> list[dict]:
    """Run each orders document of ``docs`` (all with ``P = world_size``) once on
    ``world_size`` spawned gloo processes and report per document: ``ranks`` (one dict per
    rank: ``peak_activations``, ``simulated_peak``, ``peak_bytes``, ``step_seconds``,
    ``grad_error`` when ``check``, ``error`` if the rank failed), ``losses``, ``makespan``
    (model units), ``predicted_seconds`` (with ``profile``: the makespan of the same orders
    with the profiled per-stage durations, :func:`.profile.instance_with_profile`) and
    ``measured_seconds`` (the slowest rank's step)."""
    spec = spec or ModelSpec()
    docs = [dict(d["schedule"]) if "orders" not in d and isinstance(d.get("schedule"), dict)
            else dict(d) for d in docs]
    for doc in docs:
        inst = schedule_from_document(doc).instance
        require_one_direction(inst, "torch execution (execute)")
        P = inst.P
        if P != world_size:
            raise ValueError(f"a document has P={P} GPUs but --world-size is {world_size}")
    got, failure = run_on_ranks(partial(_run_document, spec=spec), docs, world_size, timeout)
    per_rank = [rows + [{"rank": r, "error": f"did not run: a rank failed ({failure})"}]
                * (len(docs) - len(rows)) for r, rows in enumerate(got)]
    reports = []
    for k, doc in enumerate(docs):
        sched = schedule_from_document(doc)
        inst = sched.instance
        sim = simulate(sched)
        ref_grads = None
        if check:
            stages = build_stages(spec, inst.S)
            inputs, targets = microbatches(spec, inst.m)
            ref_losses, ref_grads = sequential_reference(stages, inputs, targets)
        ranks, losses = [], {}
        for r in range(world_size):
            res = per_rank[r][k]
            out = {"rank": r, "simulated_peak": sim.peak_memory[r] if sim.peak_memory else None}
            if "error" in res:
                out["error"] = res["error"]
                ranks.append(out)
                continue
            out.update({key: res[key] for key in ("peak_activations", "peak_bytes",
                                                  "peak_checkpoint_bytes", "step_seconds",
                                                  "ops", "op_seconds", "wait_seconds")})
            losses.update(res["losses"])
            if check:
                err = 0.0
                for s, grads in res["grads"].items():
                    for g, ref in zip(grads, ref_grads[s]):
                        err = max(err, float((g - ref).abs().max()) if g.numel() else 0.0)
                out["grad_error"] = err
            ranks.append(out)
        report = {"ranks": ranks, "losses": [losses.get(j) for j in range(inst.m)],
                  "valid": sim.valid, "makespan": sim.makespan,
                  "measured_seconds": max((x.get("step_seconds", 0.0) for x in ranks),
                                          default=0.0)}
        if check:
            report["loss_error"] = max(abs(a - b) for a, b in zip(report["losses"], ref_losses)
                                       if a is not None) if losses else None
        if profile is not None:
            from .profile import instance_with_profile

            timed = simulate(sched.with_instance(instance_with_profile(inst, profile)))
            report["predicted_seconds"] = float(timed.makespan) / 1e6 if timed.makespan else None
        reports.append(report)
    return reports


def max_grad_error(report: dict) -> float:
    """The largest ``grad_error`` over the ranks of one report (inf when a rank failed)."""
    return max((r.get("grad_error", float("inf")) for r in report["ranks"]), default=0.0)


def profile_spec(spec: ModelSpec, S: int, repeat: int = 5) -> dict:
    """:func:`.profile.profile_stages` of the built-in model ``spec`` cut into ``S`` stages
    (one microbatch of ``spec.microbatch_size``)."""
    from .profile import profile_stages

    torch.set_num_threads(1)  # as each executing rank runs
    inputs, targets = microbatches(spec, 1)
    return profile_stages(build_stages(spec, S), inputs[0], targets[0], loss_fn, repeat)


def execute(doc: dict, world_size: int, spec: Optional[ModelSpec] = None, check: bool = True,
            warmup: bool = True) -> dict:
    """Run one orders document (``pipebounds execute``): profile the built-in model on this
    process, run the document on ``world_size`` gloo ranks (a warm-up step first when
    ``warmup``, then the measured one, :func:`execute_documents`) and compare per rank the
    measured peak activations with the simulator's, the measured peak bytes of saved tensors
    with the bytes model of the profile (``predicted_peak_bytes``: the simulator's
    ``peak_bytes`` minus the static bytes), and the slowest rank's step time with the makespan
    of the orders under the profiled durations (``predicted_seconds``)."""
    from .profile import instance_with_profile

    spec = spec or ModelSpec()
    sched = schedule_from_document(doc)
    profile = profile_spec(spec, sched.instance.S)
    runs = execute_documents([doc, doc] if warmup else [doc], world_size, spec, check, profile)
    report = runs[-1]
    timed_inst = instance_with_profile(sched.instance, profile)
    timed = simulate(sched.with_instance(timed_inst))
    static = timed_inst.memory.static
    for r in report["ranks"]:
        p = r["rank"]
        r["predicted_peak_bytes"] = (int(timed.peak_bytes[p] - static[p])
                                     if timed.peak_bytes is not None else None)
    report["profile"] = profile
    report["model"] = {"name": spec.name, "width": spec.width, "seq": spec.seq,
                       "heads": spec.heads, "microbatch_size": spec.microbatch_size,
                       "dtype": spec.dtype}
    return report
