"""Progress display (schedules/progress.py): on stderr, only when asked or on a terminal; the
library hooks (fit_memory, build_report, proofs_checks) report as work finishes."""

from __future__ import annotations

import io
import sys

from schedules import Instance
from schedules.generators import generate
from schedules.progress import progress_bar, progress_for, wanted
from schedules.remat import fit_memory


def test_wanted_follows_the_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert wanted(None) is False and wanted(True) is True
    monkeypatch.setattr(sys, "stderr", Tty())
    assert wanted(None) is True and wanted(False) is False


def test_bar_writes_to_stderr_only_when_enabled(capsys):
    bar = progress_bar(3, "demo", enabled=True)
    for _ in range(3):
        bar.update()
    bar.close()
    out, err = capsys.readouterr()
    assert out == "" and "demo:" in err and "/3" in err
    bar = progress_bar(3, "quiet", enabled=False)
    bar.update()
    bar.close()
    assert capsys.readouterr() == ("", "")


def test_fit_memory_reports_through_a_callback():
    calls = []
    sched = generate("1f1b", Instance(P=4, m=8))
    fitted = fit_memory(sched, 1, progress=lambda done, total: calls.append((done, total)))
    assert fitted == fit_memory(sched, 1)  # progress changes nothing
    assert calls[:4] == [(1, 804), (2, 804), (3, 804), (4, 804)]  # 4 GPUs, then polish trials
    assert [d for d, _ in calls] == list(range(1, len(calls) + 1))
    assert progress_for(None, 2, "x").__class__.__name__ == "_Silent"


def test_report_progress_one_step_per_setting():
    from pipebounds.services.report import build_report
    calls = []
    reps = build_report([("a", Instance(P=2, m=2)), ("b", Instance(P=2, m=3))],
                        progress=lambda done, total: calls.append((done, total)))
    assert len(reps) == 2 and calls == [(1, 2), (2, 2)]


def test_proofs_checks_table_fits_100_columns():
    from proofs_checks.__main__ import WIDTH, table_header, table_row
    row = {"ok": False, "seconds": 1234.5, "instances": 123456789, "worst_gap": None,
           "kind": "exhaustive", "theorem": "T3 single slot " * 12, "range": "P <= 5, " * 30}
    lines = [table_header()] + table_row(row)
    assert WIDTH == 100 and all(len(line) <= 100 for line in lines)
    text = " ".join(x.strip() for x in lines)
    assert "FAIL" in text and "123456789" in text
    theorem = text.split("range:")[0]
    assert theorem.count("T3 single slot") == 12 and text.count("P <= 5") == 30
