"""What the notebooks say, read without running them: the public face (`import pipebounds as pb`
where they use it), no `sys.path` edits, no `eval`, no path that does not exist, no promise of a
command that exists; notebook 03's account of T3 and T3d at the counterexample."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _cells(path: Path) -> list[tuple[str, str]]:
    return [(c["cell_type"], "".join(c["source"])) for c in json.loads(path.read_text())["cells"]]


def test_no_sys_path_edits_and_no_eval():
    for nb in NOTEBOOKS:
        code = "\n".join(s for kind, s in _cells(nb) if kind == "code")
        assert "sys.path" not in code and not re.search(r"\beval\(", code), nb.name


def test_notebooks_03_and_05_use_the_public_face():
    for name in ("03_exact_cases.ipynb", "05_frontier_and_audit.ipynb"):
        code = "\n".join(s for kind, s in _cells(ROOT / "notebooks" / name) if kind == "code")
        assert "import pipebounds as pb" in code, name


def test_paths_named_in_notebooks_exist():
    for nb in NOTEBOOKS:
        for kind, text in _cells(nb):
            for path in re.findall(r"`((?:docs|data|pipebounds|notebooks|tools|shared)/[\w./-]+"
                                   r"\.(?:md|json|jsonl|py|sqlite))`", text):
                assert (ROOT / path).exists(), (nb.name, path)
            for path in re.findall(r"\.\./((?:data|docs)/[\w./-]+\.\w+)", text):
                assert (ROOT / path).exists(), (nb.name, path)


def test_notebook_05_promises_nothing_that_exists_already():
    text = "\n".join(s for _, s in _cells(ROOT / "notebooks" / "05_frontier_and_audit.ipynb"))
    assert "runs once" not in text and "HAVE_AUDIT" not in text and "REFERENCES.md" not in text


def test_notebook_03_tells_t3_and_t3d_apart():
    """The counterexample's bound is T3d = 146 = OPT while T3 = 144; the table count is of T3
    itself (the counterexample row is a T3 < OPT row) and the chart labels each line."""
    import pipebounds as pb

    terms = dict(pb.lower_bound(pb.Instance(P=3, m=12, K=1, f=5, b=3)).terms)
    assert (terms["single_slot"], terms["single_slot_coupled"]) == (144, 146)
    cells = _cells(ROOT / "notebooks" / "03_exact_cases.ipynb")
    text = "\n".join(s for _, s in cells)
    assert "T3 = 144" in text and "T3d" in text and "bound 144" not in text
    count = next(s for kind, s in cells if kind == "code" and "verdict = Counter()" in s)
    assert 'terms["single_slot"]' in count and "lower_bound(inst).value" not in count
    chart = next(s for kind, s in cells if kind == "code" and "cex = " in s)
    assert "T3 = {t3}" in chart and "T3d = OPT = {t3d}" in chart
