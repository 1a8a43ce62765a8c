"""A schedule: an :class:`~schedules.instance.Instance` plus one op order per GPU.

MODEL.md: peak memory is a property of the per-GPU orders alone and the best timing of given
orders is the ASAP one, so the orders *are* the schedule. :func:`schedules.simulate.simulate`
times and checks them.

>>> from schedules import Instance, Schedule
>>> sched = Schedule.from_strings(Instance(P=1, m=1), {0: ["0F0", "0B0"]})
>>> [str(op) for op in sched.orders[0]]
['0F0', '0B0']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence, Union

from .instance import Instance, InstanceError
from .ops import KIND_INDEX, KINDS, Op, OpError


class ScheduleError(ValueError):
    """The orders cannot even be read as a schedule of the instance (wrong number of GPUs...)."""


OrdersLike = Union[Mapping, Sequence]


@dataclass(frozen=True)
class Schedule:
    """Per-GPU op orders for one instance.

    ``orders[p]`` is the sequence of ops GPU ``p`` runs, in order. Construction checks only the
    shape (one sequence per GPU, every entry an :class:`Op`); everything else, such as ops on the
    wrong GPU, missing ops or memory above ``K``, is a *violation* reported by
    :func:`schedules.validate.validate`, so that invalid schedules can be built and inspected.
    """

    instance: Instance
    orders: tuple[tuple[Op, ...], ...]
    source: str = field(default="", compare=False)
    comms: Optional[tuple[tuple[str, ...], ...]] = field(default=None, compare=False)
    """Optional: each GPU's full action list with its communication actions (``SEND_F``,
    ``RECV_F``, ``SEND_B``, ``RECV_B``) between the ops, as torch's runtime order lists them
    (``"1RECV_F0"``, ``"1F0"``, ...); when present, the validator checks that its ops are
    ``orders`` and that the sends and receives cannot deadlock (:mod:`schedules.comms`)."""

    def __post_init__(self) -> None:
        if len(self.orders) != self.instance.P:
            raise ScheduleError(
                f"orders list {len(self.orders)} GPUs but the instance has P={self.instance.P}")
        orders = tuple(tuple(seq) for seq in self.orders)
        for p, seq in enumerate(orders):
            for op in seq:
                if not isinstance(op, Op):
                    raise ScheduleError(f"GPU {p}: order entry {op!r} is not an Op")
        object.__setattr__(self, "orders", orders)
        if self.comms is not None:
            comms = normalize_comms(self.comms, self.instance.P)
            object.__setattr__(self, "comms", comms)

    # ------------------------------------------------------------ construction
    @classmethod
    def from_strings(cls, instance: Instance, orders: OrdersLike, source: str = "") -> "Schedule":
        """Build from action strings (or Ops): ``orders`` maps GPU -> list, or is a list by GPU.

        GPU keys may be ints or their strings; a GPU absent from a mapping has an empty order.
        """
        return cls(instance, normalize_orders(orders, instance.P), source)

    # ---------------------------------------------------------------- queries
    @property
    def num_ops(self) -> int:
        return sum(len(seq) for seq in self.orders)

    def ops(self) -> Iterable[tuple[int, Op]]:
        """Every ``(gpu, op)`` in GPU order, then position."""
        for p, seq in enumerate(self.orders):
            for op in seq:
                yield p, op

    def with_instance(self, instance: Instance) -> "Schedule":
        """The same orders on another instance (for example another ``K`` or other durations)."""
        return Schedule(instance, self.orders, self.source, self.comms)

    def comms_strings(self) -> Optional[dict[str, list[str]]]:
        """The communication order (if any) as the JSON mapping of an orders document's ``comms``."""
        if self.comms is None:
            return None
        return {str(p): list(seq) for p, seq in enumerate(self.comms)}

    def to_strings(self) -> dict[str, list[str]]:
        """The orders as the JSON mapping of CLI.md: ``{"0": ["0F0", ...], ...}``."""
        return {str(p): [str(op) for op in seq] for p, seq in enumerate(self.orders)}


def _per_gpu(orders: OrdersLike, P: int, what: str) -> list:
    """One entry per GPU from a GPU -> list mapping (int or string keys; absent GPUs get an
    empty list) or a list by GPU; ``what`` names the key in messages."""
    if isinstance(orders, Mapping):
        per_gpu: list = [[] for _ in range(P)]
        seen = set()
        for key, seq in orders.items():
            try:
                p = int(key)
            except (TypeError, ValueError):
                raise ScheduleError(f"{what} key {key!r} is not a GPU number") from None
            if not 0 <= p < P:
                raise ScheduleError(f"{what} name GPU {p}, outside 0..{P - 1} (P={P})")
            if p in seen:
                raise ScheduleError(f"{what} list GPU {p} twice")
            seen.add(p)
            per_gpu[p] = seq
        return per_gpu
    if isinstance(orders, Sequence) and not isinstance(orders, str):
        if len(orders) != P:
            raise ScheduleError(f"{what} list {len(orders)} GPUs but P={P}")
        return list(orders)
    raise ScheduleError(f"{what} must map each GPU to its list of actions")


def normalize_orders(orders: OrdersLike, P: int) -> tuple[tuple[Op, ...], ...]:
    """Turn a GPU -> actions mapping (or list) into a tuple of Op tuples, one per GPU."""
    per_gpu = _per_gpu(orders, P, "orders")
    result = []
    cache: dict[str, Op] = {}
    for p, seq in enumerate(per_gpu):
        if isinstance(seq, str) or not isinstance(seq, Sequence):
            raise ScheduleError(f"GPU {p}: the order must be a list of actions, got {seq!r}")
        ops = []
        for item in seq:
            if isinstance(item, Op):
                ops.append(item)
                continue
            op = cache.get(item) if isinstance(item, str) else None
            if op is None:
                try:
                    op = Op.parse(item)
                except OpError as exc:
                    raise ScheduleError(f"GPU {p}: {exc}") from None
                cache[item] = op
            ops.append(op)
        result.append(tuple(ops))
    return tuple(result)


def normalize_comms(comms: OrdersLike, P: int) -> tuple[tuple[str, ...], ...]:
    """A GPU -> action strings mapping (or list by GPU) as a tuple of string tuples, one per GPU."""
    per_gpu = _per_gpu(comms, P, "comms")
    out = []
    for p, seq in enumerate(per_gpu):
        if isinstance(seq, str) or not isinstance(seq, Sequence) \
                or not all(isinstance(a, str) for a in seq):
            raise ScheduleError(f"GPU {p}: comms must be a list of action strings")
        out.append(tuple(a.strip() for a in seq))
    return tuple(out)
