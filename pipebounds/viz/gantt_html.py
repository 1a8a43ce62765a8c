"""Interactive Gantt charts: one self-contained HTML page per schedule (plotly, imported lazily;
extra ``interactive``).

The page shows the same facts as :func:`pipebounds.viz.gantt.plot_gantt`, from the same
:func:`pipebounds.viz.gantt_data.gantt_data`:

* one row per GPU, one bar per op coloured by kind; zoom and pan (plotly); hovering an op shows
  its action string, stage, microbatch, exact start and end, and the live activations on its GPU
  right after it;
* the memory profile under it (one step line per GPU; max and mean over GPUs past 8 GPUs), ``K``
  dashed;
* clicking an op highlights it and the ops it depends on (MODEL.md *Precedence*) and those that
  depend on it, with arrows (a small inline script; the page also selects ``#select=N`` from its
  address, op ``N`` in GPU-then-position order);
* violations marked: ops that run while their GPU holds more than ``K`` have a red outline, the
  memory above ``K`` is shaded red, orders that deadlock are drawn as far as they run with a red
  cross where each stuck GPU waits, and the title says INVALID with the first violation.

Past ``detail_limit`` ops the rows show, per GPU, its busy fraction in equal time bins (a heat
map; hovering a cell gives the fraction per op kind) and the title says so.

The page writes a status line into ``<pre id="pipebounds-status">`` once drawn (JSON: ``ops``,
the number of distinct ops the plotted data covers; ``errors``, script errors caught on the page;
``selected``/``highlighted`` for a selection), which is what the browser test reads.
"""

from __future__ import annotations

import html
import json
from typing import Optional

import numpy as np

from pipebounds.viz.gantt import AGGREGATE_BINS, COLORS, MAX_MEMORY_LINES, NAMES, VIOLATION_COLOR, describe
from pipebounds.viz.gantt_data import GanttData, busy_bands, gantt_data, stage_waves, wave_alpha
from schedules.ops import KINDS
from schedules.schedule import Schedule

HTML_DETAIL_LIMIT = 10_000
"""Above this many ops the page aggregates (a browser draws ~10,000 bars smoothly, not 100,000)."""

_ERROR_CATCHER = """<script>
window.__pbErrors = [];
window.addEventListener('error', function (e) { window.__pbErrors.push(String(e.message)); });
window.addEventListener('unhandledrejection', function (e) { window.__pbErrors.push(String(e.reason)); });
(function () { var orig = console.error; console.error = function () {
  window.__pbErrors.push(Array.prototype.join.call(arguments, ' ')); orig.apply(console, arguments); }; })();
</script>"""

_SCRIPT = """
var gd = document.getElementById('{plot_id}');
var PB = __PB_DATA__;
var baseShapes = (gd.layout.shapes || []).slice();
function status(extra) {
  var seen = {};
  gd.data.forEach(function (t) {
    if (t.meta !== 'ops' || !t.customdata) return;
    for (var i = 0; i < t.customdata.length; i++) seen[t.customdata[i][0]] = true; });
  var s = {ops: PB.aggregated ? PB.n_ops : Object.keys(seen).length, aggregated: PB.aggregated,
           errors: window.__pbErrors || []};
  for (var k in (extra || {})) s[k] = extra[k];
  document.getElementById('pipebounds-status').textContent = JSON.stringify(s);
}
function select(k) {
  if (PB.aggregated || k < 0 || k >= PB.gpu.length) return;
  var shapes = baseShapes.slice();
  function box(i, color) {
    shapes.push({type: 'rect', xref: 'x', yref: 'y', x0: PB.start[i], x1: PB.end[i],
                 y0: PB.gpu[i] - 0.45, y1: PB.gpu[i] + 0.45, line: {color: color, width: 3}});
  }
  function arrow(a, b, color) {
    shapes.push({type: 'line', xref: 'x', yref: 'y', x0: PB.end[a], y0: PB.gpu[a],
                 x1: PB.start[b], y1: PB.gpu[b], line: {color: color, width: 2}});
  }
  box(k, '#000000');
  var preds = PB.preds[k], succs = PB.succs[k];
  preds.forEach(function (i) { box(i, '#1f77b4'); arrow(i, k, '#1f77b4'); });
  succs.forEach(function (i) { box(i, '#2ca02c'); arrow(k, i, '#2ca02c'); });
  Plotly.relayout(gd, {shapes: shapes});
  document.getElementById('pipebounds-selection').textContent = PB.names[k] +
    ': depends on ' + (preds.map(function (i) { return PB.names[i]; }).join(', ') || 'nothing') +
    '; needed by ' + (succs.map(function (i) { return PB.names[i]; }).join(', ') || 'nothing');
  status({selected: PB.names[k], highlighted: preds.length + succs.length});
}
gd.on('plotly_click', function (ev) {
  var pt = ev.points && ev.points[0];
  if (pt && pt.customdata && pt.data.meta === 'ops') select(pt.customdata[0]);
});
function init() {
  var m = /select=(\\d+)/.exec(window.location.hash);
  if (m) select(parseInt(m[1], 10)); else status({});
}
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
"""


