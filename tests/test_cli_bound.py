"""`pipebounds bound`: JSON keys of CLI.md, batch mode, exit codes, one-line errors."""

import json

import pytest

from pipebounds.cli import main


def run(capsys, *args, stdin=None, monkeypatch=None):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_keys_and_values(capsys):
    code, out, err = run(capsys, "bound", "-P", "4", "-m", "8", "--json")
    res = json.loads(out)
    assert code == 0 and err == ""
    for key in ("lower_bound", "lower_bound_exact", "exact", "terms"):
        assert key in res
    assert res["lower_bound"] == 33 and res["lower_bound_exact"] == "33" and res["exact"] is True
    assert {"name": "fill_drain", "value": 33, "value_exact": "33"} in res["terms"]
    assert max(t["value"] for t in res["terms"]) == res["lower_bound"]


def test_k1_single_slot_exact_and_rational_durations(capsys):
    code, out, _ = run(capsys, "bound", "-P", "3", "-m", "4", "-K", "1", "-f", "3", "-b", "2",
                       "--json")
    res = json.loads(out)
    assert res["lower_bound_exact"] == "34" and res["exact"] is True
    code, out, _ = run(capsys, "bound", "-P", "2", "-m", "3", "-f", "1/2", "-b", "1/3", "--json")
    res = json.loads(out)
    assert res["lower_bound_exact"] == "10/3" and abs(res["lower_bound"] - 10 / 3) < 1e-12


def test_text_output(capsys):
    code, out, _ = run(capsys, "bound", "-P", "2", "-m", "2", "-K", "1")
    assert code == 0 and "lower bound" in out and "single_slot" in out


def test_batch_one_result_per_line_and_bad_lines(tmp_path, capsys):
    lines = ['{"P": 4, "m": 8, "K": 1, "v": 1, "placement": "looped", "f": 1, "b": 2}',
             "not json",
             '{"P": 0, "m": 2}',
             "",
             '{"P": 2, "m": 3, "K": "inf", "b_input": 1, "b_weight": 1}']
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "bound", "--batch", str(path))
    res = json.loads(out)
    assert code == 0 and len(res) == 4
    assert res[0]["instance"]["K"] == 1 and res[0]["lower_bound"] == 36 and res[0]["exact"]
    assert "error" in res[1] and "error" in res[2] and "P" in res[2]["error"]
    assert res[3]["instance"]["b_input"] == 1 and "lower_bound" in res[3]


def test_batch_from_stdin(monkeypatch, capsys):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO('{"P": 2, "m": 2}\n'))
    code, out, _ = run(capsys, "bound", "--batch", "-")
    assert code == 0 and json.loads(out)[0]["lower_bound"] == 9


@pytest.mark.parametrize("args", [["bound", "-P", "x", "-m", "2"], ["bound", "-m", "2"],
                                  ["bound", "-P", "2", "-m", "2", "-K", "0"],
                                  ["bound", "-P", "2", "-m", "2", "--b-input", "1"],
                                  ["bound", "-P", "2", "-m", "2", "--batch", "/nonexistent"]])
def test_bad_input_exits_2_with_one_line(capsys, args):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error:")
