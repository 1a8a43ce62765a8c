"""Execute an orders document in torch: :func:`run_schedule` (docs/interop.md, *Running a schedule*).

Every rank of an initialized ``torch.distributed`` group runs its GPU's order exactly as written
(MODEL.md, *Orders*), one op at a time:

* ``F(j,s)``: the stage's forward. It keeps its autograd graph (the saved tensors are the pair's
  activation) unless the document recomputes ``(j,s)`` before its input gradient; then it runs
  under ``torch.no_grad()`` and keeps only the stage input (the checkpoint, free in the model).
  On the last stage the forward includes ``loss_fn(output, target)``.
* ``R(j,s)`` before the input gradient: the forward again from the kept input, with its graph.
  ``R(j,s)`` after ``I(j,s)`` (backward rematerialization, MODEL.md): the same, for ``W``.
* ``B(j,s)``: the full backward of the stage (input gradient and weight gradients), then the
  graph is freed.
* ``I(j,s)``: the input gradient only. Without a later ``R`` it keeps what ``W`` needs (torch's own
  split, ``torch.distributed.pipelining._backward.stage_backward_input``: the graph above the
  weight nodes is freed, the weight nodes' inputs stay); with a later ``R`` it frees the whole
  graph. ``W(j,s)``: the weight gradients (``stage_backward_weight``, or a backward to the
  parameters of the recomputed graph), then everything of the pair is freed. The first stage has
  no input gradient to send, so its ``I`` computes nothing and its ``W`` does the whole backward
  to the weights.

An overlapped ``F&B`` op (MODEL.md, third round) runs as its two parts one after the other, in
the order the document lists them (backward part first: the order of their memory effects), so
its measured memory is the model's; only the time saving of the overlap is not realized.

Gradients accumulate in the modules' ``.grad`` as the sum over microbatches of
``loss_fn(output_j, target_j)``.

**Communication.** A stage output (or input gradient) needed by a stage on another rank is sent
as soon as it is computed, with a non-blocking ``isend`` (a small header with shape and dtype,
then the data, each with a tag unique to the message); a rank receives (``irecv`` + ``wait``) just
before the op that needs the tensor. Sends never wait for the receiver: these are the *buffered*
semantics of MODEL.md (torch's dry run), under which every valid document finishes: a rank only
waits for the op that produced its input, which by validity (an ASAP timing exists) runs without
waiting for this one. All sends are waited for at the end of the step.

**Measurement.** Saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks``) wrap each
tensor autograd saves during a forward of ``(j,s)`` (parameters excluded) in a holder; a holder
lives exactly as long as autograd keeps that tensor. A pair is live while any of its holders is;
``peak_activations`` is the largest number of live pairs at once on this rank (MODEL.md's count,
which :func:`schedules.simulate.simulate` predicts exactly from the orders), ``peak_bytes`` the
largest total size of the distinct storages held (on any device). The kept inputs of recomputed
pairs (the checkpoints) are not counted there, as in the model; ``peak_checkpoint_bytes`` reports
them.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

import torch
import torch.distributed as dist

from schedules.io import schedule_from_document
from schedules.schedule import Schedule
from schedules.simulate import simulate

_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64,
           torch.int32, torch.bool)
_HEADER = 10  # dtype code, ndim, up to 8 dims


class RunError(ValueError):
    """A document, stage map or input that :func:`run_schedule` cannot execute; the message
    names the problem."""


class _Meter:
    """Live (stage, microbatch) pairs and bytes of the tensors autograd holds for them."""

    def __init__(self, params: Sequence[torch.Tensor]):
        self.param_storages = {_storage_key(p) for p in params}
        self.count: dict[tuple, int] = {}
        self.storages: dict[tuple, dict] = {}
        self.live = 0
        self.bytes = 0
        self.peak = 0
        self.peak_bytes = 0

    def add(self, pair, tensor) -> None:
        n = self.count.get(pair, 0)
        self.count[pair] = n + 1
        if n == 0:
            self.live += 1
            self.peak = max(self.peak, self.live)
        key = _storage_key(tensor)
        held = self.storages.setdefault(pair, {})
        refs, size = held.get(key, (0, _storage_bytes(tensor)))
        if refs == 0:
            self.bytes += size
            self.peak_bytes = max(self.peak_bytes, self.bytes)
        held[key] = (refs + 1, size)

    def drop(self, pair, key) -> None:
        held = self.storages[pair]
        refs, size = held[key]
        if refs == 1:
            del held[key]
            self.bytes -= size
        else:
            held[key] = (refs - 1, size)
        self.count[pair] -= 1
        if self.count[pair] == 0:
            del self.count[pair]
            self.live -= 1


def _storage_key(t: torch.Tensor):
    try:
        st = t.untyped_storage()
        return (t.device.type, t.device.index, st.data_ptr(), st.nbytes())
    except (RuntimeError, NotImplementedError):  # a tensor without storage (e.g. sparse)
        return ("id", id(t))


def _storage_bytes(t: torch.Tensor) -> int:
    try:
        return int(t.untyped_storage().nbytes())
    except (RuntimeError, NotImplementedError):
        return int(t.numel() * t.element_size())


class _Held:
    """One saved tensor of one pair; its end (autograd dropping it) is the meter's release."""

    __slots__ = ("tensor", "meter", "pair", "key", "__weakref__")

    def __init__(self, meter: _Meter, pair, tensor):
        # detached: holding a saved output itself would make a cycle through its grad_fn that
        # no collector sees (the tensor would outlive its graph)
        self.tensor, self.meter, self.pair = tensor.detach(), meter, pair
        self.key = _storage_key(tensor)
        meter.add(pair, tensor)

    def __del__(self):
        self.meter.drop(self.pair, self.key)


