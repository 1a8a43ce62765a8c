"""Read torch.distributed.pipelining schedules as :class:`~schedules.schedule.Schedule` objects,
and write schedules back in the form torch's runtime loads.

torch describes a schedule by its ``pipeline_order``: ``rank -> [action or None, ...]`` (or, from
``get_schedule_ops``, a list of per-rank lists), each action printing as
``<stage><type><microbatch>`` (``2F0``, ``1B3``, ``0I1``, ``3W2``), which is the project's action
notation (MODEL.md). The importer keeps the computation actions ``F B I W`` in their order,
skips ``None`` (an idle step: ASAP timing recomputes idle time), drops sharding actions
(``UNSHARD RESHARD REDUCE_GRAD``) and splits DualPipeV's overlapped actions
``(0F3;3B1)OVERLAP_F_B`` into their parts, in order (forward first, then backward: one GPU runs one
op at a time in this model). Point-to-point actions (``SEND_F RECV_F SEND_B RECV_B``) take no time
in the model but are kept as the schedule's ``comms``, so that the validator reports a
send/receive order that would hang torch's runtime (rule ``comm_deadlock``,
:mod:`schedules.comms`).

Nothing here imports torch at module level: the string and CSV forms work without torch
installed, and :func:`from_torch_schedule` imports it only when given a torch schedule object.

>>> from schedules import Instance, simulate
>>> order = {0: ["0F0", "0F1", "0B0", "0F2", None, "0B1", "0B2", "0REDUCE_GRAD"],
...          1: ["1F0", "1B0", "1F1", "1B1", "1F2", "1B2"]}
>>> sched = from_pipeline_order(order, Instance(P=2, m=3))
>>> simulate(sched).makespan
Fraction(12, 1)
>>> hang = [["0F0", "0RECV_B0", "0SEND_F0", "0B0"], ["1RECV_F0", "1F0", "1B0", "1SEND_B0"]]
>>> [v.rule for v in simulate(from_pipeline_order(hang, Instance(P=2, m=1))).violations]
['comm_deadlock']
>>> print(to_torch_csv(sched), end="")
0F0,0F1,0B0,0F2,0B1,0B2
1F0,1B0,1F1,1B1,1F2,1B2

The static ``pipeline_order`` of ``Schedule1F1B`` (torch 2.13) numbers the last rank's
forwards from 1 instead of 0, while its runtime (``_step_microbatches``) runs microbatch 0
first; :func:`from_torch_schedule` therefore reads, by default, the order the runtime
executes (docs/interop.md).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional

from ..instance import PLACEMENTS, Instance, placement_stage_to_rank
from ..ops import OVERLAP_SEP, Op, split_action
from ..comms import COMM_KINDS
from ..schedule import Schedule, ScheduleError
from schedules.errors import InputError
from ..instance import require_one_direction

COMPUTE = ("F", "B", "I", "W")
"""torch's computation types that are ops of the model (``R``, this project's recompute, is also
accepted in strings)."""

NON_COMPUTE = ("SEND_F", "RECV_F", "SEND_B", "RECV_B", "UNSHARD", "RESHARD", "REDUCE_GRAD")
"""Communication and sharding actions: they take no time in the model and are dropped."""

OVERLAP = "OVERLAP_F_B"
"""DualPipeV's overlapped forward + backward: its sub-actions are imported in order."""

_NO_MICROBATCH = re.compile(r"^\s*(\d+)\s*([A-Z_]+)\s*$")
_OVERLAP_STRING = re.compile(r"^\s*\((.*)\)\s*([A-Z_]+)\s*$")


class InteropError(InputError):
    """An action the importer cannot read; the message quotes it and names the rank."""


