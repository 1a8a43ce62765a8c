"""Building torch.distributed.pipelining schedules on mock stages (import only with torch).

A mock stage has just the attributes the schedule constructors read (``stage_index``,
``num_stages``, ``group_size``, ``group_rank``, ``submod``), the way torch's own schedule tests
build orders for inspection without a process group.
"""

from __future__ import annotations

import pytest

S = pytest.importorskip("torch.distributed.pipelining.schedules")


class MockStage:
    def __init__(self, stage_index, num_stages, group_size, group_rank):
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_size = group_size
        self.group_rank = group_rank
        self.submod = None
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1


def build_torch_schedule(cls, P: int, m: int, v: int, style: str):
    """A torch schedule of class ``cls`` for ``P`` ranks, ``m`` microbatches, ``v`` stages per
    rank placed by torch's ``generate_rank_to_stage_mapping(style)`` (``loop`` or ``v``)."""
    if issubclass(cls, S.PipelineScheduleSingle):
        return cls(MockStage(0, P, P, 0), m)
    stages = [MockStage(s, v * P, P, 0)
              for s in S.generate_rank_to_stage_mapping(P, v * P, style=style)[0]]
    return cls(stages, m)
