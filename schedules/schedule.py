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
from itertools import chain
from typing import Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from .limits import LimitError, MAX_ORDER_ITEMS, limit_message
from .numbers import INT_TEXT
from .instance import Instance
from .ops import KIND_INDEX, KINDS, OVERLAP_SEP, Op, OpError, parse_overlap
from .errors import InputError


class ScheduleError(InputError):
    """The orders cannot even be read as a schedule of the instance (wrong number of GPUs...)."""


OrdersLike = Union[Mapping, Sequence]


@dataclass(frozen=True)
class Schedule:
    """Per-GPU op orders for one instance.

    ``orders[p]`` is the sequence of ops GPU ``p`` runs, in order. Construction checks only the
    shape (one sequence per GPU, every entry an :class:`Op`); everything else, such as ops on the
    wrong GPU, missing ops or memory above ``K``, is a *violation* reported by
    :func:`schedules.simulate.validate`, so that invalid schedules can be built and inspected.
    """

    instance: Instance
    orders: tuple[tuple[Op, ...], ...]
    source: str = field(default="", compare=False)
    comms: Optional[tuple[tuple[str, ...], ...]] = field(default=None, compare=False)
    """Optional: each GPU's full action list with its communication actions (``SEND_F``,
    ``RECV_F``, ``SEND_B``, ``RECV_B``) between the ops, as torch's runtime order lists them
    (``"1RECV_F0"``, ``"1F0"``, ...); when present, the validator checks that its ops are
    ``orders`` and that the sends and receives cannot deadlock (:mod:`schedules.comms`)."""
    overlaps: Optional[tuple[tuple[int, ...], ...]] = None
    """Optional overlapped ``F&B`` ops (MODEL.md, third-round extensions): for each GPU the
    positions ``i`` whose ops ``i`` and ``i + 1`` run as *one* op. ``orders`` lists the backward
    part (``B`` or ``I``) at ``i`` and the forward part at ``i + 1``, the order in which their
    memory effects apply (the release before the store, both at the op's end); the action
    string writes the forward first, ``"0F3&3B1"``. None or all empty: no overlapped op. Code
    that ignores this field sees the two parts run one after the other."""

    def __post_init__(self) -> None:
        if not isinstance(self.instance, Instance):
            raise TypeError(f"Schedule: instance must be an Instance, got "
                            f"{type(self.instance).__name__}")
        if isinstance(self.orders, (str, bytes, Mapping)) or not isinstance(self.orders, Iterable):
            raise ScheduleError("Schedule: orders must be one sequence of Ops per GPU "
                                "(Schedule.from_strings reads action strings)")
        if not isinstance(self.orders, Sequence):
            object.__setattr__(self, "orders", tuple(self.orders))
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
            from .instance import require_one_direction

            require_one_direction(self.instance, "a communication order (comms)")
            comms = normalize_comms(self.comms, self.instance.P)
            object.__setattr__(self, "comms", comms)
        object.__setattr__(self, "overlaps", normalize_overlaps(self.overlaps, orders))

    # ------------------------------------------------------------ construction
    @classmethod
    def from_strings(cls, instance: Instance, orders: OrdersLike, source: str = "") -> "Schedule":
        """Build from action strings (or Ops): ``orders`` maps GPU -> list, or is a list by GPU.

        GPU keys may be ints or their strings; a GPU absent from a mapping has an empty order.
        """
        if not isinstance(instance, Instance):
            raise TypeError(f"Schedule.from_strings: instance must be an Instance, got "
                            f"{type(instance).__name__}")
        per_gpu = orders_per_gpu(orders, instance.P)
        packed = pack_actions(per_gpu)
        if packed is None:  # not all in the plain form: the careful reader names the problem
            ops, overlaps = actions_to_ops_and_overlaps(per_gpu)
            return cls(instance, ops, source, None, overlaps)
        obj = object.__new__(cls)
        for name, value in (("instance", instance), ("source", source),
                            ("_codes", packed[0]), ("_lengths", packed[1])):
            object.__setattr__(obj, name, value)
        return obj

    def __getattr__(self, name: str):
        # a schedule read by from_strings keeps packed codes; its Ops are built on first use
        if name != "orders" or "_codes" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        codes, lengths = self.__dict__["_codes"], self.__dict__["_lengths"]
        cache: dict[int, Op] = {}
        flat = []
        for code in codes.tolist():
            op = cache.get(code)
            if op is None:
                op = cache[code] = Op(code >> 35, KINDS[(code >> 32) & 7], code & 0xFFFFFFFF)
            flat.append(op)
        bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
        orders = tuple(tuple(flat[bounds[p]:bounds[p + 1]]) for p in range(len(lengths)))
        object.__setattr__(self, "orders", orders)
        return orders

    # ---------------------------------------------------------------- queries
    def packed(self) -> tuple[np.ndarray, list[int]]:
        """``(codes, lengths)``: every op's packed :attr:`Op.code` (int64, GPU order then
        position) and the length of each GPU's order; what the simulator compiles."""
        if "_codes" not in self.__dict__:
            lengths = [len(seq) for seq in self.orders]
            codes = np.fromiter((op.code for seq in self.orders for op in seq), dtype=np.int64,
                                count=sum(lengths))
            object.__setattr__(self, "_codes", codes)
            object.__setattr__(self, "_lengths", lengths)
        return self.__dict__["_codes"], self.__dict__["_lengths"]

    def first_out_of_range(self) -> Optional[tuple[int, Op]]:
        """The first ``(gpu, op)`` (GPU order, then position) whose stage is ``>= S`` or whose
        microbatch is ``>= m``, or None. The validator reports every such op (rule ``range``);
        a document reader refuses the document at the first (malformed input)."""
        codes, lengths = self.packed()
        inst = self.instance
        bad = np.flatnonzero(((codes >> 35) >= inst.S) | ((codes & 0xFFFFFFFF) >= inst.m))
        if not bad.size:
            return None
        k = int(bad[0])
        code = int(codes[k])
        gpu = int(np.searchsorted(np.cumsum(lengths), k, side="right"))
        return gpu, Op(code >> 35, KINDS[(code >> 32) & 7], code & 0xFFFFFFFF)

    @property
    def num_ops(self) -> int:
        if "_lengths" in self.__dict__:
            return sum(self.__dict__["_lengths"])
        return sum(len(seq) for seq in self.orders)

    def ops(self) -> Iterable[tuple[int, Op]]:
        """Every ``(gpu, op)`` in GPU order, then position."""
        for p, seq in enumerate(self.orders):
            for op in seq:
                yield p, op

    def with_instance(self, instance: Instance) -> "Schedule":
        """The same orders on another instance (for example another ``K`` or other durations)."""
        return Schedule(instance, self.orders, self.source, self.comms, self.overlaps)

    def overlap_starts(self, p: int) -> tuple[int, ...]:
        """Positions ``i`` of GPU ``p`` whose ops ``i, i + 1`` form one ``F&B`` op (see
        :attr:`overlaps`)."""
        return () if self.overlaps is None else self.overlaps[p]

    def actions(self, p: int) -> list[str]:
        """GPU ``p``'s action strings: one per op, an ``F&B`` op as ``"<forward>&<backward>"``."""
        seq = self.orders[p]
        joined = set(self.overlap_starts(p))
        out, i = [], 0
        while i < len(seq):
            if i in joined:
                out.append(f"{seq[i + 1]}{OVERLAP_SEP}{seq[i]}")
                i += 2
            else:
                out.append(str(seq[i]))
                i += 1
        return out

    def comms_strings(self) -> Optional[dict[str, list[str]]]:
        """The communication order (if any) as the JSON mapping of an orders document's ``comms``."""
        if self.comms is None:
            return None
        return {str(p): list(seq) for p, seq in enumerate(self.comms)}

    def to_strings(self) -> dict[str, list[str]]:
        """The orders as the JSON mapping of CLI.md: ``{"0": ["0F0", ...], ...}``."""
        if self.overlaps is not None:
            return {str(p): self.actions(p) for p in range(len(self.orders))}
        return {str(p): [str(op) for op in seq] for p, seq in enumerate(self.orders)}

    def __repr__(self) -> str:  # the orders are long: say what they are
        from .brief import brief_repr, instance_brief

        return brief_repr("Schedule", instance=instance_brief(self.instance),
                          ops=sum(len(seq) for seq in self.orders), source=self.source)