def gantt_figure(schedule: Schedule, title: Optional[str] = None,
                 detail_limit: int = HTML_DETAIL_LIMIT, data: Optional[GanttData] = None):
    """The plotly Figure of the page (see the module docstring) and the data its script needs."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    data = data if data is not None else gantt_data(schedule)
    inst = schedule.instance
    P = inst.P
    aggregated = data.n_ops > detail_limit
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.62, 0.38],
                        vertical_spacing=0.07)
    gpu_labels = [f"GPU {p}" for p in range(P)]
    script_data: dict = {"aggregated": aggregated, "n_ops": data.n_ops}
    if not aggregated:
        starts = [str(data.start_exact(k)) for k in range(data.n_ops)]
        ends = [str(data.end_exact(k)) for k in range(data.n_ops)]
        names = [data.op_name(k) for k in range(data.n_ops)]
        alpha = [wave_alpha(int(w)) for w in stage_waves(data).tolist()]  # as the picture
        centre, height = data.bar_rows   # an F&B op: forward upper half, backward lower half
        for ki, kind in enumerate(KINDS):
            sel = np.flatnonzero(data.kind == ki)
            if not len(sel):
                continue
            bad = data.offending[sel]
            fig.add_trace(go.Bar(
                orientation="h", base=data.start[sel].tolist(),
                x=(data.end[sel] - data.start[sel]).tolist(), y=centre[sel].tolist(),
                width=height[sel].tolist(), name=NAMES[kind], meta="ops",
                marker={"color": COLORS[kind], "opacity": [alpha[k] for k in sel.tolist()],
                        "line": {"color": [VIOLATION_COLOR if b else "#333333" for b in bad],
                                 "width": [3 if b else 0.5 for b in bad]}},
                text=[str(j) for j in data.micro[sel].tolist()], textposition="inside",
                insidetextanchor="middle",
                customdata=[[int(k), names[k], int(data.stage[k]), int(data.micro[k]), starts[k],
                             ends[k], int(data.mem_after[k]), bool(data.offending[k]),
                             int(data.gpu[k])]
                            for k in sel.tolist()],
                hovertemplate=("<b>%{customdata[1]}</b> on GPU %{customdata[8]}<br>stage "
                               "%{customdata[2]}, "
                               "microbatch %{customdata[3]}<br>start %{customdata[4]}, end "
                               "%{customdata[5]}<br>live activations after it: %{customdata[6]}"
                               "<br>above K: %{customdata[7]}<extra></extra>")),
                row=1, col=1)
        preds = data.predecessors()
        succs: list[list[int]] = [[] for _ in range(data.n_ops)]
        for k, ps in enumerate(preds):
            for i in ps:
                succs[i].append(k)
        script_data.update(gpu=data.gpu.tolist(), start=data.start.tolist(),
                           end=data.end.tolist(), names=names, preds=preds, succs=succs)
    else:
        edges, frac = busy_bands(data, AGGREGATE_BINS)
        total = frac.sum(1)
        mids = ((edges[:-1] + edges[1:]) / 2).tolist()
        used = [k for k in range(len(KINDS)) if frac[:, k].any()]
        custom = np.stack([frac[:, k] for k in used], -1).round(3).tolist()
        fig.add_trace(go.Heatmap(
            z=total.round(4).tolist(), x=mids, y=list(range(P)), zmin=0, zmax=1,
            colorscale="Greys", colorbar={"title": "busy", "len": 0.55, "y": 0.72},
            customdata=custom, meta="bands", name="busy fraction",
            hovertemplate=("GPU %{y}, t = %{x:.4g}<br>busy %{z:.3f}<br>"
                           + ", ".join(f"{KINDS[k]} %{{customdata[{i}]}}" for i, k in enumerate(used))
                           + "<extra></extra>")), row=1, col=1)
    # memory panel
    steps = [data.memory_steps(p) for p in range(P)]
    if P <= MAX_MEMORY_LINES:
        for p, (xs, ys) in enumerate(steps):
            fig.add_trace(go.Scatter(x=xs.tolist(), y=ys.tolist(), mode="lines", line_shape="hv",
                                     name=f"memory GPU {p}", legendgroup="memory"), row=2, col=1)
    else:
        grid = np.unique(np.concatenate([xs for xs, _ in steps]))
        vals = np.stack([ys[np.searchsorted(xs, grid, side="right") - 1] for xs, ys in steps])
        fig.add_trace(go.Scatter(x=grid.tolist(), y=vals.max(0).tolist(), mode="lines",
                                 line_shape="hv", name=f"memory: max over {P} GPUs"), row=2, col=1)
        fig.add_trace(go.Scatter(x=grid.tolist(), y=vals.mean(0).round(3).tolist(), mode="lines",
                                 line_shape="hv", name="memory: mean over GPUs"), row=2, col=1)
    if data.blocked:
        fig.add_trace(go.Scatter(
            x=[t for _, _, t in data.blocked], y=[p for p, _, _ in data.blocked],
            mode="markers+text", marker={"symbol": "x", "size": 14, "color": VIOLATION_COLOR},
            text=[f"blocked at {name}" for _, name, _ in data.blocked], textposition="middle right",
            name="deadlock: blocked here", hovertemplate="GPU %{y} waits forever at "
            "%{x}: %{text}<extra></extra>"), row=1, col=1)
    peak = max(data.result.peak_memory)
    if inst.K is not None:
        fig.add_hline(y=inst.K, line_dash="dash", line_color="black", row=2, col=1,
                      annotation_text=f"K={inst.K}", annotation_position="top left")
        if peak > inst.K:
            fig.add_hrect(y0=inst.K, y1=peak + 0.5, fillcolor=VIOLATION_COLOR, opacity=0.12,
                          line_width=0, row=2, col=1)
    head = describe(data, title).replace("\n", "<br>")
    if aggregated:
        head += (f"<br>aggregated: {data.n_ops} ops > {detail_limit}; each cell is the GPU's busy "
                 f"fraction in one of {AGGREGATE_BINS} bins of width {data.makespan / AGGREGATE_BINS:.4g}")
    fig.update_layout(
        title={"text": head, "font": {"size": 13,
                                      "color": "black" if data.result.valid else VIOLATION_COLOR}},
        barmode="overlay", uniformtext={"mode": "hide", "minsize": 8},
        height=max(520, 40 * min(P, 32) + 380), template="plotly_white",
        legend={"tracegroupgap": 4}, hovermode="closest", margin={"t": 110})
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=list(range(P)),
                     ticktext=gpu_labels, row=1, col=1)
    fig.update_yaxes(title_text="live activations", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="time", range=[0, data.makespan], row=2, col=1)
    return fig, script_data


def gantt_html(schedule: Schedule, title: Optional[str] = None,
               detail_limit: int = HTML_DETAIL_LIMIT, data: Optional[GanttData] = None) -> str:
    """The self-contained HTML page (plotly.js inlined: it opens offline)."""
    fig, script_data = gantt_figure(schedule, title, detail_limit, data)
    script = _SCRIPT.replace("__PB_DATA__", json.dumps(script_data, separators=(",", ":")))
    body = fig.to_html(full_html=False, include_plotlyjs=True, div_id="pipebounds-gantt",
                       post_script=script, config={"scrollZoom": True, "displaylogo": False})
    label = html.escape(title or schedule.source or "schedule")
    # the status and selection elements come before the plot: its script runs while the page
    # is still being parsed
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{label} - pipebounds "
            f"gantt</title>{_ERROR_CATCHER}</head><body>\n"
            "<pre id=\"pipebounds-status\" style=\"display:none\"></pre>\n"
            f"{body}\n"
            "<p style=\"font-family:sans-serif;font-size:13px\">Click an op: its dependencies "
            "(blue) and the ops that need it (green). Drag to zoom, double-click to reset.</p>\n"
            "<p id=\"pipebounds-selection\" style=\"font-family:sans-serif;font-size:13px\">"
            "</p>\n</body></html>\n")


def save_gantt_html(schedule: Schedule, path: str, title: Optional[str] = None,
                    detail_limit: int = HTML_DETAIL_LIMIT, data: Optional[GanttData] = None) -> None:
    """Write :func:`gantt_html` to ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(gantt_html(schedule, title, detail_limit, data))