def _hooks(meter: _Meter, pair):
    def pack(t):
        if _storage_key(t) in meter.param_storages:
            return t
        return _Held(meter, pair, t)

    def unpack(x):
        return x.tensor if isinstance(x, _Held) else x

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


class _Comm:
    """Tagged point-to-point messages of one step: buffered sends, receives when needed."""

    def __init__(self, schedule: Schedule, group):
        self.group = group
        self.S, self.m = schedule.instance.S, schedule.instance.m
        self.pending: list = []

    def _peer(self, p: int) -> int:
        return p if self.group is None else dist.get_global_rank(self.group, p)

    def _tag(self, kind: int, s: int, j: int) -> int:
        return 2 * ((kind * self.S + s) * self.m + j)

    def send(self, tensor: torch.Tensor, p: int, kind: int, s: int, j: int) -> None:
        tensor = tensor.detach().contiguous()
        if tensor.dtype not in _DTYPES or tensor.dim() > _HEADER - 2:
            raise RunError(f"stage {s} microbatch {j}: cannot send a {tensor.dtype} tensor of "
                           f"{tensor.dim()} dimensions")
        header = torch.zeros(_HEADER, dtype=torch.int64)
        header[0], header[1] = _DTYPES.index(tensor.dtype), tensor.dim()
        header[2:2 + tensor.dim()] = torch.tensor(tensor.shape, dtype=torch.int64)
        tag, dst = self._tag(kind, s, j), self._peer(p)
        for t, k in ((header, tag), (tensor, tag + 1)):
            self.pending.append((dist.isend(t, dst, group=self.group, tag=k), t))

    def recv(self, p: int, kind: int, s: int, j: int) -> torch.Tensor:
        tag, src = self._tag(kind, s, j), self._peer(p)
        header = torch.zeros(_HEADER, dtype=torch.int64)
        dist.irecv(header, src, group=self.group, tag=tag).wait()
        dims = [int(x) for x in header[2:2 + int(header[1])]]
        out = torch.empty(dims, dtype=_DTYPES[int(header[0])])
        dist.irecv(out, src, group=self.group, tag=tag + 1).wait()
        return out

    def finish(self) -> None:
        for work, _ in self.pending:
            work.wait()
        self.pending.clear()


def _as_schedule(doc) -> Schedule:
    if isinstance(doc, Schedule):
        return doc
    if isinstance(doc, Mapping) and "orders" not in doc and isinstance(doc.get("schedule"),
                                                                       Mapping):
        doc = doc["schedule"]
    try:
        return schedule_from_document(dict(doc))
    except (TypeError, ValueError) as exc:
        raise RunError(f"not an orders document: {exc}") from None


def _split_backward():
    """torch's split backward (``stage_backward_input``/``stage_backward_weight``, what its
    pipelining runtime runs for ``I`` and ``W``; private API of torch 2.13)."""
    import importlib

    return importlib.import_module("torch.distributed.pipelining._backward")


def _backward(module, out, gy, x, weights: bool):
    """Backward of one stage from ``out`` (its output, or the loss) with output gradient ``gy``
    (None for the loss): the input gradient (None when ``x`` is None or needs none), and, when
    ``weights``, the weight gradients added to ``.grad``. The graph is freed."""
    wants = [x] if x is not None and x.requires_grad else []
    params = [p for p in module.parameters() if p.requires_grad] if weights else []
    if not wants and not params:
        return None
    grads = torch.autograd.grad([out], wants + params, None if gy is None else [gy],
                                allow_unused=True)
    for p, g in zip(params, grads[len(wants):]):
        if g is not None:
            if p.grad is None:
                p.grad = g
            else:
                p.grad += g
    return grads[0] if wants else None