def _parse_string(text: str, rank) -> list[str]:
    text = text.strip()
    if not text:
        return []
    match = _OVERLAP_STRING.match(text)
    if match:
        if match.group(2) != OVERLAP:
            raise InteropError(f"rank {rank}: grouped action {text!r} is not {OVERLAP}")
        out = []
        for part in match.group(1).split(";"):
            out += _parse_string(part, rank)
        return out
    parts = split_action(text)
    if parts is None:
        bare = _NO_MICROBATCH.match(text)
        if bare and bare.group(2) in NON_COMPUTE:
            return []
        raise InteropError(f"rank {rank}: cannot read action {text!r}; expected "
                           f"<stage><type><microbatch> like '2F0'")
    stage, letters, mb = parts
    if letters in COMPUTE or letters == "R" or letters in COMM_KINDS:
        return [f"{stage}{letters}{mb}"]
    if letters in NON_COMPUTE:
        return []
    raise InteropError(f"rank {rank}: unknown action type {letters!r} in {text!r}; "
                       f"known: {', '.join(COMPUTE + NON_COMPUTE + (OVERLAP,))}")


def action_tokens(action: Any, rank=None) -> list[str]:
    """The action strings one ``pipeline_order`` entry stands for: its ops and its
    point-to-point actions (``SEND_F RECV_F SEND_B RECV_B``), in order; sharding actions and
    ``None`` give nothing, an overlapped action its parts.

    >>> action_tokens("(0F3;3B1)OVERLAP_F_B"), action_tokens("1SEND_F0"), action_tokens("2UNSHARD")
    (['0F3', '3B1'], ['1SEND_F0'], [])
    """
    if action is None:
        return []
    if isinstance(action, Op):
        return [str(action)]
    if isinstance(action, str):
        return _parse_string(action, rank)
    sub = getattr(action, "sub_actions", None)
    if sub:
        out = []
        for a in sub:
            out += action_tokens(a, rank)
        return out
    ctype = getattr(action, "computation_type", None)
    if ctype is None:
        raise InteropError(f"rank {rank}: {action!r} is neither an action string nor a torch "
                           f"_Action")
    name = getattr(ctype, "value", str(ctype))
    if name in NON_COMPUTE and name not in COMM_KINDS:
        return []
    if name not in COMPUTE and name not in COMM_KINDS:
        raise InteropError(f"rank {rank}: unknown action type {name!r} in {action!r}")
    stage, mb = action.stage_index, action.microbatch_index
    if mb is None:
        raise InteropError(f"rank {rank}: action {action!r} has no microbatch")
    return [f"{int(stage)}{name}{int(mb)}"]


def action_ops(action: Any, rank=None) -> list[Op]:
    """The ops of one ``pipeline_order`` entry: a torch ``_Action``, its string, or None.

    >>> [str(op) for op in action_ops("(0F3;3B1)OVERLAP_F_B")]
    ['0F3', '3B1']
    >>> action_ops("1SEND_F0"), action_ops(None), action_ops("2UNSHARD")
    ([], [], [])
    """
    return [Op.parse(t) for t in action_tokens(action, rank) if split_action(t)[1] not in COMM_KINDS]


def _per_rank(pipeline_order, P: Optional[int]) -> dict[int, list]:
    """``rank -> actions`` from a mapping (rank keys) or a list of lists (index = rank, as
    ``get_schedule_ops`` returns)."""
    if isinstance(pipeline_order, Mapping):
        items = list(pipeline_order.items())
    elif isinstance(pipeline_order, (list, tuple)):
        items = list(enumerate(pipeline_order))
    else:
        raise InteropError("a pipeline order must map each rank to its list of actions, or list "
                           "them by rank")
    out: dict[int, list] = {}
    for key, actions in items:
        try:
            rank = int(key)
        except (TypeError, ValueError):
            raise InteropError(f"pipeline_order key {key!r} is not a rank number") from None
        if P is not None and not 0 <= rank < P:
            raise ScheduleError(f"pipeline_order names rank {rank}, outside 0..{P - 1} (P={P})")
        if isinstance(actions, str):
            raise InteropError(f"rank {rank}: the actions must be a list, got a string")
        out[rank] = list(actions or [])
    return out


