"""Gantt charts (pipebounds/viz/gantt.py) and ``pipebounds gantt``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from schedules import Instance, document_from_schedule, simulate
from schedules.generators import generate
from schedules.remat import fit_memory

pytest.importorskip("matplotlib")

from pipebounds.viz.gantt import GanttError, plot_gantt, save_gantt  # noqa: E402


def bar_boxes(ax, prefix="ops-"):
    """(x0, y0, x1, y1, facecolor) of every bar drawn (one PolyCollection per kind)."""
    out = []
    for coll in ax.collections:
        if not (coll.get_gid() or "").startswith(prefix):
            continue
        fc = coll.get_facecolor()
        color = tuple(round(c, 3) for c in fc[0][:3]) if len(fc) else None
        for path in coll.get_paths():
            xs, ys = path.vertices[:4, 0], path.vertices[:4, 1]
            out.append((xs.min(), ys.min(), xs.max(), ys.max(), color))
    return out


def test_one_bar_per_op_and_labels():
    sched = fit_memory(generate("zb-h1", Instance(P=3, m=4, b_I=1, b_W=1)), 2)
    fig = plot_gantt(sched)
    ax, axm = fig.axes
    assert len(bar_boxes(ax)) == sched.num_ops
    texts = [t.get_text() for t in ax.texts]
    assert sorted(texts) == sorted(str(op.microbatch) for _, op in sched.ops())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [x[0] for x in legend] == ["F", "I", "W", "R"]
    res = simulate(sched)
    assert f"makespan {res.makespan}" in ax.get_title()
    assert f"peak memory {max(res.peak_memory)}" in ax.get_title()
    # colours by kind
    colors = {box[4] for box in bar_boxes(ax)}
    assert len(colors) >= 4
    # memory panel: one step line per GPU plus the K line
    assert len(axm.get_lines()) == sched.instance.P + 1
    assert axm.get_ylim()[1] >= 2
    assert not bar_boxes(ax, "violations")  # valid: nothing marked


def test_bars_at_simulated_times_show_idle():
    sched = generate("1f1b", Instance(P=3, m=3))
    times = simulate(sched).op_times()
    fig = plot_gantt(sched, memory=False)
    assert len(fig.axes) == 1
    starts = sorted((box[1], box[0], box[2]) for box in bar_boxes(fig.axes[0]))
    expected = sorted((gpu - 0.4, float(times[op][0]), float(times[op][1]))
                      for gpu, op in sched.ops())
    assert [(round(a, 6), b, c) for a, b, c in starts] == [(round(a, 6), b, c)
                                                           for a, b, c in expected]
    # GPU 2 is idle before its first op
    assert min(x for y, x, _ in starts if abs(y - 1.6) < 1e-9) == 2.0


def test_structurally_invalid_schedule_refused():
    from schedules import Schedule
    bad = Schedule.from_strings(Instance(P=2, m=1), {0: ["0F0"], 1: ["1F0", "1B0"]})
    with pytest.raises(GanttError, match="missing"):
        plot_gantt(bad)


def test_deadlock_drawn_as_far_as_it_runs(tmp_path, capsys):
    from pipebounds.cli import main
    from schedules import Schedule
    from pipebounds.viz.gantt_data import gantt_data
    # GPU 0 lists 0B1 before 0F1: 0B1 needs 1B1, which needs 1F1, which needs 0F1
    bad = Schedule.from_strings(Instance(P=2, m=2), {0: ["0F0", "0B0", "0B1", "0F1"],
                                                     1: ["1F0", "1B0", "1F1", "1B1"]})
    data = gantt_data(bad)
    assert [str(op) for op in data.schedule.orders[0]] == ["0F0", "0B0"]
    assert [str(op) for op in data.schedule.orders[1]] == ["1F0", "1B0"]
    # 0F0 [0,1], 1F0 [1,2], 1B0 [2,4], 0B0 [4,6]: GPU 0 waits from 6, GPU 1 from 4
    assert sorted(data.blocked) == [(0, "0B1", 6.0), (1, "1F1", 4.0)]
    assert data.makespan == 6
    assert "INVALID (deadlock)" in plot_gantt(bad).axes[0].get_title()
    src = tmp_path / "d.json"
    src.write_text(json.dumps(document_from_schedule(bad)))
    assert main(["gantt", str(src), "-o", str(tmp_path / "d.png")]) == 1
    assert "deadlock" in capsys.readouterr().err


@pytest.mark.parametrize("ext", ["png", "svg"])
def test_save(tmp_path, ext):
    path = tmp_path / f"g.{ext}"
    save_gantt(generate("interleaved", Instance(P=2, m=4, v=2)), str(path))
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG") if ext == "png" else b"<svg" in data[:2000]


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "pipebounds", *args], capture_output=True,
                          text=True, timeout=120, input=stdin)


def test_cli_gantt(tmp_path, capsys, monkeypatch):
    import io

    from pipebounds.cli import main
    doc = document_from_schedule(generate("zbv", Instance(P=2, m=4, v=2, placement="vshape",
                                                          b_I=1, b_W=1)), source="zbv")
    src = tmp_path / "s.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "s.png"
    proc = run_cli("gantt", str(src), "-o", str(out))  # the real console path, once
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(b"\x89PNG")
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(doc)))
    assert main(["gantt", "-", "-o", str(tmp_path / "t.svg"), "--no-memory"]) == 0
    assert (tmp_path / "t.svg").exists()
    for args in (["gantt", str(src), "-o", str(tmp_path / "x.txt")],
                 ["gantt", str(tmp_path / "missing.json"), "-o", str(out)]):
        assert main(args) == 2
        assert capsys.readouterr().err.startswith("error:")
    bad = dict(doc, orders={"0": ["0B0"], "1": []})
    src.write_text(json.dumps(bad))
    assert main(["gantt", str(src), "-o", str(out)]) == 2  # no timing: nothing to draw
    assert "invalid" in capsys.readouterr().err
    # the output path is checked before any work
    src.write_text(json.dumps(doc))
    assert main(["gantt", str(src), "-o", str(tmp_path / "nodir" / "x.png")]) == 2
    assert "does not exist" in capsys.readouterr().err


def over_memory_doc():
    doc = document_from_schedule(generate("1f1b", Instance(P=4, m=8)), source="1f1b")
    doc["K"] = 2  # 1F1B holds P - p activations on GPU p: GPUs 0 and 1 break K = 2
    return doc


def test_invalid_schedule_drawn_with_violations_marked():
    from schedules import schedule_from_document
    sched = schedule_from_document(over_memory_doc())
    res = simulate(sched)
    assert not res.valid and {v.rule for v in res.violations} == {"memory"}
    fig = plot_gantt(sched)
    ax, axm = fig.axes
    marked = bar_boxes(ax, "violations")
    # exactly the ops that run while their GPU holds more than K = 2
    live = [(p, op) for p in range(4) for op, n in zip(sched.orders[p], res._live[p]) if n > 2]
    assert len(marked) == len(live) > 0
    assert {round(b[1] + 0.4) for b in marked} == {0, 1}
    assert "INVALID (memory)" in ax.get_title()
    assert any(abs(p.get_y() - 2) < 1e-9 for p in axm.patches)  # the shaded band above K


def test_cli_gantt_invalid_exits_1_and_writes(tmp_path, capsys):
    from pipebounds.cli import main
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(over_memory_doc()))
    out = tmp_path / "bad.png"
    assert main(["gantt", str(src), "-o", str(out)]) == 1
    assert out.read_bytes().startswith(b"\x89PNG")
    assert "violations marked" in capsys.readouterr().err


def test_library_never_switches_the_backend():
    code = ("import matplotlib; matplotlib.use('svg'); import tempfile, os\n"
            "from schedules import Instance\nfrom schedules.generators import generate\n"
            "from pipebounds.viz.gantt import plot_gantt, save_gantt\n"
            "s = generate('1f1b', Instance(P=2, m=2)); plot_gantt(s)\n"
            "save_gantt(s, os.path.join(tempfile.mkdtemp(), 'g.png'))\n"
            "print(matplotlib.get_backend())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "svg", proc.stderr


def test_aggregated_bands_sum_to_busy_time():
    from pipebounds.viz.gantt_data import busy_bands, gantt_data
    sched = fit_memory(generate("zb-h1", Instance(P=3, m=6, b_I=1, b_W=1)), 2)
    data = gantt_data(sched)
    res = simulate(sched)
    edges, frac = busy_bands(data, 7)  # bins that cut through ops
    width = edges[1] - edges[0]
    for p in range(3):
        assert abs(frac[p].sum() * width - float(res.busy[p])) < 1e-9
        for ki, k in enumerate("FBIWR"):
            kind_busy = sum(float(e - s) for op, (s, e) in res.op_times().items()
                            if op.kind == k and sched.instance.gpu(op.stage) == p)
            assert abs(frac[p, ki].sum() * width - kind_busy) < 1e-9
    assert (frac.sum(1) <= 1 + 1e-9).all()
    fig = plot_gantt(sched, detail_limit=10)
    ax = fig.axes[0]
    assert "aggregated" in ax.get_title()
    assert not bar_boxes(ax) and bar_boxes(ax, "bands-")


def test_memory_steps_match_the_profile():
    from fractions import Fraction

    from pipebounds.viz.gantt_data import gantt_data
    sched = fit_memory(generate("1f1b", Instance(P=3, m=5)), 2)
    data = gantt_data(sched)
    res = simulate(sched)
    for p in range(3):
        xs, ys = data.memory_steps(p)
        prof = dict(res.memory_profile(p))  # one count per time, the last one
        steps = [(Fraction(x).limit_denominator(1000), int(y)) for x, y in zip(xs, ys)]
        assert steps[-1] == (res.makespan, steps[-2][1])  # the line runs on to the makespan
        assert dict(steps[:-1]) == prof and len(steps) - 1 == len(prof)
        # memory after each op of the GPU: the profile's value at the op's end
        lo = data.offsets[p]
        for k, op in enumerate(sched.orders[p]):
            end = data.end[lo + k]
            assert data.mem_after[lo + k] == ys[np.searchsorted(xs, end, side="right") - 1] \
                or k + 1 < len(sched.orders[p]) and data.start[lo + k + 1] == end


def test_cli_does_not_import_matplotlib():
    code = ("import sys; from pipebounds.cli import build_parser; build_parser(); "
            "print('matplotlib' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_memory_panel_in_bytes(tmp_path):
    """A document with a memory model: the panel plots bytes (its curves reach peak_bytes) and
    the budget line."""
    from schedules import Instance, simulate
    from pipebounds.viz.gantt import plot_gantt
    from schedules.generators import generate
    from schedules.memory import MemoryModel

    inst = Instance(P=2, m=3, f=[1, 2], b=[2, 3],
                    memory=MemoryModel(activation=[100, 300], static=[50, 0], budget=700))
    sched = generate("1f1b", inst)
    fig = plot_gantt(sched)
    axm = fig.axes[1]
    assert axm.get_ylabel() == "bytes"
    tops = [max(line.get_ydata()) for line in axm.get_lines()]
    assert sorted(tops) == sorted([float(x) for x in simulate(sched).peak_bytes] + [700.0])


def test_comm_deadlock_drawn_by_its_op_orders_and_exit_1(tmp_path, capsys):
    from pipebounds.cli import main
    from pipebounds.viz.gantt_data import gantt_data
    from schedules.interop import from_pipeline_order
    hang = [["0F0", "0RECV_B0", "0SEND_F0", "0B0"], ["1RECV_F0", "1F0", "1B0", "1SEND_B0"]]
    sched = from_pipeline_order(hang, Instance(P=2, m=1))
    data = gantt_data(sched)
    assert data.n_ops == 4 and data.makespan == 6
    assert [v.rule for v in data.result.violations] == ["comm_deadlock"]
    src = tmp_path / "hang.json"
    src.write_text(json.dumps(document_from_schedule(sched)))
    assert main(["gantt", str(src), "-o", str(tmp_path / "h.png")]) == 1
    assert "comm_deadlock" in capsys.readouterr().err