def orders_per_gpu(orders: OrdersLike, P: int) -> list[Sequence]:
    """One sequence of actions per GPU from a GPU -> actions mapping (int or string keys;
    an absent GPU has an empty order) or a list by GPU."""
    if isinstance(orders, Mapping):
        per_gpu: list[Sequence] = [() for _ in range(P)]
        seen = set()
        for key, seq in orders.items():
            if isinstance(key, bool) or not isinstance(key, (int, str)):
                raise ScheduleError(f"orders key {key!r} is not a GPU number"[:200])
            p: Optional[int]
            if isinstance(key, int):
                p = key
            else:  # ASCII digits only: "1_0" and non-ASCII digits are not GPU numbers
                m = INT_TEXT.match(key) if len(key) <= 20 else None
                p = int(m.group(1) + m.group(2)) if m else None
            if p is None:
                raise ScheduleError(f"orders key {key!r} is not a GPU number"[:200])
            if not 0 <= p < P:
                raise ScheduleError(f"orders name GPU {p}, outside 0..{P - 1} (P={P})")
            if p in seen:
                raise ScheduleError(f"orders list GPU {p} twice")
            seen.add(p)
            per_gpu[p] = seq
    elif isinstance(orders, Sequence) and not isinstance(orders, (str, bytes)):
        if len(orders) != P:
            raise ScheduleError(f"orders list {len(orders)} GPUs but P={P}")
        per_gpu = list(orders)
    else:
        raise ScheduleError("orders must map each GPU to its list of actions")
    total = 0
    for p, seq in enumerate(per_gpu):
        if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
            raise ScheduleError(f"GPU {p}: the order must be a list of actions, got "
                                f"{type(seq).__name__}")
        total += len(seq)
    if total > MAX_ORDER_ITEMS:
        raise OrdersLimitError(limit_message("MAX_ORDER_ITEMS", total, "actions listed"))
    return per_gpu


