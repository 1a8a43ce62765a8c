"""Start-up imports: the exact bound and ``pipebounds bound`` load neither sympy nor matplotlib
nor OR-tools (they are imported inside the functions that use them; issue 20). The time itself
is measured by benchmarks/bench_startup.py, not asserted here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sympy", "matplotlib", "ortools", "scipy", "torch")


def _loaded_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (this tree first on the path) and return which of
    :data:`HEAVY` it left in ``sys.modules`` and what it printed."""
    probe = ("import sys, io, contextlib\nbuf = io.StringIO()\n"
             "with contextlib.redirect_stdout(buf):\n"
             + "".join(f"    {line}\n" for line in code.splitlines())
             + f"print(__import__('json').dumps({{'heavy': [m for m in {HEAVY!r} "
               f"if m in sys.modules], 'out': buf.getvalue()}}))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=env, cwd=ROOT.parent, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_bound_command_imports_no_heavy_package():
    got = _loaded_after("from pipebounds.cli import main\n"
                        "main(['bound', '-P', '4', '-m', '8', '-K', '1', '--json'])")
    assert json.loads(got["out"])["lower_bound"] == 36
    assert got["heavy"] == []


def test_lower_bound_and_the_public_face_import_no_heavy_package():
    got = _loaded_after("import pipebounds as pb\n"
                        "print(pb.lower_bound(pb.Instance(P=3, m=4, v=2, K=1, f=1, b=2)).value)")
    assert got["out"].strip() and got["heavy"] == []


def test_an_expression_still_loads_sympy():
    """The probe can see a heavy import: building a sympy expression loads sympy."""
    got = _loaded_after("from bounds.single_wave import fill_drain_expr\n"
                        "print(fill_drain_expr())")
    assert got["heavy"] == ["sympy"] and "P" in got["out"]
