"""Shared pieces of the schedule generators: the error type, requirement checks and the
"1F1B skeleton" that turns a forward sequence and a backward sequence into one GPU's order.

The skeleton (Narayanan et al., PipeDream-Flush / Megatron-LM, 2021): a GPU runs ``w`` warm-up
forwards, then alternates one forward and one backward until the forwards run out, then runs
the remaining backwards (cool-down). GPipe is the skeleton with ``w = `` all forwards.

>>> from schedules.ops import Op
>>> fwd = [Op(0, "F", j) for j in range(3)]
>>> bwd = [Op(0, "B", j) for j in range(3)]
>>> [str(op) for op in one_f_one_b(fwd, bwd, warmup=1)]
['0F0', '0F1', '0B0', '0F2', '0B1', '0B2']
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..instance import Instance, placement_stage_to_rank
from ..ops import Op
from schedules.errors import InputError


class GeneratorError(InputError):
    """A generator cannot build its schedule for this instance; the message says why."""


def one_f_one_b(fwd: Sequence[Op], bwd: Sequence[Op], warmup: int) -> list[Op]:
    """Warm-up forwards, then one forward / one backward pairs, then the remaining backwards.

    ``fwd`` and ``bwd`` are the GPU's forwards and backwards in the order it runs each kind;
    ``warmup`` is clamped to ``0..len(fwd)``. A backward entry may be a tuple of ops (for
    example ``I`` then ``W``), which is spliced in place.
    """
    w = max(0, min(warmup, len(fwd)))
    order: list[Op] = list(fwd[:w])
    rest = list(fwd[w:])
    for k, back in enumerate(bwd):
        if k < len(rest):
            order.append(rest[k])
        order.extend(back if isinstance(back, tuple) else (back,))
    order.extend(rest[len(bwd):])
    return order


def backward_ops(inst: Instance, stage: int, microbatch: int, form: str = "fused") -> tuple[Op, ...]:
    """The backward of ``(microbatch, stage)``: ``(B,)`` fused, or ``(I, W)`` back to back."""
    if form == "split":
        return (Op(stage, "I", microbatch), Op(stage, "W", microbatch))
    return (Op(stage, "B", microbatch),)


def has_placement(inst: Instance, placement: str) -> bool:
    """True when ``inst``'s stages sit where the named placement puts them (an explicit
    ``stage_to_rank`` equal to it counts)."""
    return inst.stage_to_rank == placement_stage_to_rank(inst.P, inst.v, placement)


def require(condition: bool, name: str, message: str) -> None:
    """Raise :class:`GeneratorError` ``"<name>: <message>"`` unless ``condition``."""
    if not condition:
        raise GeneratorError(f"{name}: {message}")


def check_caps(inst: Instance, cap: Optional[Sequence[Optional[int]]], split: bool
               ) -> list[Optional[int]]:
    """The per-GPU memory caps of a capped list scheduler, checked: one per GPU (``None``:
    unlimited, also for ``cap=None``), each at least ``v`` (a microbatch holds ``v``
    activations on a GPU); ``split`` needs the instance's split durations.

    Raises
    ------
    GeneratorError
        Naming the problem: ``split`` without ``b_I``/``b_W``, a cap list of the wrong length,
        a cap below ``v``.
    """
    if split and not inst.split:
        raise GeneratorError("a split-backward schedule needs b_I and b_W (--b-input/--b-weight)")
    caps: list[Optional[int]] = [None] * inst.P if cap is None else list(cap)
    if len(caps) != inst.P:
        raise GeneratorError(f"cap lists {len(caps)} GPUs, P={inst.P}")
    for p, c in enumerate(caps):
        if c is not None and c < inst.v:
            raise GeneratorError(f"memory cap {c} on GPU {p} is below v={inst.v}: a microbatch "
                                 f"needs v activations there")
    return caps
