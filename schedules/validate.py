"""The validator: every rule of MODEL.md, each violation named.

A schedule is valid iff it breaks none of these rules (``Violation.rule``):

============== =====================================================================
``range``      an op's stage is ``>= S`` or its microbatch ``>= m``
``placement``  an op is listed on a GPU that does not hold its stage (with ``directions = 2``:
               its stage in its microbatch's copy, MODEL.md *Directions*)
``duplicate``  an op is listed twice (``R`` twice included)
``missing``    a forward, or the backward of some ``(j, s)``, is in no order
``durations``  an ``I``/``W`` op in an instance without split durations ``b_I, b_W``
``backward``   ``(j, s)`` has its backward in both forms, or ``I`` without ``W`` (or back)
``recompute``  ``R(j, s)`` listed after the backward of ``(j, s)`` or before ``F(j, s)`` (an
               ``R`` after ``I(j, s)`` is the backward recompute, MODEL.md *Extensions*:
               it must come before ``W(j, s)``); ``RI(j, s)`` (third option) not between
               the backward recompute ``R(j, s)`` and ``W(j, s)``
``overlap``    an overlapped op (``Schedule.overlaps``) is not a backward ``B``/``I``
               followed by a forward ``F`` (MODEL.md third-round extensions, ``F&B``)
``deadlock``   the orders contradict the precedences (no ASAP timing exists)
``memory``     a GPU holds more than ``K`` live activations, or (memory in bytes,
               ``instance.memory``) more bytes than its ``budget`` at some instant
``comm_order`` the ops of the communication order (``Schedule.comms``) are not ``orders``
``comm_deadlock`` the sends and receives of ``Schedule.comms`` cannot all run (torch's
               runtime would hang; :mod:`schedules.comms`)
============== =====================================================================

The structural rules are checked here with array operations; ``deadlock`` and ``memory`` come
from the simulator (:func:`schedules.simulate.simulate`), and :func:`schedules.validate` (in
:mod:`schedules.simulate`, which imports this module) runs both.

>>> from schedules import Instance, Schedule, validate
>>> bad = Schedule.from_strings(Instance(P=2, m=1), {0: ["0F0", "0B0"], 1: ["1F0"]})
>>> [v.rule for v in validate(bad)]
['missing']
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

import numpy as np

from .compiled import B, KIND_LETTERS, NK, RI, RW, Compiled, F, I, R, W, expected_gpus

MAX_MESSAGES_PER_RULE = 10


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``rule`` (see the module table) and a message naming the op(s)."""

    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


def _report(out: list, rule: str, messages, total: int | None = None) -> None:
    """Append the first MAX_MESSAGES_PER_RULE of ``messages`` (a list, or a lazy iterable of
    ``total`` messages: only the kept ones are ever formatted) and a count of the others."""
    if total is None:
        messages = list(messages)
        total = len(messages)
    for msg in islice(messages, MAX_MESSAGES_PER_RULE):
        out.append(Violation(rule, msg))
    if total > MAX_MESSAGES_PER_RULE:
        out.append(Violation(rule, f"... and {total - MAX_MESSAGES_PER_RULE} more"))


