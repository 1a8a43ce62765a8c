"""``pipebounds export`` (chrome-trace, torch-csv) and pipebounds/viz/chrome_trace.py."""

from __future__ import annotations

import json

from pipebounds.cli import main
from schedules import Instance, document_from_schedule, simulate
from schedules.generators import generate
from schedules.interop import from_torch_csv
from schedules.remat import fit_memory


def write(tmp_path, sched, name="s.json", **change):
    doc = dict(document_from_schedule(sched), **change)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_chrome_trace_one_event_per_op_on_its_gpu_track(tmp_path):
    sched = fit_memory(generate("zbv", Instance(P=2, m=4, v=2, placement="vshape",
                                                b_I=1, b_W=3)), 2)
    out = tmp_path / "t.json"
    assert main(["export", write(tmp_path, sched), "--format", "chrome-trace", "-o", str(out),
                 "--us-per-unit", "1000"]) == 0
    trace = json.loads(out.read_text())
    events = trace["traceEvents"]
    ops = [e for e in events if e["ph"] == "X"]
    times = simulate(sched).op_times()
    want = {(gpu, str(op)): times[op] for gpu, op in sched.ops()}
    assert len(ops) == sched.num_ops
    assert {(e["tid"], e["name"]) for e in ops} == set(want)
    for e in ops:
        start, end = want[(e["tid"], e["name"])]
        assert e["ts"] == float(start) * 1000 and e["dur"] == float(end - start) * 1000
        assert e["cat"] == e["name"][1] and e["pid"] == 0
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {0: "GPU 0", 1: "GPU 1"}
    counters = [e for e in events if e["ph"] == "C"]
    assert max(e["args"]["live activations"] for e in counters) == 2
    assert trace["otherData"]["valid"] is True


def test_torch_csv_and_recompute_refused(tmp_path, capsys):
    sched = generate("zb-h1", Instance(P=3, m=5, b_I=1, b_W=1))
    out = tmp_path / "s.csv"
    assert main(["export", write(tmp_path, sched), "--format", "torch-csv", "-o", str(out)]) == 0
    rows = out.read_text().splitlines()
    assert rows == [",".join(str(op) for op in seq) for seq in sched.orders]
    back = from_torch_csv(out.read_text(), b_I=1, b_W=1)
    assert back.orders == sched.orders and back.instance == sched.instance
    fitted = fit_memory(sched, 1)
    bad_out = tmp_path / "r.csv"
    assert main(["export", write(tmp_path, fitted, "r.json"), "--format", "torch-csv",
                 "-o", str(bad_out)]) == 2
    err = capsys.readouterr().err
    assert "no recompute action" in err and err.count("\n") == 1
    assert not bad_out.exists()


def test_invalid_exported_with_exit_1_and_bad_input_exit_2(tmp_path, capsys):
    sched = generate("1f1b", Instance(P=3, m=4))
    src = write(tmp_path, sched, K=1)
    assert main(["export", src, "--format", "chrome-trace", "-o", str(tmp_path / "t.json")]) == 1
    assert "memory" in capsys.readouterr().err
    for args in (["export", src, "--format", "svg", "-o", str(tmp_path / "x")],
                 ["export", src, "--format", "torch-csv", "-o", str(tmp_path / "no" / "x.csv")],
                 ["export", src, "--format", "chrome-trace", "-o", str(tmp_path / "y"),
                  "--us-per-unit", "0"]):
        assert main(args) == 2
        assert capsys.readouterr().err.startswith("error:")


def test_simulate_reports_a_deadlocking_send_receive_order(tmp_path, capsys):
    """An orders document with torch's send/receive order (``comms``) that would hang."""
    from schedules.interop import from_pipeline_order
    ok = [["0F0", "0SEND_F0", "0RECV_B0", "0B0"], ["1RECV_F0", "1F0", "1B0", "1SEND_B0"]]
    hang = [["0F0", "0RECV_B0", "0SEND_F0", "0B0"], ok[1]]
    for order, status in ((ok, 0), (hang, 1)):
        doc = document_from_schedule(from_pipeline_order(order, Instance(P=2, m=1)))
        assert doc["comms"] == {"0": order[0], "1": order[1]}
        path = tmp_path / "c.json"
        path.write_text(json.dumps(doc))
        assert main(["simulate", str(path), "--json"]) == status
        out = json.loads(capsys.readouterr().out)
        out = out[0] if isinstance(out, list) else out
        assert out["valid"] is (status == 0)
        if status:
            assert any(e.startswith("comm_deadlock: ") and "GPU 0 is blocked at 0RECV_B0" in e
                       for e in out["errors"])


def test_torch_csv_renumbers_out_of_order_last_stage_and_says_so(tmp_path, capsys):
    from schedules import Schedule

    sched = Schedule.from_strings(Instance(P=2, m=4), {
        0: ["0F0", "0F1", "0F2", "0F3", "0B0", "0B2", "0B1", "0B3"],
        1: ["1F0", "1B0", "1F2", "1B2", "1F1", "1B1", "1F3", "1B3"]})
    out = tmp_path / "s.csv"
    assert main(["export", write(tmp_path, sched), "--format", "torch-csv", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "renumbered" in err and "1->2, 2->1" in err and err.count("\n") == 1
    rows = [row.split(",") for row in out.read_text().splitlines()]
    assert [a for a in rows[1] if "F" in a] == ["1F0", "1F1", "1F2", "1F3"]
    assert rows[0] == ["0F0", "0F2", "0F1", "0F3", "0B0", "0B1", "0B2", "0B3"]
    back = from_torch_csv(out.read_text())
    assert simulate(back).makespan == simulate(sched).makespan
    assert simulate(back).peak_memory == simulate(sched).peak_memory


def test_torch_csv_refusal_of_recompute_points_to_execute(tmp_path, capsys):
    fitted = fit_memory(generate("1f1b", Instance(P=2, m=3)), 1)
    assert main(["export", write(tmp_path, fitted), "--format", "torch-csv",
                 "-o", str(tmp_path / "r.csv")]) == 2
    assert "pipebounds execute" in capsys.readouterr().err
