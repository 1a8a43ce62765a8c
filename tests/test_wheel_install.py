"""A wheel install answers as the checkout does.

Builds a wheel of the checkout (``pip wheel . --no-deps --no-build-isolation``, offline, from a
copy of the packaged files so the checkout gets no ``build/``), installs it with ``--no-deps``
into a fresh virtual environment made by the running interpreter (``venv --without-pip``),
whose dependencies (numpy, sympy, ortools...) come from the running environment's
site-packages through a ``.pth`` file listing that directory. A directory named in a ``.pth``
file is appended to ``sys.path`` without its own ``.pth`` files being processed, so an editable
install of the checkout living there stays out: the test checks that ``pipebounds``,
``bounds`` and ``schedules`` are imported from the new environment. Then ``pipebounds bound
... --json`` runs there, from a directory outside the checkout and without ``PYTHONPATH``, on
instances covering every ``exact_basis`` value (``theorem``, ``checked``, ``table``,
``certificate``, ``solver``, null), single and ``--batch`` (both batch paths), and its output
must equal the checkout's byte for byte.

The regression it guards: a wheel without the package data (pipebounds/data/optima.jsonl)
answered ``exact: false, exact_basis: null`` for ``bound -P 3 -m 2 -K 1 -v 2 -f 1 -b 1``
(checkout: ``true, table``). About 10 CPU-seconds (the build, the install, four commands).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import pipebounds
from pipebounds.cli import main

ROOT = Path(__file__).resolve().parent.parent

# the packaged files (pyproject.toml: [tool.setuptools.packages.find] and the readme)
PACKAGED = ("pyproject.toml", "README.md", "pipebounds", "schedules", "bounds", "proofs_checks")

REGRESSION = ["-P", "3", "-m", "2", "-K", "1", "-v", "2", "-f", "1", "-b", "1"]

# lookups only (the array path and the per-instance path of --batch): theorem, checked,
# table, null, and a rational duration and a delay (per-instance lines)
LOOKUPS = [{"P": 4, "m": 8, "K": 4, "f": 1, "b": 2},                       # theorem
           {"P": 4, "m": 8, "K": 1, "f": 1, "b": 2},                       # checked
           {"P": 3, "m": 2, "K": 1, "v": 2, "f": 1, "b": 1},               # table (v = 2)
           {"P": 3, "m": 12, "K": 1, "f": 5, "b": 3},                      # table, OPT > LB
           {"P": 8, "m": 42, "K": 1, "f": 1, "b": 1},                      # null
           {"P": 3, "m": 4, "K": 1, "f": 2, "b_input": 1, "b_weight": 1},  # checked, split
           {"P": 2, "m": 3, "f": "1/2", "b": "1/3"},                       # theorem, rational
           {"P": 2, "m": 3, "K": 2, "f": 1, "b": 2, "c": 1}]               # null (delay)

# with --certify: a known family reaches the bound (certificate); none does, the exact solver
# proves the optimum (solver); both in well under a second (docs: bound --certify S)
SEARCHES = [{"P": 2, "m": 2, "K": 2, "f": 1, "b": 2, "c": 1},              # certificate
            {"P": 2, "m": 3, "K": 2, "f": 1, "b": 2, "c": 1}]              # solver


def _checkout(capsys, args: list[str]) -> str:
    capsys.readouterr()
    assert main(args) == 0
    return capsys.readouterr().out


def _run(env_bin: Path, args: list[str], cwd: Path, env: dict) -> str:
    res = subprocess.run([str(env_bin / "pipebounds"), *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_wheel_install_answers_as_the_checkout(tmp_path, capsys):
    pytest.importorskip("setuptools", reason="the build backend (the test extra) is not installed")
    assert Path(pipebounds.__file__).resolve().is_relative_to(ROOT)  # the checkout answers here
    src, dist, venv, work = (tmp_path / d for d in ("src", "dist", "venv", "work"))
    src.mkdir()
    work.mkdir()
    for name in PACKAGED:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(p, src / name)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    quiet = {"cwd": work, "env": env, "capture_output": True, "text": True, "timeout": 300}

    def ok(cmd):
        res = subprocess.run(cmd, **quiet)
        assert res.returncode == 0, (cmd, res.stdout[-2000:], res.stderr[-2000:])
        return res.stdout

    ok([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
        "--no-index", "--disable-pip-version-check", "-q", "-w", str(dist)])
    wheels = list(dist.glob("pipebounds-*.whl"))
    assert len(wheels) == 1
    ok([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    new_site = Path(ok([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                    .strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (new_site / "deps-of-the-running-environment.pth").write_text("\n".join(sorted(deps)) + "\n")
    ok([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check",
        "-q", str(wheels[0])])
    where = json.loads(ok([str(py), "-c", "import json, pipebounds, bounds, schedules; print(json."
                                           "dumps([m.__file__ for m in (pipebounds, bounds, "
                                           "schedules)]))"]))
    for f in where:  # the wheel's modules, not the checkout's (nor its editable install)
        assert Path(f).resolve().is_relative_to(new_site.resolve()), where

    # one instance: the regression of a wheel without the table
    single = REGRESSION + ["--json"]
    got = _run(venv / "bin", ["bound", *single], work, env)
    assert got == _checkout(capsys, ["bound", *single])
    assert json.loads(got)["exact"] is True and json.loads(got)["exact_basis"] == "table"

    bases = set()
    for lines, extra in ((LOOKUPS, []), (SEARCHES, ["--certify", "20"])):
        path = work / f"batch{len(extra)}.jsonl"
        path.write_text("".join(json.dumps(d) + "\n" for d in lines))
        args = ["bound", "--batch", str(path), "--json", *extra]
        got = _run(venv / "bin", args, work, env)
        assert got == _checkout(capsys, args)
        res = json.loads(got)
        assert len(res) == len(lines) and all("error" not in r for r in res)
        bases |= {r["exact_basis"] for r in res}
    assert bases == {"theorem", "checked", "table", "certificate", "solver", None}
