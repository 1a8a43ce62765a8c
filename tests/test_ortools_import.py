"""schedules.ortools_import: CP-SAT without pandas at start-up, every feature of cp_model kept.

Each check runs in a fresh interpreter (the test process may have pandas or cp_model imported
already, which takes the plain path)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("ortools")
pytest.importorskip("pandas")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT), cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_solving_does_not_import_pandas():
    got = _run(
        "import sys\n"
        "from pipebounds.search.cpsat import cp_model\n"
        "m = cp_model.CpModel(); x = m.new_int_var(0, 9, 'x'); m.add(x >= 4); m.minimize(x)\n"
        "s = cp_model.CpSolver(); code = s.solve(m)\n"
        "print(s.status_name(code), s.value(x), 'pandas' in sys.modules)")
    assert got == "OPTIMAL 4 False"


def test_pandas_features_still_work():
    # the series API imports the real pandas on first use (cp_model.pd is the lazy stand-in)
    got = _run(
        "import sys\n"
        "from schedules.ortools_import import cp_model, LAZY_PANDAS\n"
        "cm = cp_model(); assert cm.pd is LAZY_PANDAS and 'pandas' not in sys.modules\n"
        "import pandas as pd\n"
        "m = cm.CpModel(); xs = m.new_int_var_series('x', pd.Index(range(3)), 1, 5)\n"
        "m.minimize(sum(xs)); s = cm.CpSolver(); s.solve(m)\n"
        "print(type(xs).__name__, s.values(xs).tolist())")
    assert got == "Series [1, 1, 1]"


def test_plain_import_when_pandas_is_loaded():
    got = _run(
        "import pandas, sys\n"
        "from schedules.ortools_import import cp_model\n"
        "print(cp_model().pd is pandas, sys.modules['pandas'] is pandas)")
    assert got == "True True"


def test_no_placeholder_left_behind():
    # after the deferred import a later `import pandas` gets the real module
    got = _run(
        "from schedules.ortools_import import cp_model\n"
        "cp_model()\n"
        "import pandas\n"
        "print(hasattr(pandas, 'DataFrame'), pandas.Series is cp_model().pd.Series)")
    assert got == "True True"