def tokens_from_pipeline_order(pipeline_order, P: int) -> list[list[str]]:
    """Per-GPU action strings (ops and point-to-point actions) of a pipeline order."""
    tokens: list[list[str]] = [[] for _ in range(P)]
    for rank, actions in _per_rank(pipeline_order, P).items():
        for action in actions:
            tokens[rank] += action_tokens(action, rank)
    return tokens


def orders_from_pipeline_order(pipeline_order, P: int) -> list[list[Op]]:
    """Per-GPU op lists (index = rank) from a ``rank -> actions`` mapping or a list of lists."""
    return [[Op.parse(t) for t in seq if split_action(t)[1] not in COMM_KINDS]
            for seq in tokens_from_pipeline_order(pipeline_order, P)]


def from_pipeline_order(pipeline_order, instance: Instance, source: str = "torch") -> Schedule:
    """The :class:`Schedule` of a torch pipeline order on ``instance``.

    ``pipeline_order``: ``rank -> actions`` (``pipeline_order``, ``pipeline_order_with_comms``) or
    a list of per-rank lists (``get_schedule_ops``). ``instance`` gives ``P``, ``m``, the stage
    placement (``placement``/``stage_to_rank``) and the durations; the orders are read faithfully
    (an action on the wrong rank or with an out-of-range microbatch becomes a violation that
    :func:`schedules.simulate.validate` names, it is not repaired). When the order has
    point-to-point actions (a runtime order with communication), they are kept as the
    schedule's ``comms`` and the validator checks them for deadlock (:mod:`schedules.comms`).
    """
    tokens = tokens_from_pipeline_order(pipeline_order, instance.P)
    orders = tuple(tuple(Op.parse(t) for t in seq if split_action(t)[1] not in COMM_KINDS)
                   for seq in tokens)
    has_comms = any(split_action(t)[1] in COMM_KINDS for seq in tokens for t in seq)
    orders, overlaps = _with_overlaps(pipeline_order, instance.P, orders)
    return Schedule(instance, orders, source=source,
                    comms=tuple(tuple(seq) for seq in tokens) if has_comms else None,
                    overlaps=overlaps)


def _is_overlap(action) -> bool:
    if isinstance(action, str):
        match = _OVERLAP_STRING.match(action.strip())
        return bool(match) and match.group(2) == OVERLAP
    ctype = getattr(action, "computation_type", None)
    return getattr(ctype, "value", str(ctype)) == OVERLAP and bool(getattr(action, "sub_actions",
                                                                           None))


def _with_overlaps(pipeline_order, P: int, orders):
    """``(orders, overlaps)``: each ``OVERLAP_F_B`` action whose parts are one forward and one
    backward (``B`` or ``I``) becomes one ``F&B`` op (MODEL.md third-round extensions; listed
    backward part first, :attr:`Schedule.overlaps`); other groupings stay their parts in order."""
    per_rank = _per_rank(pipeline_order, P)
    if not any(_is_overlap(a) for actions in per_rank.values() for a in actions):
        return orders, None
    new_orders, overlaps = list(orders), []
    for p in range(P):
        seq: list = []
        starts: list = []
        for action in per_rank.get(p, []):
            ops = action_ops(action, p)
            if _is_overlap(action) and len(ops) == 2 and ops[0].kind == "F" \
                    and ops[1].kind in ("B", "I"):
                starts.append(len(seq))
                seq += [ops[1], ops[0]]
            else:
                seq += ops
        new_orders[p] = tuple(seq)
        overlaps.append(tuple(starts))
    return tuple(new_orders), tuple(overlaps)


