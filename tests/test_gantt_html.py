"""The interactive Gantt page (pipebounds/viz/gantt_html.py, ``pipebounds gantt -o X.html``), checked
in the figure data and in a real headless Chromium (Debian's ``chromium``; the browser tests skip
only when it is not installed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from schedules import Instance, document_from_schedule, schedule_from_document, simulate
from schedules.generators import generate
from schedules.remat import fit_memory

pytest.importorskip("plotly")

from pipebounds.viz.gantt_data import gantt_data  # noqa: E402
from pipebounds.viz.gantt_html import gantt_figure, gantt_html  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


def sample():
    return fit_memory(generate("zbv", Instance(P=2, m=4, v=2, placement="vshape",
                                               b_I=1, b_W=1)), 2)


def over_memory():
    doc = document_from_schedule(generate("1f1b", Instance(P=4, m=8)), source="1f1b")
    doc["K"] = 2
    return schedule_from_document(doc)


def page_status(path: str, fragment: str = "") -> dict:
    """Load the page in headless Chromium and return its status line (JSON)."""
    profile = tempfile.mkdtemp(prefix="pb-chromium-")
    try:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--virtual-time-budget=10000",
             "--dump-dom", "file://" + os.path.abspath(path) + fragment],
            capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    match = re.search(r'<pre id="pipebounds-status"[^>]*>([^<]*)</pre>', proc.stdout)
    assert match, f"no status element in the page (stderr: {proc.stderr[-500:]})"
    assert match.group(1), "the page's script did not run to its end"
    return json.loads(match.group(1).replace("&quot;", '"'))


def test_figure_data_covers_every_op_with_hover_facts():
    sched = sample()
    fig, script = gantt_figure(sched)
    data = gantt_data(sched)
    rows = [row for t in fig.data if t.meta == "ops" for row in t.customdata]
    assert sorted(r[0] for r in rows) == list(range(sched.num_ops))
    times = simulate(sched).op_times()
    ops = [op for _, op in sched.ops()]
    for idx, name, stage, mb, start, end, mem, over, gpu in rows:
        op = ops[idx]
        assert gpu == data.gpu[idx]   # the hover names the GPU (an F&B half sits off its row)
        assert name == str(op) and (stage, mb) == (op.stage, op.microbatch)
        assert (start, end) == tuple(str(t) for t in times[op])
        assert mem == data.mem_after[idx] and over is False
    # dependencies: 2F1 depends on 1F1 (stage chain), and 0I1 on 1I1 (gradient chain)
    names = script["names"]
    assert names[script["preds"][names.index("2F1")][0]] == "1F1"
    assert "1I1" in [names[i] for i in script["preds"][names.index("0I1")]]
    # memory panel: one line per GPU
    assert sum(1 for t in fig.data if (t.name or "").startswith("memory GPU")) == 2


def test_violations_marked_in_the_figure():
    sched = over_memory()
    fig, _ = gantt_figure(sched)
    data = gantt_data(sched)
    red = sum(c == "#E00000" for t in fig.data if t.meta == "ops" for c in t.marker.line.color)
    assert red == int(data.offending.sum()) > 0
    assert "INVALID" in fig.layout.title.text
    assert any(s.y0 == 2 for s in fig.layout.shapes)  # memory above K shaded


def test_aggregated_past_the_limit():
    sched = generate("1f1b", Instance(P=4, m=16))
    fig, script = gantt_figure(sched, detail_limit=50)
    assert script["aggregated"] and not [t for t in fig.data if t.meta == "ops"]
    assert "aggregated: 128 ops > 50" in fig.layout.title.text


@needs_browser
def test_page_loads_in_chromium_with_every_op_and_no_error(tmp_path):
    sched = sample()
    path = tmp_path / "g.html"
    path.write_text(gantt_html(sched))
    # selecting an op (the click handler's code path) highlights its dependencies
    _, script = gantt_figure(sched)
    k = script["names"].index("1I2")
    want = len(script["preds"][k]) + len(script["succs"][k])
    status = page_status(str(path), f"#select={k}")
    assert status == {"ops": sched.num_ops, "aggregated": False, "errors": [],
                      "selected": "1I2", "highlighted": want}
    # MODEL.md precedence: the recompute and the next stage's input gradient before 1I2; the
    # previous stage's input gradient and the weight gradient after it
    assert {script["names"][i] for i in script["preds"][k]} == {"1R2", "2I2"}
    assert {script["names"][i] for i in script["succs"][k]} == {"0I2", "1W2"}


@needs_browser
def test_cli_html_invalid_and_aggregated_pages_load(tmp_path):
    from pipebounds.cli import main
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(document_from_schedule(over_memory())))
    out = tmp_path / "bad.html"
    assert main(["gantt", str(src), "-o", str(out)]) == 1
    assert page_status(str(out)) == {"ops": 64, "aggregated": False, "errors": []}
    big = tmp_path / "big.json"
    big.write_text(json.dumps(document_from_schedule(generate("1f1b", Instance(P=8, m=64)))))
    out = tmp_path / "big.html"
    assert main(["gantt", str(big), "-o", str(out), "--detail-limit", "100"]) == 0
    text = out.read_text()
    assert "aggregated: 1024 ops" in text and '"aggregated":true' in text


def test_a_script_error_is_reported_by_the_status(tmp_path):
    """The error catcher can fail: a page whose script throws reports it (browser only)."""
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed")
    page = gantt_html(sample()).replace("function init() {", "function init() { undefinedCall();"
                                        " }\nfunction init_unused() {")
    page = page.replace("</body>", "<script>setTimeout(function () { document.getElementById("
                        "'pipebounds-status').textContent = JSON.stringify({errors: "
                        "window.__pbErrors}); }, 1000);</script></body>")
    path = tmp_path / "broken.html"
    path.write_text(page)
    status = page_status(str(path))
    assert any("undefinedCall" in e for e in status["errors"])


def test_deadlock_marked_in_the_page():
    from schedules import Schedule
    bad = Schedule.from_strings(Instance(P=2, m=2), {0: ["0F0", "0B0", "0B1", "0F1"],
                                                     1: ["1F0", "1B0", "1F1", "1B1"]})
    fig, script = gantt_figure(bad)
    marks = [t for t in fig.data if t.name == "deadlock: blocked here"]
    assert len(marks) == 1 and sorted(marks[0].text) == ["blocked at 0B1", "blocked at 1F1"]
    assert len(script["names"]) == 4 and "INVALID (deadlock)" in fig.layout.title.text
