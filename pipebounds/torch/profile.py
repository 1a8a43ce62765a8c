"""Measure a model cut into stages on this device: :func:`profile_stages` (``pipebounds profile``).

For each stage ``s`` (a module, in pipeline order) and one microbatch, the median over
``repeat`` runs (after one warm-up) of the wall time of

* ``F``: the forward (on the last stage with the loss),
* ``I``: the input gradient, as :func:`run_schedule` runs it (torch's split,
  ``stage_backward_input``; the first stage has no input gradient, ``I = 0`` there is
  reported as the smallest unit),
* ``W``: the weight gradient (``stage_backward_weight``; on the first stage the whole backward
  to the weights, as in :func:`run_schedule`),

and, from the same saved-tensor hooks as :func:`run_schedule`, ``activation[s]`` (``a_s``:
bytes of the distinct storages autograd saves in the forward, parameters excluded) and
``kept_after_input[s]`` (``g_s``: those still held after ``I``), plus ``param_bytes[s]``
(parameters and their gradients). :func:`instance_object` writes these as the instance object
of CLI.md (``--instance FILE``): per-stage ``f``, ``b_input``, ``b_weight`` in whole
microseconds (at least 1), ``memory`` with ``activation``, ``kept_after_input``, ``static`` (per
GPU: the parameter and gradient bytes of its stages) and ``budget`` null (give one with
``--budget-bytes`` or edit it).
"""

from __future__ import annotations

import statistics
import time
from fractions import Fraction
from typing import Callable, Optional, Sequence

import torch

from schedules.instance import Instance

from .run import _Meter, _backward, _hooks, _split_backward


def _one(stage, s: int, S: int, x, target, loss_fn, meter):
    """One F, I, W of stage ``s`` on input ``x``: (times, a_s, g_s, output)."""
    xl = x.detach()
    if s > 0:
        xl.requires_grad_(True)
    meter.peak_bytes = meter.bytes = 0
    t0 = time.perf_counter()
    with _hooks(meter, (s, 0)):
        y = stage(xl)
        out = loss_fn(y, target) if s == S - 1 else y
    t1 = time.perf_counter()
    y_next = y.detach()
    del y  # as run_schedule: only the stage output's value goes on (its graph is in ``out``)
    a = meter.bytes
    gy = None if s == S - 1 else torch.randn_like(out)
    if s > 0:
        _, groups = _split_backward().stage_backward_input(
            [out], None if gy is None else [gy], [xl], stage.parameters())
        del out
        t2 = time.perf_counter()
        g = meter.bytes
        _split_backward().stage_backward_weight(stage.parameters(), groups)
        del groups
    else:
        t2 = time.perf_counter()
        g = meter.bytes
        _backward(stage, out, gy, None, weights=True)
        del out
    t3 = time.perf_counter()
    stage.zero_grad(set_to_none=True)
    return (t1 - t0, t2 - t1, t3 - t2), a, g, y_next


def profile_stages(stages: Sequence[torch.nn.Module], sample, target, loss_fn: Callable,
                   repeat: int = 5) -> dict:
    """Per-stage times (seconds, medians of ``repeat`` runs after a warm-up) and bytes of
    ``stages`` run in order on the microbatch ``sample`` with ``loss_fn(output, target)`` on the
    last stage: ``{"f", "b_input", "b_weight", "activation", "kept_after_input",
    "param_bytes"}``, one list entry per stage (see the module docstring)."""
    if not stages:
        raise ValueError("profile_stages: no stage given")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a whole number >= 1, got {repeat!r}")
    _split_backward()  # import before timing
    S = len(stages)
    out: dict[str, list] = {k: [] for k in ("f", "b_input", "b_weight", "activation", "kept_after_input",
                           "param_bytes")}
    x = sample
    for s, stage in enumerate(stages):
        params = list(stage.parameters())
        meter = _Meter(params)
        runs = []
        for _ in range(repeat + 1):
            times, a, g, y = _one(stage, s, S, x, target, loss_fn, meter)
            runs.append(times)
        runs = runs[1:]
        for k, key in enumerate(("f", "b_input", "b_weight")):
            out[key].append(statistics.median(r[k] for r in runs))
        out["activation"].append(a)
        out["kept_after_input"].append(g)
        out["param_bytes"].append(2 * sum(p.numel() * p.element_size() for p in params))
        x = y
    return out


def _micros(seconds: float) -> int:
    return max(1, round(seconds * 1e6))


def instance_with_profile(inst: Instance, profile: dict) -> Instance:
    """``inst`` (its ``P``, ``m``, placement, ``K``) with the profiled per-stage durations in
    microseconds (``F``; split ``I``, ``W``, or fused ``B = I + W``) and the bytes model of the
    profile (budget None, so memory is measured, never binding)."""
    S = inst.S
    if len(profile["f"]) != S:
        raise ValueError(f"the profile has {len(profile['f'])} stages, the instance {S}")
    f = [Fraction(_micros(t)) for t in profile["f"]]
    bi = [Fraction(_micros(t)) for t in profile["b_input"]]
    bw = [Fraction(_micros(t)) for t in profile["b_weight"]]
    memory = memory_object(inst, profile, budget=None)
    from schedules.memory import memory_from_json

    kw = dict(f=f, memory=memory_from_json(memory), K=None)
    if inst.split:
        kw.update(b_I=bi, b_W=bw, b=None)
    else:
        kw.update(b=[i + w for i, w in zip(bi, bw)])
    return inst.with_(**kw)


def memory_object(inst: Instance, profile: dict, budget=None) -> dict:
    """The ``memory`` object (CLI.md) of the profile on ``inst``'s placement: ``static[p]`` is the
    parameter bytes of every stage GPU ``p`` holds (with ``directions = 2`` one stage of each
    copy, so twice: MODEL.md, *Directions*)."""
    static = [sum(profile["param_bytes"][s] for _, s in inst.held_stages(p))
              for p in range(inst.P)]
    return {"activation": [int(a) for a in profile["activation"]],
            "kept_after_input": [int(g) for g in profile["kept_after_input"]],
            "static": static, "budget": budget}


def instance_object(profile: dict, P: int, m: int, v: int = 1, placement: str = "looped",
                    split: bool = True, budget=None, model: Optional[dict] = None) -> dict:
    """The instance object (CLI.md third round; what ``--instance FILE`` reads) of a profile:
    ``P``, ``m``, ``v``, ``placement``, per-stage ``f`` and ``b_input``/``b_weight`` (split) or
    ``b`` (fused) in whole microseconds, ``memory`` in bytes, and ``model`` (what was
    profiled)."""
    S = len(profile["f"])
    if S != P * v:
        raise ValueError(f"{S} profiled stages are not P*v = {P}*{v}")
    inst = Instance(P=P, m=m, v=v, placement=placement)
    obj = {"P": P, "m": m, "v": v, "placement": placement,
           "f": [_micros(t) for t in profile["f"]]}
    bi = [_micros(t) for t in profile["b_input"]]
    bw = [_micros(t) for t in profile["b_weight"]]
    if split:
        obj.update(b_input=bi, b_weight=bw)
    else:
        obj["b"] = [i + w for i, w in zip(bi, bw)]
    obj["memory"] = memory_object(inst, profile, budget)
    if model is not None:
        obj["model"] = model
    return obj