def actions_to_ops(per_gpu: list[Sequence]) -> tuple[tuple[Op, ...], ...]:
    """Each GPU's actions (strings or Ops) as a tuple of Ops; a bad action names its GPU."""
    result = []
    cache: dict[str, Op] = {}
    for p, seq in enumerate(per_gpu):
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


def actions_to_ops_and_overlaps(per_gpu: list[Sequence]):
    """:func:`actions_to_ops`, reading overlapped actions ``"0F3&3B1"`` too: ``(orders,
    overlaps)`` with each overlapped action as its backward part then its forward part and its
    position in ``overlaps`` (None when there is none; see :attr:`Schedule.overlaps`)."""
    if not any(isinstance(a, str) and OVERLAP_SEP in a for seq in per_gpu for a in seq):
        return actions_to_ops(per_gpu), None
    orders, overlaps = [], []
    for p, seq in enumerate(per_gpu):
        plain: list = []
        starts = []
        for item in seq:
            if isinstance(item, str) and OVERLAP_SEP in item:
                try:
                    fwd, bwd = parse_overlap(item)
                except OpError as exc:
                    raise ScheduleError(f"GPU {p}: {exc}") from None
                starts.append(len(plain))
                plain += [bwd, fwd]
            else:
                plain.append(item)
        orders.append(actions_to_ops([plain])[0] if plain else ())
        overlaps.append(tuple(starts))
    return tuple(orders), tuple(overlaps)


def normalize_overlaps(overlaps, orders) -> Optional[tuple[tuple[int, ...], ...]]:
    """``overlaps`` checked against ``orders``: one sorted tuple of positions per GPU, each
    ``i`` with ``i + 1`` in the order and no position in two overlapped ops; None when empty."""
    if overlaps is None:
        return None
    if isinstance(overlaps, Mapping):
        overlaps = [overlaps.get(p, overlaps.get(str(p), ())) for p in range(len(orders))]
    overlaps = tuple(overlaps)
    if len(overlaps) != len(orders):
        raise ScheduleError(f"overlaps list {len(overlaps)} GPUs but the orders have "
                            f"{len(orders)}")
    out = []
    for p, starts in enumerate(overlaps):
        starts = tuple(sorted(int(i) for i in starts))
        for a, i in enumerate(starts):
            if not 0 <= i < len(orders[p]) - 1 or (a and starts[a - 1] + 1 >= i):
                raise ScheduleError(f"GPU {p}: overlapped op at position {i} is not two ops "
                                    f"of the order of its own")
        out.append(starts)
    return tuple(out) if any(out) else None


def normalize_orders(orders: OrdersLike, P: int) -> tuple[tuple[Op, ...], ...]:
    """Turn a GPU -> actions mapping (or list) into a tuple of Op tuples, one per GPU."""
    return actions_to_ops(orders_per_gpu(orders, P))


_KIND_OF_BYTE = np.full(256, -1, dtype=np.int64)
for _k, _i in KIND_INDEX.items():
    if len(_k) == 1:  # a two-letter kind (RI) makes the fast path decline: the careful reader
        _KIND_OF_BYTE[ord(_k)] = _i
_MAX_RUN = 10  # digits of a stage or microbatch in the packed fast path (2**32 has 10)