def instance_from_pipeline_order(pipeline_order, *, K=None, f=1, b=None, b_I=None, b_W=None,
                                 c=0) -> Instance:
    """The instance a pipeline order implies: ``P`` ranks (its length), ``m`` = largest
    microbatch + 1, stages placed where their ops are listed (as torch's ``_load_csv`` infers
    its stage-to-rank map), the given durations (split ``b/2`` each when the order has ``I``/``W``
    and none are given). A standard placement is named (``looped``/``vshape``)."""
    per_rank = _per_rank(pipeline_order, None)
    P = max(per_rank) + 1 if per_rank else 0
    if P == 0:
        raise InteropError("the pipeline order lists no rank")
    tokens = tokens_from_pipeline_order(per_rank, P)
    where: dict[int, int] = {}
    m = 0
    split = False
    for rank, seq in enumerate(tokens):
        for t in seq:
            s, kind, j = split_action(t)
            if kind in COMM_KINDS:
                continue
            m = max(m, j + 1)
            split = split or kind in ("I", "W")
            if where.setdefault(s, rank) != rank:
                raise InteropError(f"stage {s} has ops on ranks {where[s]} and {rank}")
    S = max(where) + 1 if where else 0
    missing = [s for s in range(S) if s not in where]
    if missing or not m:
        raise InteropError(f"the pipeline order has no op of stage(s) {missing}" if missing else
                           "the pipeline order lists no op")
    return _instance(P, m, [where[s] for s in range(S)], split, K=K, f=f, b=b, b_I=b_I,
                     b_W=b_W, c=c)


def _instance(P, m, stage_to_rank, split, *, K, f, b, b_I, b_W, c) -> Instance:
    if split and b_I is None:
        total = 2 if b is None else b
        b_I = b_W = Fraction(total) / 2
    kw = dict(P=P, m=m, K=K, stage_to_rank=list(stage_to_rank), f=f, c=c)
    v = len(stage_to_rank) // P if len(stage_to_rank) % P == 0 else 0
    for name in PLACEMENTS:  # name the placement when it is a standard one (bounds use it)
        if v and tuple(stage_to_rank) == placement_stage_to_rank(P, v, name):
            kw.update(stage_to_rank=None, v=v, placement=name)
            break
    if split:
        kw.update(b_I=b_I, b_W=b_W)
        if b is not None:
            kw["b"] = b  # Instance checks b == b_I + b_W
    else:
        kw.update(b=2 if b is None else b)
    return Instance(**kw)


# ------------------------------------------------------------------ CSV (torch's _dump_csv/_load_csv)
def read_torch_csv(text: str) -> list[list[str]]:
    """The per-rank rows of a CSV written by torch's ``_dump_csv`` (one row per rank, one action
    string per cell, an empty cell for an idle step), ``compute_only`` or ``compute_comms``."""
    import csv
    import io

    return [[cell for cell in row] for row in csv.reader(io.StringIO(text))]


def from_torch_csv(text: str, instance: Optional[Instance] = None, source: str = "torch csv",
                   **durations) -> Schedule:
    """The :class:`Schedule` of a torch schedule CSV (:func:`read_torch_csv`); without
    ``instance`` it is inferred (:func:`instance_from_pipeline_order`, ``durations`` passed on)."""
    rows = read_torch_csv(text)
    inst = instance or instance_from_pipeline_order(rows, **durations)
    return from_pipeline_order(rows, inst, source=source)


NO_RECOMPUTE = ("torch.distributed.pipelining has no recompute action: its action types are F, "
                "B, I, W, the send/receive and sharding actions and OVERLAP_F_B, and its runtime "
                "keeps every forward's activations until the backward (recomputation there is "
                "activation checkpointing inside a stage's module, invisible to the schedule), "
                "so a schedule with R ops cannot be expressed; run it with `pipebounds execute` "
                "or pipebounds.torch.run_schedule, which execute R ops where the order puts them")


