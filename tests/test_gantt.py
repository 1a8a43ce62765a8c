"""Gantt charts (schedules/gantt.py) and ``pipebounds gantt``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from schedules import Instance, document_from_schedule, simulate
from schedules.generators import generate
from schedules.remat import fit_memory

pytest.importorskip("matplotlib")

from schedules.gantt import GanttError, plot_gantt, save_gantt  # noqa: E402


def bar_patches(ax):
    from matplotlib.patches import Rectangle
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def test_one_bar_per_op_and_labels():
    import matplotlib.pyplot as plt
    sched = fit_memory(generate("zb-h1", Instance(P=3, m=4, b_I=1, b_W=1)), 2)
    fig = plot_gantt(sched)
    try:
        ax, axm = fig.axes
        assert len(bar_patches(ax)) == sched.num_ops
        texts = [t.get_text() for t in ax.texts]
        assert sorted(texts) == sorted(str(op.microbatch) for _, op in sched.ops())
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert [x[0] for x in legend] == ["F", "I", "W", "R"]
        res = simulate(sched)
        assert f"makespan {res.makespan}" in ax.get_title()
        assert f"peak memory {max(res.peak_memory)}" in ax.get_title()
        # colours by kind
        colors = {tuple(round(c, 3) for c in p.get_facecolor()[:3]) for p in bar_patches(ax)}
        assert len(colors) >= 4
        # memory panel: one step line per GPU plus the K line
        assert len(axm.get_lines()) == sched.instance.P + 1
        assert axm.get_ylim()[1] >= 2
    finally:
        plt.close(fig)


def test_bars_at_simulated_times_show_idle():
    import matplotlib.pyplot as plt
    sched = generate("1f1b", Instance(P=3, m=3))
    times = simulate(sched).op_times()
    fig = plot_gantt(sched, memory=False)
    try:
        assert len(fig.axes) == 1
        starts = sorted((p.get_y(), p.get_x()) for p in bar_patches(fig.axes[0]))
        expected = sorted((gpu - 0.4, float(times[op][0])) for gpu, op in sched.ops())
        assert [(round(a, 6), b) for a, b in starts] == [(round(a, 6), b) for a, b in expected]
        # GPU 2 is idle before its first op
        assert min(x for y, x in starts if abs(y - 1.6) < 1e-9) == 2.0
    finally:
        plt.close(fig)


def test_invalid_schedule_refused():
    from schedules import Schedule
    bad = Schedule.from_strings(Instance(P=2, m=1), {0: ["0B0", "0F0"], 1: ["1F0", "1B0"]})
    with pytest.raises(GanttError):
        plot_gantt(bad)


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
    assert main(["gantt", str(src), "-o", str(out)]) == 2
    assert "invalid" in capsys.readouterr().err


def test_cli_does_not_import_matplotlib():
    code = ("import sys; from pipebounds.cli import build_parser; build_parser(); "
            "print('matplotlib' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_memory_panel_in_bytes(tmp_path):
    """A document with a memory model: the panel plots bytes (its curves reach peak_bytes) and
    the budget line."""
    import matplotlib
    matplotlib.use("Agg")
    from schedules import Instance, simulate
    from schedules.gantt import plot_gantt
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
