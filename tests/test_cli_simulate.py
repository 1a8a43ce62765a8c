"""`pipebounds simulate`: JSON keys of CLI.md, exit codes, one-line errors."""

import json
import subprocess
import sys

import pytest

from builders import one_f_one_b_orders
from pipebounds.cli import main


def doc(P=4, m=8, K=4, orders=None):
    return {"P": P, "m": m, "v": 1, "placement": "looped", "K": K,
            "durations": {"F": 1, "B": 2}, "orders": orders or one_f_one_b_orders(P, m)}


def run(tmp_path, capsys, payload, *flags):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(payload))
    code = main(["simulate", str(path), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_keys_and_values(tmp_path, capsys):
    code, out, err = run(tmp_path, capsys, doc(), "--json")
    res = json.loads(out)
    assert code == 0 and err == ""
    for key in ("valid", "errors", "makespan", "makespan_exact", "peak_memory", "bubble_ratio",
                "lower_bound", "respects_bound"):
        assert key in res
    assert res["makespan"] == 33 and res["peak_memory"] == [4, 3, 2, 1] and res["valid"]
    assert res["respects_bound"] is True and res["lower_bound_K"] == 4


def test_lower_bound_uses_peak_when_K_absent(tmp_path, capsys):
    code, out, _ = run(tmp_path, capsys, doc(K=None), "--json")
    assert json.loads(out)["lower_bound_K"] == 4


def test_list_of_documents_and_invalid_exit_1(tmp_path, capsys):
    bad = doc(K=2)
    code, out, _ = run(tmp_path, capsys, [doc(), bad], "--json")
    res = json.loads(out)
    assert code == 1 and [r["valid"] for r in res] == [True, False]
    assert res[1]["errors"][0].startswith("memory: GPU 0 holds 3")


@pytest.mark.parametrize("payload, message", [
    ("{nope", "malformed JSON"),
    ({"P": 1, "m": 1, "orders": {"0": ["0Z0"]}}, "unknown op 'Z'"),
    ({"P": 1, "m": 1, "orders": {"0": ["zz"]}}, "malformed action"),
    ({"P": 1, "m": 1, "K": 0, "orders": {}}, "K must be >= 1"),
    ({"P": 0, "m": 1, "orders": {}}, "P must be >= 1"),
    ({"P": 1, "m": 1, "durations": {"F": -1}, "orders": {}}, "must be > 0"),
])
def test_bad_input_exit_2_one_line(tmp_path, capsys, payload, message):
    path = tmp_path / "bad.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    code = main(["simulate", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_missing_file_and_usage(capsys):
    assert main(["simulate", "/nonexistent/x.json"]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["simulate"]) == 2
    assert main(["frobnicate"]) == 2


def test_console_script_reads_stdin():
    proc = subprocess.run([sys.executable, "-m", "pipebounds", "simulate", "-", "--json"],
                          input=json.dumps(doc()), capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and json.loads(proc.stdout)["makespan_exact"] == "33"
    assert "Traceback" not in proc.stderr


def test_peak_bytes_and_budget(tmp_path, capsys):
    d = doc(P=2, m=2, K=None, orders={"0": ["0F0", "0F1", "0B0", "0B1"],
                                      "1": ["1F0", "1B0", "1F1", "1B1"]})
    d["durations"] = {"F": [1, 2], "B": [2, 3]}
    d["comm"] = "1/2"
    d["memory"] = {"activation": [3, 5], "static": [1, 2], "transient": {"B": 1}, "budget": 7}
    code, out, err = run(tmp_path, capsys, d, "--json")
    res = json.loads(out)
    # GPU 0: 1 static + 3 + 3 + 1 transient during 0B0 = 8; GPU 1: 2 + 5 + 1 during 1B0 = 8
    assert code == 1 and res["peak_bytes"] == [8, 8] and res["peak_bytes_exact"] == ["8", "8"]
    assert res["budget"] == 7 and res["budget_exact"] == "7"
    assert not res["valid"] and "above the budget 7" in res["errors"][0]
    d["memory"]["budget"] = 8
    code, out, _ = run(tmp_path, capsys, d, "--json")
    res = json.loads(out)
    assert code == 0 and res["valid"] and res["peak_bytes_exact"] == ["8", "8"]
    # GPU 0: 0F0 [0,1) 0F1 [1,2); GPU 1: 1F0 [3/2,7/2) 1B0 [7/2,13/2) 1F1 [13/2,17/2)
    # 1B1 [17/2,23/2); GPU 0: 0B0 [7,9) 0B1 [12,14)
    assert res["makespan_exact"] == "14"


def test_bad_memory_object_is_exit_2(tmp_path, capsys):
    d = doc(P=2, m=1, K=None, orders={"0": ["0F0", "0B0"], "1": ["1F0", "1B0"]})
    d["memory"] = {"activation": [1, 1, 1], "budget": 3}
    code, out, err = run(tmp_path, capsys, d)
    assert code == 2 and "memory.activation lists 3 stages" in err and "Traceback" not in err