def torch_microbatch_numbers(schedule: Schedule) -> tuple[int, ...]:
    """``new[j]``: the number torch's runtime must give microbatch ``j`` of ``schedule``, its
    rank among the forwards of the last stage in that stage's order.

    torch 2.13's runtime appends each microbatch's loss to a list when the last stage runs its
    forward and reads it back by microbatch number at the backward, so the last stage's forwards
    must run in the order ``0..m-1``. Microbatches are identical in the model (MODEL.md), so
    renaming them changes neither timing nor memory: the renamed schedule is the same schedule.

    >>> from schedules import Instance
    >>> sched = Schedule.from_strings(Instance(P=1, m=2), {0: ["0F1", "0B1", "0F0", "0B0"]})
    >>> torch_microbatch_numbers(sched)
    (1, 0)
    """
    inst = schedule.instance
    last = inst.S - 1
    seen = [op.microbatch for op in schedule.orders[inst.gpu(last)]
            if op.kind == "F" and op.stage == last]
    if sorted(seen) != list(range(inst.m)):
        raise InteropError(f"the last stage's forwards are {seen[:8]}, not each microbatch "
                           f"0..{inst.m - 1} once: the schedule is not valid")
    new = [0] * inst.m
    for rank, j in enumerate(seen):
        new[j] = rank
    return tuple(new)


def renumber_microbatches(schedule: Schedule, new) -> Schedule:
    """``schedule`` with microbatch ``j`` renamed ``new[j]`` in every op (a permutation of
    ``0..m-1``); the send/receive order, if any, is dropped."""
    if sorted(new) != list(range(schedule.instance.m)):
        raise InteropError(f"{list(new)[:8]} is not a permutation of 0..{schedule.instance.m - 1}")
    orders = tuple(tuple(Op(op.stage, op.kind, new[op.microbatch]) for op in seq)
                   for seq in schedule.orders)
    return Schedule(schedule.instance, orders, schedule.source, None, schedule.overlaps)


def for_torch_runtime(schedule: Schedule) -> tuple[Schedule, Optional[tuple[int, ...]]]:
    """The schedule renumbered so that torch's runtime executes it correctly
    (:func:`torch_microbatch_numbers`) and the renumbering (None when none was needed).
    Raises :class:`InteropError` when the schedule has ``R`` ops (:data:`NO_RECOMPUTE`)."""
    require_one_direction(schedule, "torch export")
    recomputed = [str(op) for _, op in schedule.ops() if op.kind == "R"]
    if recomputed:
        raise InteropError(f"{NO_RECOMPUTE} (this one recomputes {len(recomputed)} forwards, "
                           f"e.g. {recomputed[0]})")
    try:
        new = torch_microbatch_numbers(schedule)
    except InteropError:  # an invalid schedule: written as it is (the validator names why)
        return schedule, None
    if new == tuple(range(schedule.instance.m)):
        return schedule, None
    return renumber_microbatches(schedule, new), new


def to_pipeline_order(schedule: Schedule, renumber: bool = True) -> dict[int, list[str]]:
    """``rank -> action strings`` that torch's runtime loads (``compute_only``): the schedule's
    ops in order (an ``F&B`` op as torch's ``(0F3;3B1)OVERLAP_F_B``), microbatches renumbered
    when torch needs it (:func:`for_torch_runtime`;
    ``renumber=False`` writes them as they are, which torch 2.13 runs wrongly when the last
    stage's forwards are out of order). Raises :class:`InteropError` when the schedule has
    ``R`` ops (:data:`NO_RECOMPUTE`)."""
    if renumber:
        schedule, _ = for_torch_runtime(schedule)
    else:
        for_torch_runtime(schedule)  # the R check
    return {p: [_torch_action(a) for a in schedule.actions(p)]
            for p in range(len(schedule.orders))}


def _torch_action(action: str) -> str:
    """torch's string of one action: an ``F&B`` op ``0F3&3B1`` is ``(0F3;3B1)OVERLAP_F_B``."""
    if OVERLAP_SEP in action:
        fwd, bwd = action.split(OVERLAP_SEP)
        return f"({fwd};{bwd}){OVERLAP}"
    return action


