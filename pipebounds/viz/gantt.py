"""Gantt charts of schedules (matplotlib, imported lazily; the global backend is never touched).

:func:`plot_gantt` draws one row per GPU: each op is a bar from its ASAP start to its end,
coloured by kind (``F``, ``B``, ``I``, ``W``, ``R``, explained in the legend), labelled with its
microbatch when the bar is wide enough; idle time is the white background between bars (with
several stages per GPU, ``v > 1``, its later stages' ops are a lighter shade). The title gives the
makespan and the peak memory. With ``memory=True`` a second panel shows each GPU's live
activations over time, with ``K`` as a dashed line.

The figure is a :class:`matplotlib.figure.Figure` made directly (not through pyplot), so drawing
never switches or depends on the global backend: a notebook displays the returned figure, a
script saves it (:func:`save_gantt`).

Invalid schedules are drawn with their violations marked: the ops that run while their GPU holds
more than ``K`` get a red outline and the memory above ``K`` is shaded red; orders that deadlock
are drawn as far as they run, with a red cross where each stuck GPU waits forever
(:mod:`pipebounds.viz.gantt_data`). Schedules with structural errors raise :class:`GanttError`.

Large schedules: past ``detail_limit`` ops a bar per op is unreadable, so the chart aggregates:
each GPU row shows, in equal time bins, the busy fraction per op kind (stacked bands), and the
title says so (:func:`pipebounds.viz.gantt_data.busy_bands`). Bars are drawn as one collection per
kind, so even the detailed chart of thousands of ops takes well under a second.

>>> from schedules import Instance
>>> from schedules.generators import generate
>>> fig = plot_gantt(generate("1f1b", Instance(P=2, m=3)))
>>> len(fig.axes)
2
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from pipebounds.viz.gantt_data import (GanttData, GanttError, busy_bands, gantt_data, stage_waves,
                                       wave_alpha)
from schedules.ops import KINDS
from schedules.schedule import Schedule

COLORS = {"F": "#4C72B0", "B": "#DD8452", "I": "#C44E52", "W": "#55A868", "R": "#8172B3",
          "RI": "#937860"}
NAMES = {"F": "F forward", "B": "B backward", "I": "I input grad", "W": "W weight grad",
         "R": "R recompute", "RI": "RI input-grad recompute"}
VIOLATION_COLOR = "#E00000"
DETAIL_LIMIT = 20_000
"""Above this many ops, :func:`plot_gantt` aggregates (busy bands) instead of one bar per op."""
AGGREGATE_BINS = 400
MAX_MEMORY_LINES = 8
"""With more GPUs the memory panel shows the envelope (max and mean over GPUs) instead."""

__all__ = ["plot_gantt", "save_gantt", "GanttError", "COLORS", "NAMES", "DETAIL_LIMIT",
           "describe"]


def describe(data: GanttData, title: Optional[str] = None) -> str:
    """The chart title: source, instance, makespan, peak memory, and the violations if any."""
    inst = data.schedule.instance
    res = data.result
    K = "inf" if inst.K is None else inst.K
    label = title or (data.schedule.source or "schedule")
    two = " directions=2" if inst.directions == 2 else ""
    text = (f"{label}: P={inst.P} m={inst.m} v={inst.v}{two} K={K}  makespan {res.makespan}  "
            f"peak memory {max(res.peak_memory)}")
    if inst.P <= 16:
        text += f" (per GPU {res.peak_memory})"
    if not res.valid:
        rules = sorted({v.rule for v in res.violations})
        text += f"\nINVALID ({', '.join(rules)}): {res.errors[0]}"
    return text


def plot_gantt(schedule: Schedule, ax=None, memory: bool = True, title: Optional[str] = None,
               detail_limit: int = DETAIL_LIMIT, data: Optional[GanttData] = None):
    """Draw ``schedule``; returns the matplotlib Figure (see the module docstring).

    ``ax``: draw the chart into this Axes (then no memory panel is added). ``detail_limit``: past
    this many ops, aggregate. ``data``: a precomputed :func:`gantt_data` of ``schedule``.
    Raises :class:`GanttError` when the schedule has no timing (deadlock or structural errors).
    """
    from matplotlib.figure import Figure

    data = data if data is not None else gantt_data(schedule)
    inst = schedule.instance
    P = inst.P
    T = data.makespan
    aggregated = data.n_ops > detail_limit
    if ax is None:
        height = (0.45 * P + 1.6) if P <= 32 else 0.12 * P + 2.5
        width = max(8, min(22, 0.35 * T + 3))
        if memory:
            fig = Figure(figsize=(width, height + max(3.0, min(height, 6.0))))
            ax, axm = fig.subplots(2, 1, sharex=True,
                                   gridspec_kw={"height_ratios": [height, max(3.0, min(height, 6.0))]})
        else:
            fig = Figure(figsize=(width, height))
            ax, axm = fig.subplots(), None
    else:
        fig, axm = ax.figure, None
    if aggregated:
        kinds_used = _draw_bands(ax, data)
    else:
        kinds_used = _draw_bars(ax, data, fig)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax.set_yticks(range(P) if P <= 32 else range(0, P, max(1, P // 16)))
    ax.set_yticklabels([f"GPU {p}" for p in (range(P) if P <= 32 else range(0, P, max(1, P // 16)))])
    ax.set_ylim(P - 0.5, -0.5)
    ax.set_xlim(0, max(T, 1e-9))
    ax.set_facecolor("white")
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)
    handles = [Patch(color=COLORS[k], label=NAMES[k]) for k in KINDS if k in kinds_used]
    if inst.v > 1 and not aggregated:
        handles.append(Patch(facecolor="#999999", alpha=0.55, edgecolor="black", linewidth=0.4,
                             label="lighter: later stage\nof the same GPU"))
    if data.offending.any():
        handles.append(Patch(facecolor="none", edgecolor=VIOLATION_COLOR, linewidth=2,
                             label=f"runs above K={inst.K}"))
    for p, name, t in data.blocked:  # deadlock: where each stuck GPU waits forever
        ax.plot([t], [p], marker="X", color=VIOLATION_COLOR, markersize=10, gid="blocked")
        ax.annotate(f" blocked at {name}", (t, p), color=VIOLATION_COLOR, fontsize=8,
                    va="center", ha="left" if t < 0.8 * max(T, 1e-9) else "right")
    if data.blocked:
        handles.append(Line2D([], [], marker="X", color=VIOLATION_COLOR, ls="none",
                              label="deadlock: blocked here"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8,
              frameon=False)
    text = describe(data, title)
    if aggregated:
        text += (f"\naggregated: {data.n_ops} ops > {detail_limit}; each row shows the GPU's busy "
                 f"fraction per op kind in {AGGREGATE_BINS} bins of width {T / AGGREGATE_BINS:.4g}")
    ax.set_title(text, fontsize=9, pad=8, parse_math=False,  # a '$' in a title is text
                 color=VIOLATION_COLOR if not data.result.valid else "black")
    if axm is not None:
        _draw_memory(axm, data)
    else:
        ax.set_xlabel("time")
    fig.tight_layout()
    return fig


def _draw_bars(ax, data: GanttData, fig) -> list[str]:
    from matplotlib.collections import PolyCollection

    T = data.makespan
    wave = stage_waves(data)
    x0, x1 = data.start, data.end
    centre, height = data.bar_rows       # an F&B op: forward upper half, backward lower half
    y0, y1 = centre - height / 2, centre + height / 2
    verts = np.stack([np.stack([x0, y0], 1), np.stack([x0, y1], 1), np.stack([x1, y1], 1),
                      np.stack([x1, y0], 1)], 1)
    kinds_used = []
    lw = 0.4 if data.n_ops <= 2000 else 0.0
    for ki, k in enumerate(KINDS):
        for w in np.unique(wave):
            sel = (data.kind == ki) & (wave == w)
            if not sel.any():
                continue
            alpha = wave_alpha(int(w))
            ax.add_collection(PolyCollection(verts[sel], facecolors=COLORS[k], alpha=alpha,
                                             edgecolors="black", linewidths=lw, gid=f"ops-{k}"))
            if k not in kinds_used:
                kinds_used.append(k)
    bad = data.offending
    if bad.any():
        ax.add_collection(PolyCollection(verts[bad], facecolors="none", edgecolors=VIOLATION_COLOR,
                                         linewidths=2.0, gid="violations"))
    # points per time unit along the x axis, to size (or drop) the microbatch labels
    pts_per_unit = fig.get_figwidth() * 72 * 0.85 / max(T, 1e-9)
    widths_pts = (x1 - x0) * pts_per_unit
    labels_len = np.floor(np.log10(np.maximum(data.micro, 1))).astype(np.int64) + 1
    sizes = np.minimum(7.0, widths_pts / (0.65 * labels_len + 0.6))
    sizes = np.where(data.overlapped, np.minimum(sizes, 5.0), sizes)
    for k in np.flatnonzero(sizes >= 3.5):
        ax.text((x0[k] + x1[k]) / 2, centre[k], str(data.micro[k]), ha="center", va="center",
                fontsize=float(sizes[k]), color="white")
    return kinds_used


def _draw_bands(ax, data: GanttData) -> list[str]:
    """Aggregated rows: per GPU, stacked bars of the busy fraction per kind in each time bin."""
    edges, frac = busy_bands(data, AGGREGATE_BINS)
    width = edges[1] - edges[0]
    kinds_used = []
    from matplotlib.collections import PolyCollection

    P = data.schedule.instance.P
    base = np.zeros((P, len(edges) - 1))
    left = np.broadcast_to(edges[:-1], base.shape)
    gpu = np.broadcast_to(np.arange(P)[:, None], base.shape)
    for ki, k in enumerate(KINDS):
        h = frac[:, ki, :]
        if not h.any():
            continue
        kinds_used.append(k)
        # a band grows upward from the row's bottom edge (y = p + 0.4) by 0.8 * fraction
        yb = gpu + 0.4 - 0.8 * base
        yt = yb - 0.8 * h
        sel = h > 0
        x0, x1 = left[sel], left[sel] + width
        verts = np.stack([np.stack([x0, yb[sel]], 1), np.stack([x0, yt[sel]], 1),
                          np.stack([x1, yt[sel]], 1), np.stack([x1, yb[sel]], 1)], 1)
        ax.add_collection(PolyCollection(verts, facecolors=COLORS[k], linewidths=0,
                                         gid=f"bands-{k}"))
        base = base + h
    return kinds_used


def _draw_memory(axm, data: GanttData) -> None:
    inst = data.schedule.instance
    P = inst.P
    if inst.memory is not None:  # memory in bytes (MODEL.md, Extensions): the panel shows bytes
        _draw_memory_bytes(axm, data)
        return
    steps = [data.memory_steps(p) for p in range(P)]
    if P <= MAX_MEMORY_LINES:
        for p, (xs, ys) in enumerate(steps):
            axm.step(xs, ys, where="post", label=f"GPU {p}", linewidth=1.2)
    else:  # envelope over GPUs on a common grid of event times
        grid = np.unique(np.concatenate([xs for xs, _ in steps]))
        vals = np.stack([ys[np.searchsorted(xs, grid, side="right") - 1] for xs, ys in steps])
        axm.step(grid, vals.max(0), where="post", label=f"max over {P} GPUs", linewidth=1.2)
        axm.step(grid, vals.mean(0), where="post", label="mean over GPUs", linewidth=1.0)
    peak = max(data.result.peak_memory)
    if inst.K is not None:
        axm.axhline(inst.K, color="black", linestyle="--", linewidth=0.8, label="K")
        if peak > inst.K:
            axm.axhspan(inst.K, peak + 0.5, color=VIOLATION_COLOR, alpha=0.12,
                        label=f"above K={inst.K}")
    axm.set_ylabel("live activations")
    axm.set_xlabel("time")
    axm.set_ylim(bottom=0)
    from matplotlib.ticker import MaxNLocator
    axm.yaxis.set_major_locator(MaxNLocator(integer=True))
    axm.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), frameon=False)
    axm.grid(color="#dddddd", linewidth=0.5)


def _draw_memory_bytes(axm, data: GanttData) -> None:
    inst, res = data.schedule.instance, data.result
    T = float(res.makespan) if res.makespan is not None else 0.0
    for p in range(inst.P):
        prof = res.memory_profile_bytes(p)
        xs = [float(t) for t, _ in prof] + [T]
        ys = [float(c) for _, c in prof] + [float(prof[-1][1])]
        axm.step(xs, ys, where="post", label=f"GPU {p}", linewidth=1.2)
    if inst.memory.budget is not None:
        axm.axhline(float(inst.memory.budget), color="black", linestyle="--", linewidth=0.8,
                    label="budget")
    axm.set_ylabel("bytes")
    axm.set_xlabel("time")
    axm.set_ylim(bottom=0)
    axm.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), frameon=False)
    axm.grid(color="#dddddd", linewidth=0.5)


def save_gantt(schedule: Schedule, path: str, memory: bool = True, title: Optional[str] = None,
               detail_limit: int = DETAIL_LIMIT, data: Optional[GanttData] = None) -> None:
    """Draw ``schedule`` and save it to ``path`` (format from the extension: .png, .svg, .pdf)."""
    fig = plot_gantt(schedule, memory=memory, title=title, detail_limit=detail_limit, data=data)
    fig.savefig(path, dpi=130)