def _recompute_positions(order) -> tuple[set, set]:
    """Pairs of one GPU's order with an ``R`` before their input gradient, and after it."""
    before: set = set()
    after: set = set()
    grad_done: set = set()
    for op in order:
        pair = (op.stage, op.microbatch)
        if op.kind in ("B", "I"):
            grad_done.add(pair)
        elif op.kind == "R":
            (after if pair in grad_done else before).add(pair)
    return before, after


def run_schedule(doc, stages: Mapping[int, torch.nn.Module], inputs: Sequence[torch.Tensor],
                 targets: Sequence[Any], loss_fn: Callable, group=None) -> dict:
    """Run one training step of the orders document ``doc`` on this rank (see the module
    docstring for what each op does and how ranks communicate).

    Parameters
    ----------
    doc : dict or Schedule
        An orders document (CLI.md), or an object wrapping one under ``schedule``; it must be
        valid (:func:`schedules.simulate.simulate`), with ``P`` = the group's size.
    stages : mapping
        ``stage index -> nn.Module`` for exactly the stages the document places on this rank
        (``stage_to_rank[s]`` = this rank in ``group``). A stage maps one tensor to one tensor.
    inputs, targets : sequences of length ``m``
        The microbatches; ``inputs`` is read on the rank of stage 0, ``targets`` on the rank of
        stage ``S - 1`` (others may pass anything, e.g. empty lists).
    loss_fn : callable
        ``loss_fn(output, target)`` -> the scalar loss of one microbatch. The gradients left in
        the modules' ``.grad`` are those of ``sum_j loss_fn(output_j, target_j)`` (added to any
        gradient already there).
    group : process group, optional
        Default: the default group. GPU ``p`` of the document is rank ``p`` of the group.

    Returns
    -------
    dict
        ``rank``; ``losses``: ``{j: float}`` on the rank of the last stage (empty elsewhere);
        ``peak_activations``: the largest number of (stage, microbatch) pairs whose saved tensors
        were held at once; ``peak_bytes``: the largest number of bytes of distinct saved
        storages held at once; ``peak_checkpoint_bytes``: the same for the kept inputs of
        recomputed pairs; ``ops``: the executed actions in order; ``op_seconds``: the wall time
        of each (compute only); ``wait_seconds``: the time each op waited for its receive;
        ``step_seconds``: the rank's wall time from a barrier to its last op.
    """
    schedule = _as_schedule(doc)
    inst = schedule.instance
    result = simulate(schedule)
    if not result.valid:  # an invalid order may deadlock: refuse it on every rank alike
        raise RunError(f"the document is not a valid schedule: {result.errors[0]}")
    redo = [str(op) for _, op in schedule.ops() if op.kind == "RI"]
    if redo:  # the third remat option re-runs I: not executed by this runtime
        raise RunError(f"the runtime does not execute RI ops (the input gradient re-run before "
                       f"W, the third remat option), e.g. {redo[0]}")
    world = dist.get_world_size(group)
    rank = dist.get_rank(group)
    if world != inst.P:
        raise RunError(f"the document has P={inst.P} GPUs but the process group has {world} ranks")
    mine = set(inst.stages_of(rank))
    if set(stages) != mine:
        raise RunError(f"rank {rank} holds stages {sorted(mine)} in the document, but was given "
                       f"modules for {sorted(stages)}")
    S, m = inst.S, inst.m
    if 0 in mine and len(inputs) < m:
        raise RunError(f"{len(inputs)} input microbatches for m={m}")
    if S - 1 in mine and len(targets) < m:
        raise RunError(f"{len(targets)} target microbatches for m={m}")
    order = schedule.orders[rank]
    fwd_remat, bwd_remat = _recompute_positions(order)
    params = [p for mod in stages.values() for p in mod.parameters()]
    meter = _Meter(params)
    comm = _Comm(schedule, group)
    gpu = inst.gpu

    local_act: dict = {}   # (s, j) -> output of stage s - 1 computed on this rank
    local_grad: dict = {}  # (s, j) -> gradient of stage s's output, computed on this rank
    state: dict = {}       # (s, j) -> {"x", "out", "gy", "groups"}
    peak_ckpt = 0
    losses: dict[int, float] = {}

    def stage_input(s, j):
        if s == 0:
            return inputs[j]
        if gpu(s - 1) == rank:
            return local_act.pop((s, j))
        return comm.recv(gpu(s - 1), 0, s, j)

    def output_grad(s, j):
        if s == S - 1:
            return None
        if gpu(s + 1) == rank:
            return local_grad.pop((s, j))
        return comm.recv(gpu(s + 1), 1, s, j)

    def forward(s, j, x, keep_graph):
        """The stage's output (the loss on the last stage) and the leaf input."""
        xl = x.detach()
        if keep_graph and s > 0 and xl.is_floating_point():
            xl.requires_grad_(True)
        if keep_graph:
            with _hooks(meter, (s, j)):
                y = stages[s](xl)
                out = loss_fn(y, targets[j]) if s == S - 1 else y
        else:
            with torch.no_grad():
                y = stages[s](xl)
                out = loss_fn(y, targets[j]) if s == S - 1 else y
        return xl, y, out

    def give_output(s, j, y):
        if s == S - 1:
            return
        if gpu(s + 1) == rank:
            local_act[(s + 1, j)] = y.detach()
        else:
            comm.send(y, gpu(s + 1), 0, s + 1, j)

    def give_input_grad(s, j, gx, x):
        if s == 0:
            return
        if gx is None:  # the stage output does not depend on its input
            gx = torch.zeros_like(x)
        if gpu(s - 1) == rank:
            local_grad[(s - 1, j)] = gx.detach()
        else:
            comm.send(gx, gpu(s - 1), 1, s - 1, j)

    if any(op.kind == "I" for op in order):  # import before the clock starts (seconds, once)
        _split_backward()

    ops, op_seconds, wait_seconds = [], [], []
    dist.barrier(group=group)
    t0 = time.perf_counter()
    for op in order:
        s, j, kind = op.stage, op.microbatch, op.kind
        pair = (s, j)
        t_wait = time.perf_counter()
        if kind == "F":
            x = stage_input(s, j)
        elif kind in ("B", "I"):
            state[pair]["gy"] = output_grad(s, j)
        t_start = time.perf_counter()
        if kind == "F":
            keep = pair not in fwd_remat
            xl, y, out = forward(s, j, x, keep)
            if s == S - 1:
                losses[j] = float(out.detach())
            give_output(s, j, y)
            state[pair] = {"x": xl, "out": out} if keep else {"x": xl}
            del x, xl, y, out
        elif kind == "R":  # the forward again, with its graph, from the kept input
            st = state[pair]
            st["x"], y, st["out"] = forward(s, j, st["x"], True)
            del st, y
        elif kind == "B":
            st = state.pop(pair)
            gx = _backward(stages[s], st.pop("out"), st.pop("gy"), st["x"], weights=True)
            give_input_grad(s, j, gx, st["x"])
            del st, gx
        elif kind == "I":
            st = state[pair]
            out, gy, xl = st.pop("out"), st["gy"], st["x"]
            gx = None
            if pair in bwd_remat:  # free all now; R recomputes the forward before W
                gx = _backward(stages[s], out, gy, xl, weights=False)
                st["x"] = xl.detach()
            elif not xl.requires_grad:  # first stage: no input gradient; W does the backward
                st["out"] = out
            else:
                gxs, st["groups"] = _split_backward().stage_backward_input(
                    [out], None if gy is None else [gy], [xl], stages[s].parameters())
                gx = gxs[0]
                st["x"], st["gy"] = xl.detach(), None
                del gxs
            give_input_grad(s, j, gx, xl)
            del out, gy, xl, gx, st
        elif kind == "W":
            st = state.pop(pair)
            if "groups" in st:
                _split_backward().stage_backward_weight(stages[s].parameters(), st.pop("groups"))
            else:
                _backward(stages[s], st.pop("out"), st.pop("gy"), None, weights=True)
            del st
        else:  # pragma: no cover - Op admits only F B I W R
            raise RunError(f"unknown op {op}")
        t_end = time.perf_counter()
        ckpt = sum(_storage_bytes(st["x"]) for st in state.values()
                   if "out" not in st and "groups" not in st and "x" in st)
        peak_ckpt = max(peak_ckpt, ckpt)
        ops.append(str(op))
        op_seconds.append(t_end - t_start)
        wait_seconds.append(t_start - t_wait)
    t_last = time.perf_counter()
    comm.finish()
    if state or local_act or local_grad:
        raise RunError(f"rank {rank}: the order left pairs unfinished: "
                       f"{sorted(state)[:3] or sorted(local_act)[:3] or sorted(local_grad)[:3]}")
    return {"rank": rank, "losses": losses, "peak_activations": meter.peak,
            "peak_bytes": meter.peak_bytes, "peak_checkpoint_bytes": peak_ckpt, "ops": ops,
            "op_seconds": op_seconds, "wait_seconds": wait_seconds,
            "step_seconds": t_last - t0}