def torch_runtime_comms(schedule: Schedule, defer_recv: bool = False
                        ) -> tuple[tuple[str, ...], ...]:
    """The send/receive order torch 2.13's runtime gives the schedule's compute-only order
    when it loads it (``_PipelineScheduleRuntime._load_csv(format="compute_only")`` lowers it
    with ``_add_send_recv``, then, with ``defer_pp_recv=True``, ``_defer_recv_ops``),
    re-implemented here without torch (tested against torch's own).

    ``_add_send_recv``: the ranks take turns in order, each scheduling its next op once the
    op's inputs are on the rank (its own previous stage's op, or a receive posted earlier);
    right after it, for each output bound for another GPU, the send on its own list and the
    matching receive at the current end of the receiver's list. ``_defer_recv_ops``
    (``defer_recv``): every receive moves down to right before the op that consumes it,
    except that before a send to a higher rank the receives deferred from that rank are
    posted first (rank parity, pytorch issue 172668). An ``F&B`` op waits for both parts'
    inputs and is listed as its two parts (forward first), then the sends. The schedule's
    actions are taken as they are (renumber first with :func:`for_torch_runtime`).
    :class:`InteropError` when no rank can move (torch raises "Malformed compute schedule").
    """
    inst = schedule.instance
    S = inst.S
    todo = {p: [tuple(split_action(x) for x in a.split(OVERLAP_SEP)) for a in schedule.actions(p)]
            for p in range(inst.P)}
    todo = {p: acts for p, acts in todo.items() if acts}
    # each GPU's list: a tuple of parts (one compute action) or a (s, kind, j) comm action
    out: list[list] = [[] for _ in range(inst.P)]
    prev: list[set] = [set() for _ in range(inst.P)]

    def sends(s: int, k: str) -> bool:
        if k == "F":
            return s != S - 1 and inst.gpu(s + 1) != inst.gpu(s)
        return k in ("B", "I") and s != 0 and inst.gpu(s - 1) != inst.gpu(s)

    def ready(s: int, k: str, j: int, have: set) -> bool:
        if k == "F" and s != 0:
            return (s, "RECV_F", j) in have or (s - 1, "F", j) in have
        if k in ("B", "I") and s != S - 1:
            return ((s, "RECV_B", j) in have or (s + 1, "I", j) in have
                    or (s + 1, "B", j) in have)
        return True

    while todo:
        progress = False
        for p in sorted(todo):
            parts = todo[p][0]
            if not all(ready(s, k, j, prev[p]) for s, k, j in parts):
                continue
            out[p].append(parts)
            for s, k, j in parts:
                prev[p].add((s, k, j))
                if sends(s, k):
                    send = (s, "SEND_F" if k == "F" else "SEND_B", j)
                    recv = (s + 1, "RECV_F", j) if k == "F" else (s - 1, "RECV_B", j)
                    q = inst.gpu(recv[0])
                    out[p].append(send)
                    prev[p].add(send)
                    out[q].append(recv)
                    prev[q].add(recv)
            todo[p].pop(0)
            if not todo[p]:
                del todo[p]
            progress = True
        if not progress:
            stuck = ", ".join(f"rank {p} at {'&'.join(f'{s}{k}{j}' for s, k, j in acts[0])}"
                              for p, acts in sorted(todo.items()))
            raise InteropError(f"torch's runtime cannot place the sends and receives of this "
                               f"order (its 'Malformed compute schedule'): {stuck}")
    if defer_recv:
        out = [_defer_receives(inst, p, seq) for p, seq in enumerate(out)]
    return tuple(tuple(f"{s}{k}{j}" for entry in seq
                       for s, k, j in (entry if isinstance(entry[0], tuple) else (entry,)))
                 for seq in out)


RUNTIME_LOWERINGS = ("default", "defer_pp_recv")
"""torch 2.13's two lowerings of a compute-only order (:func:`torch_runtime_comms`): without
and with ``_PipelineScheduleRuntime(..., defer_pp_recv=True)``."""


