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
