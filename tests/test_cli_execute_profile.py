"""``pipebounds execute`` and ``pipebounds profile`` (torch runs skipped without torch)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipebounds.cli import main
from schedules import Instance, document_from_schedule
from schedules.generators import generate
from schedules.remat import fit_memory


def write(tmp_path, obj, name="d.json"):
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return str(path)


def test_execute_refuses_bad_input_in_one_line(tmp_path, capsys):
    doc = document_from_schedule(generate("1f1b", Instance(P=2, m=3)))
    assert main(["execute", write(tmp_path, doc), "--world-size", "3"]) == 2
    err = capsys.readouterr().err
    assert "P=2" in err and "--world-size is 3" in err and err.count("\n") == 1
    bad = dict(doc, orders={"0": ["0F0", "0B0"], "1": ["1F0", "1B0"]})  # microbatches missing
    assert main(["execute", write(tmp_path, bad, "bad.json"), "--world-size", "2"]) == 2
    assert "not a valid schedule" in capsys.readouterr().err


def test_execute_refuses_a_bad_model_in_one_line(tmp_path, capsys):
    pytest.importorskip("torch")  # the model's flags are read by pipebounds.torch.models
    doc = document_from_schedule(generate("1f1b", Instance(P=2, m=3)))
    assert main(["execute", write(tmp_path, doc), "--world-size", "2", "--width", "0"]) == 2
    assert "width must be" in capsys.readouterr().err


def test_execute_and_profile_without_torch_say_how_to_install(tmp_path, capsys, monkeypatch):
    doc = document_from_schedule(generate("1f1b", Instance(P=2, m=3)))
    for name in [n for n in sys.modules if n == "torch" or n.startswith(("torch.",
                                                                         "pipebounds.torch"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["execute", write(tmp_path, doc), "--world-size", "2"]) == 2
    assert "pip install torch==2.13.0" in capsys.readouterr().err
    assert main(["profile", "--stages", "2"]) == 2
    assert "pip install torch==2.13.0" in capsys.readouterr().err


def test_profile_writes_the_instance_object_bound_reads(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "inst.json"
    prof = subprocess.run([sys.executable, "-m", "pipebounds", "profile", "--stages", "4", "-P",
                           "2", "-m", "4", "--repeat", "2", "--json", "-o", str(out)],
                          capture_output=True, text=True, check=False)
    assert prof.returncode == 0, prof.stderr
    obj = json.loads(prof.stdout)
    assert json.loads(out.read_text()) == obj
    assert (obj["P"], obj["m"], obj["v"]) == (2, 4, 2)
    for key in ("f", "b_input", "b_weight"):
        assert len(obj[key]) == 4 and all(isinstance(x, int) and x >= 1 for x in obj[key])
    mem = obj["memory"]
    # MLP stage: tanh(Linear(8, 8)) on 4 float64 rows saves its input and its output
    assert mem["activation"][:3] == [2 * 4 * 8 * 8] * 3 and mem["budget"] is None
    assert all(0 < g <= a for g, a in zip(mem["kept_after_input"], mem["activation"]))
    assert mem["static"] == [2 * 2 * (8 * 8 + 8) * 8] * 2  # two stages' parameters + grads
    inst = Instance.from_dict(obj)
    assert inst.split and inst.S == 4 and inst.memory is not None
    bound = subprocess.run([sys.executable, "-m", "pipebounds", "bound", "--instance", str(out),
                            "--json"], capture_output=True, text=True, check=False)
    assert bound.returncode == 0, bound.stderr


def test_execute_check_json_on_a_recomputing_schedule(tmp_path):
    pytest.importorskip("torch")
    doc = document_from_schedule(fit_memory(generate("zb-h1", Instance(P=2, m=4, b_I=1,
                                                                       b_W=1)), 1))
    proc = subprocess.run([sys.executable, "-m", "pipebounds", "execute", "-", "--world-size",
                           "2", "--check", "--json"], input=json.dumps({"schedule": doc}),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] and len(out["ranks"]) == 2
    for r in out["ranks"]:
        assert r["grad_error"] <= 1e-9 and r["peak_activations"] == r["simulated_peak"] == 1
        assert r["peak_bytes"] == r["predicted_peak_bytes"]
        assert r["ops"] == doc["orders"][str(r["rank"])]
    assert out["measured_seconds"] > 0 and out["predicted_seconds"] > 0
