"""Progress on every long command: `--progress` shows a bar on stderr even off a terminal,
`--quiet` and a non-terminal stderr show none; the bars count work weighted by item size."""

from __future__ import annotations

import pytest

from pipebounds.cli import main
from pipebounds.services.audit import CLAIMS, audit
from pipebounds.sweep import Store, expand, make_executor, run_sweep
from schedules.progress import instance_weight

LONG = {
    "best": ["best", "-P", "2", "-m", "3", "-K", "1", "--time-limit", "2",
             "--solve-time-limit", "1"],
    "frontier": ["frontier", "-P", "3", "-m", "4", "--time-limit", "1"],
    "audit": ["audit", "--only", "1f1b-memory"],
    "generate": ["generate", "1f1b", "-P", "3", "-m", "6", "-K", "1"],
}


@pytest.mark.parametrize("name", sorted(LONG))
def test_progress_and_quiet_flags(name, capsys, tmp_path):
    argv = LONG[name]
    assert main(argv + ["--progress"]) == 0
    err = capsys.readouterr().err
    assert name in err or "fit_memory" in err, err  # the bar's description
    assert main(argv + ["--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(argv) == 0  # stderr is not a terminal here: no bar by default
    assert capsys.readouterr().err == ""


def test_report_takes_progress_too(capsys, tmp_path):
    argv = ["report", "-P", "2", "-m", "2", "--no-figures", "-o", str(tmp_path / "r")]
    assert main(argv + ["--progress"]) == 0 and "report" in capsys.readouterr().err
    assert main(argv + ["--quiet"]) == 0 and capsys.readouterr().err == ""


def test_audit_progress_is_weighted_by_instance_size():
    seen = []
    chosen = [c for c in CLAIMS if "1f1b" in c.id]
    audit("1f1b", progress=lambda done, total: seen.append((done, total)))
    total = sum(instance_weight(i) * (2 if c.companion is not None else 1)
                for c in chosen for i in c.grid())
    assert seen and seen[-1] == (total, total)
    steps = {b - a for (a, _), (b, _) in zip([(0, 0)] + seen, seen)}
    assert len(steps) > 1  # instances of different sizes advance the bar by different amounts


def test_sweep_bar_counts_pairs_not_items(tmp_path, monkeypatch):
    import pipebounds.sweep.run as run

    totals, updates = [], []

    class Bar:
        def __init__(self, total, *a, **k):
            totals.append(total)

        def update(self, k=1):
            updates.append(k)

        def set_postfix_str(self, *a, **k):
            pass

        def close(self):
            pass

    monkeypatch.setattr(run, "progress_bar", Bar)
    items = expand({"instances": [{"P": 2, "m": 2}, {"P": 8, "m": 16, "v": 2}]}, "bound")
    with Store(tmp_path / "s.sqlite") as store:
        run_sweep(items, store, make_executor("inprocess"), progress=True)
    assert totals == [2 * 2 + 8 * 16 * 2] and sorted(updates) == [4, 256]
