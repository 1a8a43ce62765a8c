"""Schedules as Chrome trace JSON (the Trace Event Format read by Perfetto and chrome://tracing).

One process ``pipebounds`` with one thread (track) per GPU, named ``GPU p``; one complete event
(``"ph": "X"``) per op with ``ts`` (start) and ``dur`` in microseconds, ``us_per_unit``
microseconds per model time unit (default 1: the model's time unit shown as 1 µs), its action
string as ``name``, its kind as ``cat`` and ``args`` (stage, microbatch, exact start and end,
live activations after it). A counter track per GPU (``"ph": "C"``, ``memory GPU p``) shows the
live activations over time. Exact times are kept in ``args``; ``ts``/``dur`` are floats.

>>> from schedules import Instance
>>> from schedules.generators import generate
>>> trace = chrome_trace(generate("1f1b", Instance(P=2, m=2)))
>>> ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
>>> len(ops), ops[0]["name"], ops[0]["tid"], ops[0]["ts"], ops[0]["dur"]
(8, '0F0', 0, 0.0, 1.0)
"""

from __future__ import annotations

from schedules.json_numbers import quantities, quantity
from schedules.ops import KINDS
from schedules.schedule import Schedule

from .gantt_data import gantt_data

PID = 0


def chrome_trace(schedule: Schedule, us_per_unit: float = 1.0) -> dict:
    """The trace object (``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": ...}``);
    raises :class:`pipebounds.viz.gantt_data.GanttError` when the schedule has no timing."""
    data = gantt_data(schedule)
    inst = schedule.instance
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": PID, "tid": 0,
                           "args": {"name": "pipebounds " + (schedule.source or "schedule")}}]
    for p in range(inst.P):
        events.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": p,
                       "args": {"name": f"GPU {p}"}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": p,
                       "args": {"sort_index": p}})
    scale = float(us_per_unit)
    start, end = data.start * scale, data.end * scale
    for k in range(data.n_ops):
        events.append({
            "name": data.op_name(k), "cat": KINDS[data.kind[k]], "ph": "X", "pid": PID,
            "tid": int(data.gpu[k]), "ts": float(start[k]), "dur": float(end[k] - start[k]),
            "args": {"stage": int(data.stage[k]), "microbatch": int(data.micro[k]),
                     **quantities(start=data.start_exact(k), end=data.end_exact(k)),
                     "memory_after": int(data.mem_after[k])}})
    for p in range(inst.P):
        xs, ys = data.memory_steps(p)
        for t, c in zip(xs.tolist(), ys.tolist()):
            events.append({"name": f"memory GPU {p}", "ph": "C", "pid": PID, "tid": p,
                           "ts": t * scale, "args": {"live activations": int(c)}})
    res = data.result
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"source": schedule.source, "P": inst.P, "m": inst.m, "v": inst.v,
                          "K": inst.K, **quantity("makespan", res.makespan),
                          "us_per_unit": scale, "valid": res.valid,
                          "errors": res.errors[:10]}}
