"""Operations and their action-string notation (MODEL.md, *Operations*).

An :class:`Op` is one unit of work: ``kind`` in ``F B I W R`` on ``stage`` for ``microbatch``.
Its string form is torch.distributed.pipelining's action notation ``<stage><op><microbatch>``:

>>> Op.parse("3F0")
Op(stage=3, kind='F', microbatch=0)
>>> str(Op(0, "B", 7))
'0B7'

``R`` (recompute a forward before its backward) is this project's addition to torch's letters,
and so is ``RI`` (re-run the input gradient ``I(j,s)`` before ``W(j,s)``, after the backward
recompute ``R(j,s)``: the remat paper's third option, MODEL.md third-round extensions), written
like torch's multi-letter computation types (``2RI5``):

>>> Op.parse("2RI5")
Op(stage=2, kind='RI', microbatch=5)

An overlapped forward and backward (MODEL.md, third-round extensions, ``F&B``) is written as its
two parts joined by ``&``, the forward first, as torch writes ``(0F3;3B1)OVERLAP_F_B``:

>>> parse_overlap("0F3&3B1")
(Op(stage=0, kind='F', microbatch=3), Op(stage=3, kind='B', microbatch=1))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from .errors import InputError

KINDS = ("F", "B", "I", "W", "R", "RI")
"""Op kinds: forward, full backward, input-gradient backward, weight-gradient backward, recompute
of a forward, recompute of an input gradient (before ``W``, the remat paper's third option)."""

KIND_NAMES = "F B I W R RI"
"""The op kinds as error messages list them."""

KIND_INDEX = {k: i for i, k in enumerate(KINDS)}

_ACTION = re.compile(r"^\s*(\d+)\s*([A-Za-z_]+)\s*(\d+)\s*\Z", re.ASCII)


class OpError(InputError):
    """A malformed action string or an unknown op kind; the message quotes the offending text."""


@dataclass(frozen=True, order=True, slots=True)
class Op:
    """One operation ``kind(microbatch, stage)``; printed as ``<stage><kind><microbatch>``."""

    stage: int
    kind: str
    microbatch: int
    code: int = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or self.kind not in KIND_INDEX:
            raise OpError(f"unknown op kind {self.kind!r} in "
                          f"{self.stage}{self.kind}{self.microbatch}; ops are {KIND_NAMES}")
        if (isinstance(self.stage, bool) or not isinstance(self.stage, int)
                or not 0 <= self.stage < 1 << 27):
            raise OpError(f"stage must be a whole number >= 0, got {self.stage!r}")
        if (isinstance(self.microbatch, bool) or not isinstance(self.microbatch, int)
                or not 0 <= self.microbatch < 1 << 32):
            raise OpError(f"microbatch must be a whole number >= 0, got {self.microbatch!r}")
        # packed (stage, kind, microbatch) so that whole orders compile in one numpy pass
        object.__setattr__(self, "code", (self.stage << 35) | (KIND_INDEX[self.kind] << 32)
                           | self.microbatch)

    def __str__(self) -> str:
        return f"{self.stage}{self.kind}{self.microbatch}"

    @classmethod
    def trusted(cls, stage: int, kind: str, microbatch: int) -> "Op":
        """The op ``kind(microbatch, stage)`` built without the checks of ``__post_init__``,
        for generators whose arguments are valid by construction (about 3x faster: the list
        scheduler makes one op per op of the schedule, 49,152 at ``P = 32, m = 256, v = 2``
        split). Equal to ``Op(stage, kind, microbatch)``."""
        op = object.__new__(cls)
        object.__setattr__(op, "stage", stage)
        object.__setattr__(op, "kind", kind)
        object.__setattr__(op, "microbatch", microbatch)
        object.__setattr__(op, "code", (stage << 35) | (KIND_INDEX[kind] << 32) | microbatch)
        return op

    @classmethod
    def parse(cls, text: str) -> "Op":
        """Parse an action string such as ``"3F0"``; raise :class:`OpError` naming the problem."""
        if isinstance(text, Op):
            return text
        if not isinstance(text, str):
            raise OpError(f"an action must be a string like '3F0', got {text!r}")
        match = _ACTION.match(text) if len(text) <= 64 else None
        if not match:
            raise OpError(f"malformed action {text[:64]!r}: expected <stage><op><microbatch> "
                          f"like '3F0'")
        kind = match.group(2)
        if kind not in KIND_INDEX:
            raise OpError(f"unknown op {kind!r} in action {text!r}; ops are {KIND_NAMES}")
        return cls(int(match.group(1)), kind, int(match.group(3)))


OVERLAP_SEP = "&"
"""Joins the two parts of an ``F&B`` action: ``<forward>&<backward>`` such as ``0F3&3B1``."""


def parse_overlap(text: str) -> tuple[Op, Op]:
    """``(forward, backward)`` of an ``F&B`` action ``"0F3&3B1"``: a forward ``F`` and an input
    gradient ``I`` or full backward ``B``; raise :class:`OpError` naming the problem."""
    if not isinstance(text, str) or text.count(OVERLAP_SEP) != 1 or len(text) > 130:
        raise OpError(f"malformed overlapped action {str(text)[:64]!r}: expected "
                      f"<forward>&<backward> like '0F3&3B1'")
    left, right = text.split(OVERLAP_SEP)
    fwd, bwd = Op.parse(left), Op.parse(right)
    if fwd.kind != "F" or bwd.kind not in ("B", "I"):
        raise OpError(f"overlapped action {text.strip()!r} must join a forward F and a backward "
                      f"B or I, in that order (like '0F3&3B1')")
    return fwd, bwd


def split_action(text: str) -> tuple[int, str, int] | None:
    """``(stage, letters, microbatch)`` of an action-like string, or None if it has no such shape.

    Used by importers that must tell computation actions from other tokens (``2SEND_F0``).
    """
    match = _ACTION.match(text) if isinstance(text, str) and len(text) <= 64 else None
    if not match:
        return None
    return int(match.group(1)), match.group(2), int(match.group(3))