def check_structure(c: Compiled) -> list[Violation]:
    """All violations of the structural rules (everything but ``deadlock`` and ``memory``)."""
    inst = c.schedule.instance
    S, m = inst.S, inst.m
    out: list[Violation] = []
    home = expected_gpus(inst, c.stage, c.micro)  # the GPU each op belongs on

    def name(k):
        return f"{c.stage[k]}{KIND_LETTERS[c.kind[k]]}{c.micro[k]}"

    bad_range = np.flatnonzero(c.ids < 0)
    _report(out, "range", (
        f"{name(k)} on GPU {c.gpu[k]}: "
        + (f"stage {c.stage[k]} is outside 0..{S - 1}" if c.stage[k] >= S
           else f"microbatch {c.micro[k]} is outside 0..{m - 1}")
        for k in bad_range), len(bad_range))
    ok = c.ids >= 0
    wrong = np.flatnonzero(ok & (home != c.gpu))

    def copy(k):  # with two directions a stage's GPU depends on the microbatch's copy
        return (f" (copy {inst.copy_of(int(c.micro[k]))}, microbatch {c.micro[k]})"
                if inst.directions == 2 else "")

    _report(out, "placement", (
        f"{name(k)} is listed on GPU {c.gpu[k]} but stage {c.stage[k]}{copy(k)} is held by GPU "
        f"{home[k]}" for k in wrong), len(wrong))
    if not inst.split:
        nosplit = np.flatnonzero((c.kind == I) | (c.kind == W) | (c.kind == RI))
        _report(out, "durations", (
            f"{name(k)} on GPU {c.gpu[k]}: op {KIND_LETTERS[c.kind[k]]} needs split backward "
            f"durations (b_I, b_W), the instance has fused b only" for k in nosplit), len(nosplit))

    counts = np.bincount(c.ids[ok], minlength=NK * S * m).reshape(NK, S, m)
    dup_ids = np.flatnonzero(counts.ravel() > 1)
    _report(out, "duplicate", (
        f"{c.op_name(int(i))} is listed {counts.ravel()[i]} times" +
        (" (a forward is recomputed at most once before its input gradient)"
         if i // (S * m) == R else
         " (a forward is recomputed at most once between I and W)" if i // (S * m) == RW else
         " (an input gradient is recomputed at most once before W)" if i // (S * m) == RI
         else "")
        for i in dup_ids), len(dup_ids))
    has = counts > 0
    def cells(mask):
        """``(s, j)`` of every True cell of an ``S x m`` mask, lazily (flatnonzero is fast)."""
        flat = np.flatnonzero(mask.ravel())
        return ((int(i) // m, int(i) % m) for i in flat), len(flat)

    miss_f, n_miss_f = cells(~has[F])
    _report(out, "missing", (f"forward {s}F{j} is in no order" for s, j in miss_f), n_miss_f)
    no_bwd, n_no_bwd = cells(~has[B] & ~has[I] & ~has[W])
    _report(out, "missing", (
        f"backward of microbatch {j} at stage {s} ({s}B{j}, or {s}I{j} and {s}W{j}) is in no order"
        for s, j in no_bwd), n_no_bwd)
    both = np.argwhere(has[B] & (has[I] | has[W]))
    half = np.argwhere(~has[B] & (has[I] ^ has[W]))
    _report(out, "backward", [
        f"{s}B{j} and {s}{'I' if has[I][s, j] else 'W'}{j}: microbatch {j} at stage {s} has its "
        f"backward in both forms" for s, j in both] + [
        (f"{s}I{j} has no {s}W{j}" if has[I][s, j] else f"{s}W{j} has no {s}I{j}")
        + " (split backward needs both)" for s, j in half])

    # R must sit after F(j,s) and before the backward of (j,s) in its GPU's order
    if has[R].any() or has[RW].any() or has[RI].any():
        pos = np.full(NK * S * m, -1, dtype=np.int64)
        local = np.arange(len(c.ids)) - c.offsets[c.gpu]
        pos[c.ids[ok]] = local[ok]
        pos = pos.reshape(NK, S, m)
        msgs = []
        for s, j in np.argwhere(has[RW]):
            if has[W][s, j] and pos[W, s, j] < pos[RW, s, j]:
                msgs.append(f"{s}R{j} is listed after {s}W{j}: a recompute after the input "
                            f"gradient {s}I{j} must come before the weight gradient that uses it")
        for s, j in np.argwhere(has[RI]):
            if not has[RW][s, j]:
                msgs.append(f"{s}RI{j} has no backward recompute {s}R{j} between {s}I{j} and "
                            f"{s}W{j}: re-running the input gradient needs the recomputed "
                            f"forward (the third option is R then RI before W)")
            elif pos[RI, s, j] < pos[RW, s, j]:
                msgs.append(f"{s}RI{j} is listed before the backward recompute {s}R{j}: it "
                            f"re-runs the input gradient from the recomputed forward")
            elif has[W][s, j] and pos[W, s, j] < pos[RI, s, j]:
                msgs.append(f"{s}RI{j} is listed after {s}W{j}: the weight gradient uses it")
        for s, j in np.argwhere(has[R]):
            pr = pos[R, s, j]
            pb = pos[B, s, j] if has[B][s, j] else pos[I, s, j]
            if (has[B][s, j] or has[I][s, j]) and pb >= 0 and pb < pr:
                kb = "B" if has[B][s, j] else "I"
                msgs.append(f"{s}R{j} is listed after its backward {s}{kb}{j}: the recompute "
                            f"must come before the backward that uses it")
            if has[F][s, j] and pos[F, s, j] > pr:
                msgs.append(f"{s}R{j} is listed before its forward {s}F{j}")
        _report(out, "recompute", msgs)
    if c.fused is not None and c.fused.any():
        msgs = []
        for k in np.flatnonzero(c.fused).tolist():
            if c.kind[k] not in (B, I) or c.kind[k + 1] != F:
                msgs.append(f"{name(k + 1)}&{name(k)} on GPU {c.gpu[k]}: an overlapped op joins "
                            f"a forward F and a backward B or I")
        _report(out, "overlap", msgs)
    if c.schedule.comms is not None:
        from .comms import check_comms

        out += [Violation(rule, msg) for rule, msg in check_comms(c.schedule)]
    return out