def runtime_p2p(schedule: Schedule, semantics: str = "blocking") -> dict:
    """``{lowering: P2PCheck}``: each send/receive order torch's runtime would build for the
    schedule's compute-only order (:data:`RUNTIME_LOWERINGS`), run under ``semantics``
    (:func:`schedules.comms.check_p2p`, the analysis of ``simulate --p2p``; ``blocking``: a
    send completes only with its matching receive). The schedule is taken as it is exported
    (renumber first with :func:`for_torch_runtime`)."""
    from dataclasses import replace

    from ..comms import check_p2p

    return {name: check_p2p(replace(schedule, comms=torch_runtime_comms(
        schedule, defer_recv=name == "defer_pp_recv")), semantics)
        for name in RUNTIME_LOWERINGS}


def _defer_receives(inst: Instance, p: int, seq: list) -> list:
    """torch 2.13's ``_defer_recv_ops`` on GPU ``p``'s lowered list (see
    :func:`torch_runtime_comms`)."""
    def peer(action) -> int:
        s, k, _ = action
        return inst.gpu(s - 1 if k in ("RECV_F", "SEND_B") else s + 1)

    new: list = []
    deferred: dict = {}
    for entry in seq:
        if not isinstance(entry[0], tuple) and entry[1] in ("RECV_F", "RECV_B"):
            deferred[entry] = entry
            continue
        if not isinstance(entry[0], tuple):  # a send: rank parity
            q = peer(entry)
            if p < q:
                for key in [k for k in deferred if peer(k) == q]:
                    new.append(deferred.pop(key))
        else:
            for s, k, j in entry:
                key = (s, "RECV_F", j) if k == "F" else (s, "RECV_B", j) if k in ("B", "I") \
                    else None
                if key in deferred:
                    new.append(deferred.pop(key))
        new.append(entry)
    if deferred:
        raise InteropError(f"rank {p}: receives with no consumer: "
                           + ", ".join(f"{s}{k}{j}" for s, k, j in deferred))
    return new


def to_torch_csv(schedule: Schedule, renumber: bool = True) -> str:
    """The schedule as the ``compute_only`` CSV of torch's ``_dump_csv``/``_load_csv``: one row
    per rank, one action per cell (see :func:`to_pipeline_order` for the renumbering and
    ``R``)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for p, row in sorted(to_pipeline_order(schedule, renumber).items()):
        writer.writerow(row)
    return buf.getvalue()


# ------------------------------------------------------------------ torch schedule objects
class _RecordingStage:
    """A stand-in for a torch pipeline stage that records the computations a single-stage
    schedule's runtime (``_step_microbatches``) asks for, with no communication."""

    def __init__(self, stage_index: int, num_stages: int):
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_size = num_stages
        self.group_rank = stage_index
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1
        self.submod = None
        self.has_backward = True
        self.output_chunks: list = []
        self.ops: list[Op] = []

    def forward_one_chunk(self, mb, *args, **kwargs):
        self.ops.append(Op(self.stage_index, "F", int(mb)))

    def backward_one_chunk(self, mb, *args, full_backward=True, **kwargs):
        self.ops.append(Op(self.stage_index, "B" if full_backward else "I", int(mb)))

    def backward_weight_one_chunk(self, mb, *args, **kwargs):
        self.ops.append(Op(self.stage_index, "W", int(mb)))

    def _noop(self, *args, **kwargs):
        return []

    get_fwd_recv_ops = get_fwd_send_ops = get_bwd_recv_ops = get_bwd_send_ops = _noop
    clear_runtime_states = perform_reduce_grad = scale_grads = _noop


def runtime_single_stage_order(cls, num_stages: int, n_microbatches: int) -> list[list[Op]]:
    """What a single-stage torch schedule class runs on every rank: its own
    ``_step_microbatches`` replayed on recording stages (torch private API; needs torch)."""
    orders = []
    for rank in range(num_stages):
        stage = _RecordingStage(rank, num_stages)
        sched = cls(stage, n_microbatches)
        sched._initialize_stage = lambda *args, **kwargs: None  # no shapes to infer
        try:
            sched._step_microbatches(None, None, None, None, False)
        except Exception as exc:  # torch private API changed
            raise InteropError(
                f"could not replay {cls.__name__}._step_microbatches on rank {rank} ({exc}); "
                f"use order='static' to read its pipeline_order instead") from exc
        orders.append(stage.ops)
    return orders


