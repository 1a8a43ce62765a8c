"""Send/receive orders: can torch's runtime execute them without deadlock? (validator rules
``comm_order`` and ``comm_deadlock``).

The model itself times no communication (MODEL.md; the option ``c`` is a delay, not an action).
A schedule imported from torch.distributed.pipelining's runtime order
(``pipeline_order_with_comms``, ``get_schedule_ops(..., with_comms=True)``, a ``compute_comms``
CSV) also lists, per GPU, communication actions between its ops: ``SEND_F``/``RECV_F`` (the
activation of ``(j, s)`` to the GPU of stage ``s+1``) and ``SEND_B``/``RECV_B`` (the gradient to
the GPU of stage ``s-1``). :attr:`schedules.schedule.Schedule.comms` keeps that list, and this
module checks it with the readiness rules of torch 2.13's own dry run
(``torch.distributed.pipelining.schedules._simulate_comms_compute``), where each GPU executes
its list in order and an action may run once:

* ``F(j,s)``: ``s = 0``, or its GPU has run ``RECV_F(j,s)`` or ``F(j,s-1)``;
* ``B``/``I`` of ``(j,s)``: ``s = S-1``, or its GPU has run ``RECV_B(j,s)`` or the input-gradient op
  (``B``/``I``) of ``(j,s+1)``;
* ``W``, ``R``: always;
* ``SEND_F(j,s)``: its GPU has run ``F(j,s)``; ``SEND_B(j,s)``: its GPU has run ``B``/``I`` of
  ``(j,s)``;
* ``RECV_F(j,s)``: the GPU of stage ``s-1`` has run ``SEND_F(j,s-1)``; ``RECV_B(j,s)``: the GPU of
  stage ``s+1`` has run ``SEND_B(j,s+1)``.

Readiness only grows as actions run, so running every ready action until none is left decides
the question exactly: the orders deadlock iff some GPU keeps actions it can never run
(``comm_deadlock``, naming each blocked GPU, its action and what it waits for). ``comm_order``:
the ops in ``comms`` are not the ``orders`` of the schedule (the two descriptions disagree).

>>> from schedules import Instance, Schedule, validate
>>> inst = Instance(P=2, m=1)
>>> ok = {0: ["0F0", "0SEND_F0", "0RECV_B0", "0B0"], 1: ["1RECV_F0", "1F0", "1B0", "1SEND_B0"]}
>>> orders = {0: ["0F0", "0B0"], 1: ["1F0", "1B0"]}
>>> validate(Schedule(inst, Schedule.from_strings(inst, orders).orders, comms=ok))
[]
>>> bad = {0: ["0F0", "0RECV_B0", "0SEND_F0", "0B0"], 1: ok[1]}   # waits before it sends
>>> [v.rule for v in validate(Schedule(inst, Schedule.from_strings(inst, orders).orders, comms=bad))]
['comm_deadlock']
"""

from __future__ import annotations

from .ops import OVERLAP_SEP, split_action

MAX_BLOCKED = 10
"""At most this many blocked GPUs are named in one ``comm_deadlock`` message."""

COMM_KINDS = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")
"""torch's point-to-point actions kept in :attr:`Schedule.comms`."""


def _parse(text: str, p: int):
    parts = split_action(text)
    if parts is None or parts[1] not in COMM_KINDS + ("F", "B", "I", "W", "R"):
        raise ValueError(f"GPU {p}: cannot read communication-order action {text!r}")
    return parts


def check_comms(schedule) -> list[tuple[str, str]]:
    """``(rule, message)`` of each ``comm_order`` and ``comm_deadlock`` violation of
    ``schedule.comms`` (none without it); the validator turns them into Violations."""
    if schedule.comms is None:
        return []
    inst = schedule.instance
    S = inst.S
    out: list[tuple[str, str]] = []
    try:
        seqs = [[_parse(a, p) for a in seq] for p, seq in enumerate(schedule.comms)]
    except ValueError as exc:
        return [("comm_order", str(exc))]
    for p, seq in enumerate(seqs):
        ops = [f"{s}{k}{j}" for s, k, j in seq if k not in COMM_KINDS]
        written = [x for a in schedule.actions(p) for x in a.split(OVERLAP_SEP)]
        if ops != written:  # an F&B op is its forward then its backward, as torch lists them
            out.append(("comm_order", f"GPU {p}: the ops of its communication order differ "
                                      f"from its op order"))
    if any(s >= S for seq in seqs for s, _, _ in seq):
        return out  # the range rule names such stages; readiness needs a GPU per stage

    def rank(s):
        return inst.gpu(s)

    done: list[set] = [set() for _ in range(inst.P)]

    def waits_for(action):
        """``None`` if ``action`` is ready, else the actions (with their GPU) it waits for."""
        s, k, j = action
        if k == "F":
            if s == 0 or (s, "RECV_F", j) in done[rank(s)] or (s - 1, "F", j) in done[rank(s)]:
                return None
            return [((s, "RECV_F", j), rank(s)), ((s - 1, "F", j), rank(s))]
        if k in ("B", "I"):
            d = done[rank(s)]
            if s == S - 1 or (s, "RECV_B", j) in d or (s + 1, "B", j) in d or (s + 1, "I", j) in d:
                return None
            return [((s, "RECV_B", j), rank(s)), ((s + 1, "I", j), rank(s))]
        if k == "SEND_F":
            return None if (s, "F", j) in done[rank(s)] else [((s, "F", j), rank(s))]
        if k == "SEND_B":
            d = done[rank(s)]
            return None if (s, "B", j) in d or (s, "I", j) in d else [((s, "I", j), rank(s))]
        if k == "RECV_F":
            if s == 0:
                return [((s - 1, "SEND_F", j), None)]
            want = (s - 1, "SEND_F", j)
            return None if want in done[rank(s - 1)] else [(want, rank(s - 1))]
        if k == "RECV_B":
            if s == S - 1:
                return [((s + 1, "SEND_B", j), None)]
            want = (s + 1, "SEND_B", j)
            return None if want in done[rank(s + 1)] else [(want, rank(s + 1))]
        return None  # W, R

    ptr = [0] * inst.P
    progress = True
    while progress:
        progress = False
        for p, seq in enumerate(seqs):
            while ptr[p] < len(seq) and waits_for(seq[ptr[p]]) is None:
                done[p].add(seq[ptr[p]])
                ptr[p] += 1
                progress = True
    listed = {a for seq in seqs for a in seq}
    msgs = []
    for p, seq in enumerate(seqs):
        if ptr[p] == len(seq):
            continue
        s, k, j = seq[ptr[p]]
        parts = []
        for (ws, wk, wj), wr in waits_for(seq[ptr[p]]):
            name = f"{ws}{wk}{wj}"
            if wr is None:
                parts.append(f"{name} (no such stage)")
            elif (ws, wk, wj) not in listed:
                parts.append(f"{name} (listed on no GPU)")
            else:
                parts.append(f"{name} (GPU {wr})")
        msgs.append(f"GPU {p} is blocked at {s}{k}{j} (action {ptr[p]} of its order) waiting "
                    f"for " + " or ".join(parts))
    if msgs:
        text = "; ".join(msgs[:MAX_BLOCKED])
        if len(msgs) > MAX_BLOCKED:
            text += f"; ... and {len(msgs) - MAX_BLOCKED} more GPUs"
        out.append(("comm_deadlock", "the send/receive order cannot run to its end (torch's "
                                     "runtime would hang): " + text))
    return out