def _read_runs(digit: np.ndarray, last: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Decimal values of digit runs ending at ``last`` (inclusive) of the given lengths."""
    value = np.zeros(len(last), dtype=np.int64)
    scale = 1
    for d in range(int(length.max(initial=0))):
        value += np.where(length > d, digit[np.maximum(last - d, 0)], 0) * scale
        scale *= 10
    return value


def pack_actions(per_gpu: list[Sequence]) -> Optional[tuple[np.ndarray, list[int]]]:
    """``(codes, lengths)`` of the actions when every one is a plain ``<digits><F|B|I|W|R><digits>``
    string (the form documents use), parsed in a few array passes; None otherwise (then the
    careful per-action reader, :func:`actions_to_ops`, names any problem)."""
    lengths = [len(seq) for seq in per_gpu]
    n = sum(lengths)
    if n == 0:
        return np.zeros(0, dtype=np.int64), lengths
    try:
        data = ",".join(chain.from_iterable(per_gpu)).encode("ascii")
    except (TypeError, UnicodeEncodeError):
        return None
    b = np.frombuffer(data, dtype=np.uint8)
    seps = np.flatnonzero(b == 44)
    kind = _KIND_OF_BYTE[b]
    letters = np.flatnonzero(kind >= 0)
    if len(seps) != n - 1 or len(letters) != n:
        return None
    starts = np.concatenate(([0], seps + 1))
    stops = np.concatenate((seps, [len(b)]))
    stage_len = letters - starts
    micro_len = stops - letters - 1
    digit = b.astype(np.int64) - 48
    if (stage_len.min() < 1 or micro_len.min() < 1 or stage_len.max() > _MAX_RUN
            or micro_len.max() > _MAX_RUN
            or np.count_nonzero((digit >= 0) & (digit <= 9)) != len(b) - 2 * n + 1):
        return None
    stage = _read_runs(digit, letters - 1, stage_len)
    micro = _read_runs(digit, stops - 1, micro_len)
    if stage.max() >= 1 << 27 or micro.max() >= 1 << 32:
        return None
    codes = (stage << 35) | (kind[letters] << 32) | micro
    return codes, lengths


class OrdersLimitError(ScheduleError, LimitError):
    """Orders longer than :data:`schedules.MAX_ORDER_ITEMS`."""


def normalize_comms(comms: OrdersLike, P: int) -> tuple[tuple[str, ...], ...]:
    """A GPU -> action strings mapping (or list by GPU) as a tuple of string tuples, one per GPU."""
    out = []
    for p, seq in enumerate(orders_per_gpu(comms, P)):
        if not all(isinstance(a, str) for a in seq):
            raise ScheduleError(f"GPU {p}: comms must be a list of action strings")
        out.append(tuple(a.strip() for a in seq))
    return tuple(out)


COMM_KINDS = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")
"""torch's point-to-point actions kept in :attr:`Schedule.comms` (:mod:`schedules.comms`)."""


def parse_comm_action(text: str, p: int) -> tuple[int, str, int]:
    """``(stage, kind, microbatch)`` of one action of a communication order (ValueError naming
    GPU ``p`` otherwise)."""
    from .ops import split_action

    parts = split_action(text) if isinstance(text, str) else None
    if parts is None or parts[1] not in COMM_KINDS + KINDS:
        raise ValueError(f"GPU {p}: cannot read communication-order action {str(text)[:40]!r}")
    return parts


def comms_problem(schedule) -> str | None:
    """Why ``schedule.comms`` cannot describe ``schedule`` at all (None when it can): what an
    orders document's ``comms`` is refused for at reading (exit 2), before any readiness check.

    The problems: an action that is not ``<stage><kind><microbatch>``; a stage outside
    ``0..S-1`` or a microbatch outside ``0..m-1``; a send or receive whose other end is no
    stage (``SEND_F``/``RECV_B`` of the last stage, ``RECV_F``/``SEND_B`` of stage 0); an action
    listed on a GPU that does not hold its stage; an action listed twice; compute ops of a GPU's
    communication order that differ from its op order (``orders``).
    """
    if schedule.comms is None:
        return None
    inst = schedule.instance
    S, m = inst.S, inst.m
    seen = set()
    for p, seq in enumerate(schedule.comms):
        ops = []
        for k, text in enumerate(seq):
            try:
                s, kind, j = parse_comm_action(text, p)
            except ValueError as exc:
                return str(exc)[:200]
            where = f"GPU {p}: comms action {k} ({text[:40]!r})"
            if not (0 <= s < S and 0 <= j < m):
                return f"{where} names a stage or microbatch that does not exist (S={S}, m={m})"
            if (kind in ("SEND_F", "RECV_B") and s == S - 1) or \
                    (kind in ("RECV_F", "SEND_B") and s == 0):
                return f"{where} sends to or receives from a stage that does not exist"
            if inst.gpu(s) != p:
                return f"{where} is on GPU {p} but stage {s} is on GPU {inst.gpu(s)}"
            if (s, kind, j) in seen:
                return f"{where} is listed twice"
            seen.add((s, kind, j))
            if kind not in COMM_KINDS:
                ops.append(f"{s}{kind}{j}")
        written = [x for a in schedule.actions(p) for x in a.split(OVERLAP_SEP)]
        if ops != written:  # an F&B op is its forward then its backward, as torch lists them
            return f"GPU {p}: the ops of its communication order differ from its op order"
    return None
