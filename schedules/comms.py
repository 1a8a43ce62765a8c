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

from dataclasses import dataclass
from typing import Optional

from .ops import OVERLAP_SEP, split_action
from .schedule import COMM_KINDS, comms_problem, parse_comm_action  # noqa: F401 (re-exported)
from .instance import require_one_direction

MAX_BLOCKED = 10
"""At most this many blocked GPUs are named in one ``comm_deadlock`` message."""

_parse = parse_comm_action


def _peer(inst, action):
    """``(gpu, matching action)`` of a send or receive: ``SEND_F(j,s)`` with ``RECV_F(j,s+1)``,
    ``SEND_B(j,s)`` with ``RECV_B(j,s-1)``, and back; None for another action or a missing
    stage."""
    s, k, j = action
    S = inst.S
    other = {"SEND_F": ("RECV_F", s + 1), "RECV_F": ("SEND_F", s - 1),
             "SEND_B": ("RECV_B", s - 1), "RECV_B": ("SEND_B", s + 1)}.get(k)
    if other is None or not 0 <= other[1] < S:
        return None
    return inst.gpu(other[1]), (other[1], other[0], j)


def _run(inst, seqs, blocking: bool):
    """Run every GPU's action list with torch's readiness rules (module docstring) until no
    action is ready: ``(ptr, waits_for)``, ``ptr[p]`` the first action GPU ``p`` never ran.

    ``blocking`` (MODEL.md third round, *blocking point-to-point*): a send and its matching
    receive on another GPU complete together, when both GPUs have reached them (NCCL's
    rendezvous); otherwise (buffered, torch's dry run) a send completes at once."""
    S = inst.S

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
            while ptr[p] < len(seq):
                action = seq[ptr[p]]
                peer = _peer(inst, action) if blocking else None
                if peer is not None and peer[0] != p:
                    q, match = peer
                    send = action if action[1].startswith("SEND") else match
                    if (ptr[q] < len(seqs[q]) and seqs[q][ptr[q]] == match
                            and waits_for(send) is None):
                        done[p].add(action)
                        done[q].add(match)
                        ptr[p] += 1
                        ptr[q] += 1
                        progress = True
                        continue
                    break
                if waits_for(action) is not None:
                    break
                done[p].add(action)
                ptr[p] += 1
                progress = True
    if blocking:
        def waits_blocking(action):
            """What a blocked action waits for: its data (for a send) and its peer's action."""
            peer = _peer(inst, action)
            if peer is None or peer[0] == inst.gpu(action[0]):
                return waits_for(action)
            q, match = peer
            data = waits_for(action) if action[1].startswith("SEND") else None
            return (data or []) + [(match, q)]
        return ptr, waits_blocking
    return ptr, waits_for


def _blocked_messages(seqs, ptr, waits_for, joiner: str) -> list[str]:
    """One message per GPU that stopped before the end of its list: its action and what it
    waits for."""
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
                    f"for " + joiner.join(parts))
    return msgs


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

    ptr, waits_for = _run(inst, seqs, blocking=False)
    msgs = _blocked_messages(seqs, ptr, waits_for, " or ")
    if msgs:
        text = "; ".join(msgs[:MAX_BLOCKED])
        if len(msgs) > MAX_BLOCKED:
            text += f"; ... and {len(msgs) - MAX_BLOCKED} more GPUs"
        out.append(("comm_deadlock", "the send/receive order cannot run to its end (torch's "
                                     "runtime would hang): " + text))
    return out


# ------------------------------------------------------------------ blocking point-to-point
P2P_MODES = ("buffered", "blocking")
"""Send semantics (MODEL.md third round): ``buffered`` (torch's dry run: a send completes at
once) or ``blocking`` (NCCL: a send completes only when the peer has posted the receive)."""


def natural_comms(schedule) -> tuple[tuple[str, ...], ...]:
    """Each GPU's op order with torch's point-to-point actions where a runtime puts them by
    default: the receive of each input from another GPU right before the op that needs it (the
    *deferred* position), the send of each output to another GPU right after the op that
    makes it. An ``F&B`` op is its forward then its backward (both receives before, both sends
    after)."""
    require_one_direction(schedule, "a communication order (comms)")
    inst = schedule.instance
    S = inst.S
    out = []
    for p in range(inst.P):
        acts: list[str] = []
        for action in schedule.actions(p):
            parts = [split_action(x) for x in action.split(OVERLAP_SEP)]
            before, after = [], []
            for s, k, j in parts:
                if k == "F" and s > 0 and inst.gpu(s - 1) != p:
                    before.append(f"{s}RECV_F{j}")
                if k in ("B", "I") and s < S - 1 and inst.gpu(s + 1) != p:
                    before.append(f"{s}RECV_B{j}")
                if k == "F" and s < S - 1 and inst.gpu(s + 1) != p:
                    after.append(f"{s}SEND_F{j}")
                if k in ("B", "I") and s > 0 and inst.gpu(s - 1) != p:
                    after.append(f"{s}SEND_B{j}")
            acts += before + [f"{s}{k}{j}" for s, k, j in parts] + after
        out.append(tuple(acts))
    return tuple(out)