def torch_instance(schedule_obj, *, K=None, f=1, b=None, b_I=None, b_W=None, c=0,
                   split: Optional[bool] = None) -> Instance:
    """The :class:`Instance` of a torch schedule object: ``P`` ranks, ``m`` microbatches, its
    stage-to-rank map, and the given durations. Split durations default to ``b/2`` each when
    the schedule has ``I``/``W`` actions (``split=None``) and none are given."""
    m = int(schedule_obj._n_microbatches)
    if hasattr(schedule_obj, "pp_group_size") and hasattr(schedule_obj, "_stages"):
        P = int(schedule_obj.pp_group_size)
        mapping = schedule_obj.stage_index_to_group_rank
        stage_to_rank = [int(mapping[s]) for s in range(int(schedule_obj._num_stages))]
    else:  # one stage per rank
        P = int(schedule_obj._num_stages)
        stage_to_rank = list(range(P))
    if split is None:
        split = b_I is not None or any(
            op.kind in ("I", "W") for seq in orders_from_pipeline_order(
                schedule_obj.pipeline_order or {}, P) for op in seq)
    return _instance(P, m, stage_to_rank, split, K=K, f=f, b=b, b_I=b_I, b_W=b_W, c=c)


def from_torch_schedule(schedule_obj, *, order: str = "runtime", K=None, f=1, b=None,
                        b_I=None, b_W=None, c=0) -> Schedule:
    """The :class:`Schedule` of a torch.distributed.pipelining schedule object.

    ``order="runtime"`` (default) reads what torch executes: for the multi-stage runtime
    schedules (``_PipelineScheduleRuntime``: Interleaved1F1B, LoopedBFS, InterleavedZeroBubble,
    ZBVZeroBubble, DualPipeV) the compute actions of ``pipeline_order_with_comms``; for the
    single-stage ones (GPipe, 1F1B), whose runtime is hand-written code that does not read
    ``pipeline_order``, a replay of that code on recording stages. ``order="static"`` reads
    ``pipeline_order`` as published (for Schedule1F1B in torch 2.13 its last rank then lists
    forwards ``1..m`` instead of ``0..m-1``, which the validator reports as ``range`` and
    ``missing``). Durations and ``K`` as in :func:`torch_instance`.
    """
    if order not in ("runtime", "static"):
        raise InteropError(f"order must be 'runtime' or 'static', got {order!r}")
    inst = torch_instance(schedule_obj, K=K, f=f, b=b, b_I=b_I, b_W=b_W, c=c)
    name = type(schedule_obj).__name__
    if order == "static":
        return from_pipeline_order(schedule_obj.pipeline_order, inst, source=f"torch {name} static")
    with_comms = getattr(schedule_obj, "pipeline_order_with_comms", None)
    if with_comms:
        return from_pipeline_order(with_comms, inst, source=f"torch {name}")
    if hasattr(schedule_obj, "_stages"):  # multi-stage without a lowered order: static is all
        return from_pipeline_order(schedule_obj.pipeline_order, inst, source=f"torch {name}")
    orders = runtime_single_stage_order(type(schedule_obj), inst.P, inst.m)
    return Schedule(inst, tuple(tuple(seq) for seq in orders), source=f"torch {name}")


__all__: Iterable[str] = ("from_pipeline_order", "from_torch_schedule", "action_ops",
                          "action_tokens", "tokens_from_pipeline_order",
                          "instance_from_pipeline_order", "read_torch_csv", "from_torch_csv",
                          "to_pipeline_order", "to_torch_csv", "NO_RECOMPUTE",
                          "torch_microbatch_numbers", "renumber_microbatches",
                          "for_torch_runtime", "torch_runtime_comms", "runtime_p2p",
                          "RUNTIME_LOWERINGS", "orders_from_pipeline_order", "torch_instance",
                          "runtime_single_stage_order", "InteropError", "COMPUTE",
                          "NON_COMPUTE", "OVERLAP")
