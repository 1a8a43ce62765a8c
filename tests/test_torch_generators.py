"""Our generators against torch.distributed.pipelining's schedules (skipped without torch).

torch's schedules are built on mock stages (no process group) and read with the project's
importer (schedules.interop.torch.from_torch_schedule: the order torch's runtime executes,
communication dropped, DualPipeV's overlapped F+B split into F then B). For every size torch
accepts on the grid, the orders must be *equal* to ours; a difference would have to be
reported with both schedules valid and their makespans (none was found with torch 2.13.0:
GPipe, 1F1B, Interleaved1F1B (v = 2, 3), LoopedBFS, InterleavedZeroBubble (v = 2, 3),
ZBVZeroBubble and DualPipeV all match).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
S = pytest.importorskip("torch.distributed.pipelining.schedules")

from schedules import Instance, simulate  # noqa: E402
from schedules.generators import generate  # noqa: E402
from schedules.interop import from_torch_schedule  # noqa: E402
from torch_mocks import build_torch_schedule  # noqa: E402


# our name, torch class, waves, torch stage style, split backward
PAIRS = [
    ("gpipe", "ScheduleGPipe", 1, "loop", False),
    ("1f1b", "Schedule1F1B", 1, "loop", False),
    ("interleaved", "ScheduleInterleaved1F1B", 2, "loop", False),
    ("interleaved", "ScheduleInterleaved1F1B", 3, "loop", False),
    ("looped-bfs", "ScheduleLoopedBFS", 2, "loop", False),
    ("interleaved-zb", "ScheduleInterleavedZeroBubble", 2, "loop", True),
    ("interleaved-zb", "ScheduleInterleavedZeroBubble", 3, "loop", True),
    ("zbv", "ScheduleZBVZeroBubble", 2, "v", True),
    ("dualpipev-fb", "ScheduleDualPipeV", 2, "v", True),   # OVERLAP_F_B: F&B ops
]


build = build_torch_schedule


@pytest.mark.parametrize("name,cls_name,v,style,split", PAIRS,
                         ids=[f"{p[0]}-v{p[2]}" for p in PAIRS])
def test_orders_equal_torch(name, cls_name, v, style, split):
    cls = getattr(S, cls_name, None)
    if cls is None:
        pytest.skip(f"this torch has no {cls_name}")
    compared = 0
    for P in (1, 2, 3, 4):
        for m in sorted({P, 2 * P, 2 * P + 2, 3 * P, 8}):
            try:
                tsched = build(cls, P, m, v, style)
            except (ValueError, RuntimeError):
                continue  # a size torch refuses
            dur = {"b_I": 1, "b_W": 1} if split else {}
            theirs = from_torch_schedule(tsched, **dur)
            ours = generate(name, Instance(P=P, m=m, v=v,
                                           placement="vshape" if style == "v" else "looped",
                                           **dur))
            assert theirs.instance.stage_to_rank == ours.instance.stage_to_rank
            if theirs.orders != ours.orders:  # by design? then both valid, makespans reported
                rt, ro = simulate(theirs), simulate(ours)
                pytest.fail(f"{name} P={P} m={m} v={v}: orders differ; torch valid={rt.valid} "
                            f"makespan={rt.makespan}, ours valid={ro.valid} makespan={ro.makespan}")
            compared += 1
    assert compared >= 4