def deferred_receives(schedule, comms) -> tuple[tuple[str, ...], ...]:
    """``comms`` with every receive moved to right before the op that needs it (sends stay
    where they are): the first simple correction of a blocking hang."""
    inst = schedule.instance
    S = inst.S
    out = []
    for p, seq in enumerate(comms):
        recvs = {}
        for a in seq:
            s, k, j = split_action(a)
            if k == "RECV_F":
                recvs[(s, "F", j)] = a
            elif k == "RECV_B":
                recvs[(s, "BI", j)] = a
        acts = []
        for a in seq:
            s, k, j = split_action(a)
            if k in ("RECV_F", "RECV_B"):
                continue
            key = (s, "F", j) if k == "F" else (s, "BI", j) if k in ("B", "I") else None
            if key in recvs:
                acts.append(recvs.pop(key))
            acts.append(a)
        acts += list(recvs.values())  # receives of no listed op stay, at the end
        out.append(tuple(acts))
    del S
    return tuple(out)


def rank_parity(schedule, comms) -> tuple[tuple[str, ...], ...]:
    """``comms`` with each run of consecutive send/receive actions reordered by rank parity:
    even GPUs post their sends first, odd GPUs their receives first (Megatron's rule for
    blocking point-to-point); the second simple correction."""
    out = []
    for p, seq in enumerate(comms):
        acts: list = []
        run: list = []

        def flush():
            sends = [a for a in run if split_action(a)[1].startswith("SEND")]
            recvs = [a for a in run if not split_action(a)[1].startswith("SEND")]
            acts.extend(sends + recvs if p % 2 == 0 else recvs + sends)
            run.clear()

        for a in seq:
            if split_action(a)[1] in COMM_KINDS:
                run.append(a)
            else:
                flush()
                acts.append(a)
        flush()
        out.append(tuple(acts))
    return tuple(out)


@dataclass(frozen=True)
class P2PCheck:
    """The send/receive order of a schedule run under one send semantics.

    ``comms``: the order checked (the schedule's own, or :func:`natural_comms` when it has
    none; ``derived`` says which); ``hangs``: it cannot run to its end under ``semantics``;
    ``hangs_buffered``: it cannot under buffered sends either (so not a blocking-only hang);
    ``blocked``: one message per stuck GPU (its action and what it waits for); ``corrected``:
    a send/receive order with the same op orders that runs under ``semantics`` (None if no
    simple correction works or none is needed), ``correction`` its name."""

    semantics: str
    comms: tuple
    derived: bool
    hangs: bool
    hangs_buffered: bool
    blocked: tuple
    corrected: Optional[tuple] = None
    correction: Optional[str] = None

    @property
    def only_blocking(self) -> bool:
        """It hangs under blocking sends and runs under buffered ones."""
        return self.hangs and not self.hangs_buffered


def _stuck(inst, comms, blocking: bool):
    seqs = [[_parse(a, p) for a in seq] for p, seq in enumerate(comms)]
    ptr, waits = _run(inst, seqs, blocking)
    if all(ptr[p] == len(seq) for p, seq in enumerate(seqs)):
        return None
    return _blocked_messages(seqs, ptr, waits, " and " if blocking else " or ")


def check_p2p(schedule, semantics: str = "blocking") -> P2PCheck:
    """Can the schedule's send/receive order run under ``semantics`` (:data:`P2P_MODES`)?

    Without ``schedule.comms`` the order checked is :func:`natural_comms`. When it hangs, the
    corrections tried, in this order, are :func:`deferred_receives`, :func:`rank_parity`, and
    both; the first that runs is returned (each keeps the op orders, so timing and memory are
    unchanged). ``ValueError`` for an unknown semantics or an unreadable order.
    """
    require_one_direction(schedule, "simulate --p2p (point-to-point semantics)")
    if semantics not in P2P_MODES:
        raise ValueError(f"p2p semantics must be one of {', '.join(P2P_MODES)}, got "
                         f"{semantics!r}")
    inst = schedule.instance
    derived = schedule.comms is None
    comms = natural_comms(schedule) if derived else schedule.comms
    blocking = semantics == "blocking"
    stuck = _stuck(inst, comms, blocking)
    stuck_buffered = stuck if not blocking else _stuck(inst, comms, False)
    corrected = correction = None
    if stuck is not None:
        deferred = deferred_receives(schedule, comms)
        for name, cand in (("deferred receives", deferred),
                           ("rank parity", rank_parity(schedule, comms)),
                           ("deferred receives and rank parity", rank_parity(schedule, deferred))):
            if _stuck(inst, cand, blocking) is None:
                corrected, correction = cand, name
                break
    return P2PCheck(semantics, tuple(comms), derived, stuck is not None,
                    stuck_buffered is not None, tuple(stuck or ()), corrected, correction)
