"""Gantt charts of schedules (matplotlib, Agg backend, imported lazily).

:func:`plot_gantt` draws one row per GPU: each op is a bar from its ASAP start to its end,
coloured by kind (``F``, ``B``, ``I``, ``W``, ``R``, explained in the legend), labelled with its
microbatch; idle time is the white background between bars (with several stages per GPU,
``v > 1``, its later stages' ops are a lighter shade). The title gives the makespan and the
peak memory. With ``memory=True`` a second panel shows each GPU's live activations over time
(:meth:`schedules.simulate.SimulationResult.memory_profile`), with ``K`` as a dashed line.

>>> from schedules import Instance
>>> from schedules.generators import generate
>>> fig = plot_gantt(generate("1f1b", Instance(P=2, m=3)))
>>> len(fig.axes)
2
"""

from __future__ import annotations

from typing import Optional

from .schedule import Schedule

COLORS = {"F": "#4C72B0", "B": "#DD8452", "I": "#C44E52", "W": "#55A868", "R": "#8172B3"}
NAMES = {"F": "F forward", "B": "B backward", "I": "I input grad", "W": "W weight grad",
         "R": "R recompute"}


class GanttError(ValueError):
    """The schedule cannot be drawn (it is invalid: no timing exists)."""


def plot_gantt(schedule: Schedule, ax=None, memory: bool = True, title: Optional[str] = None):
    """Draw ``schedule``; returns the matplotlib Figure (see the module docstring).

    ``ax``: draw the chart into this Axes (then no memory panel is added). Raises
    :class:`GanttError` when the schedule has no timing (deadlock or structural errors).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from .simulate import simulate

    res = simulate(schedule)
    if res.start is None:
        raise GanttError("cannot draw an invalid schedule: " + "; ".join(res.errors[:3]))
    inst = schedule.instance
    P = inst.P
    T = float(res.makespan)
    if ax is None:
        height = 0.45 * P + 1.6
        if memory:
            fig, (ax, axm) = plt.subplots(2, 1, figsize=(max(8, min(22, 0.35 * T + 3)), height * 2),
                                          gridspec_kw={"height_ratios": [1, 1]}, sharex=True)
        else:
            fig, ax = plt.subplots(figsize=(max(8, min(22, 0.35 * T + 3)), height))
            axm = None
    else:
        fig, axm = ax.figure, None
    u = inst.unit
    kinds_used = []
    # points per time unit along the x axis, to size (or drop) the microbatch labels
    pts_per_unit = fig.get_figwidth() * 72 * 0.85 / max(T, 1e-9)
    for p in range(P):
        local = inst.stages_of(p)
        for op, s, e in zip(schedule.orders[p], res.start[p], res.end[p]):
            x0, w = s / u, (e - s) / u
            # later stages of the GPU in a lighter shade so that they can be told apart
            wave = local.index(op.stage) if inst.v > 1 else 0
            alpha = 1.0 if wave == 0 else max(0.45, 1.0 - 0.3 * wave)
            ax.barh(p, w, left=x0, height=0.8, color=COLORS[op.kind], alpha=alpha,
                    edgecolor="black", linewidth=0.4)
            if op.kind not in kinds_used:
                kinds_used.append(op.kind)
            label = str(op.microbatch)
            width_pts = w * pts_per_unit
            size = min(7.0, width_pts / (0.65 * len(label) + 0.6))
            if size >= 3.5:
                ax.text(x0 + w / 2, p, label, ha="center", va="center", fontsize=size,
                        color="white")
    ax.set_yticks(range(P))
    ax.set_yticklabels([f"GPU {p}" for p in range(P)])
    ax.set_ylim(P - 0.5, -0.5)
    ax.set_xlim(0, T)
    ax.set_facecolor("white")
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)
    order = [k for k in "FBIWR" if k in kinds_used]
    handles = [Patch(color=COLORS[k], label=NAMES[k]) for k in order]
    if inst.v > 1:
        handles.append(Patch(facecolor="#999999", alpha=0.55, edgecolor="black", linewidth=0.4,
                             label="lighter: later stage\nof the same GPU"))
    ax.legend(handles=handles,
              loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8, frameon=False)
    K = "inf" if inst.K is None else inst.K
    label = " ".join(str(title or schedule.source or "schedule").split())[:200]
    ax.set_title(f"{label}: P={P} m={inst.m} v={inst.v} K={K}  makespan {res.makespan}  "
                 f"peak memory {max(res.peak_memory)} (per GPU {res.peak_memory})", fontsize=9,
                 pad=8, parse_math=False)  # a '$' in a title is text, not mathtext
    if axm is not None:
        in_bytes = inst.memory is not None   # memory in bytes: the panel shows bytes
        for p in range(P):
            prof = res.memory_profile_bytes(p) if in_bytes else res.memory_profile(p)
            xs = [float(t) for t, _ in prof] + [T]
            ys = [float(c) for _, c in prof] + [float(prof[-1][1])]
            axm.step(xs, ys, where="post", label=f"GPU {p}", linewidth=1.2)
        if in_bytes and inst.memory.budget is not None:
            axm.axhline(float(inst.memory.budget), color="black", linestyle="--", linewidth=0.8,
                        label="budget")
        elif not in_bytes and inst.K is not None:
            axm.axhline(inst.K, color="black", linestyle="--", linewidth=0.8, label="K")
        axm.set_ylabel("bytes" if in_bytes else "live activations")
        axm.set_xlabel("time")
        axm.set_ylim(bottom=0)
        from matplotlib.ticker import MaxNLocator
        if not in_bytes:
            axm.yaxis.set_major_locator(MaxNLocator(integer=True))
        axm.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), frameon=False)
        axm.grid(color="#dddddd", linewidth=0.5)
    else:
        ax.set_xlabel("time")
    fig.tight_layout()
    return fig


def save_gantt(schedule: Schedule, path: str, memory: bool = True, title: Optional[str] = None) -> None:
    """Draw ``schedule`` and save it to ``path`` (format from the extension: .png, .svg, .pdf)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig = plot_gantt(schedule, memory=memory, title=title)
    try:
        fig.savefig(path, dpi=130)
    finally:
        plt.close(fig)
