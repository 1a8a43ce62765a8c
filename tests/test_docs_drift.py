"""The README's and docs' counts and cross-references agree with the code and the data, so they
cannot drift: notebooks, audited claims, families, rows of the optima table, the atlas's
families, and every `theory.md §X` reference."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten "
                                    "eleven twelve".split())}


def _number(text: str) -> int:
    text = text.lower().replace(",", "")
    return WORDS[text] if text in WORDS else int(text)


def _one(pattern: str, text: str = README) -> re.Match:
    found = list(re.finditer(pattern, text))
    assert len(found) == 1, (pattern, [m.group(0) for m in found])
    return found[0]


def test_notebook_count_and_each_notebook_described():
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    m = _one(r"tells the story in (\w+) notebooks")
    assert _number(m.group(1)) == len(notebooks)
    section = README[m.start():README.index("\n## ", m.start())]
    for nb in notebooks:
        assert re.search(rf"\b{nb.name[:2]} ", section), nb.name


def test_audited_claims_count():
    from pipebounds.services.audit import CLAIMS

    assert _number(_one(r"`pipebounds audit`\): (\w+) claims").group(1)) == len(CLAIMS)
    rows = [x for x in (ROOT / "docs" / "claims.md").read_text().splitlines()
            if x.startswith("| ") and not x.startswith(("| claim ", "| --- "))]
    assert len(rows) == len(CLAIMS)


def test_family_count():
    from schedules.generators import GENERATORS

    m = _one(r"one function per family, (\w+) families")
    assert _number(m.group(1)) == len(GENERATORS)


def test_optima_table_counts():
    rows = {}
    for line in (ROOT / "pipebounds" / "data" / "optima.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[json.dumps({k: v for k, v in row.items() if k in (
                "P", "m", "K", "v", "placement", "f", "b", "b_input", "b_weight", "c")},
                sort_keys=True)] = row  # the last line of an instance wins
    m = _one(r"all\s+([\d,]+) of its instances were solved with `use_theory=False` "
             r"\(`\"independent\": true`\),\s+([\d,]+) of them to\s+a proven optimum")
    assert _number(m.group(1)) == len(rows)
    assert all(r.get("independent") is True for r in rows.values())
    assert _number(m.group(2)) == sum(r["status"] == "optimal" for r in rows.values())


def test_atlas_families():
    from pipebounds.sweep import flat_rows
    from schedules.generators import GENERATORS

    fams = {r["family"] for r in flat_rows(ROOT / "data" / "atlas" / "atlas.sqlite")
            if r.get("family")}
    missing = [g for g in GENERATORS if g not in fams]
    atlas = (ROOT / "docs" / "atlas.md").read_text()
    if missing:
        m = _one(r"(\d+) of the (\d+) families of `pipebounds generate --list` \(not ([^:]+):",
                 atlas)
        assert (int(m.group(1)), int(m.group(2))) == (len(fams), len(GENERATORS))
        assert re.findall(r"`([^`]+)`", m.group(3)) == missing
        m = _one(r"atlas \(docs/atlas.md, `data/atlas/`\) is such a sweep: (\d+) of the (\d+) "
                 r"families\s+\(all but ([^:]+):")
        assert (int(m.group(1)), int(m.group(2))) == (len(fams), len(GENERATORS))
        assert re.findall(r"`([^`]+)`", m.group(3)) == missing
    assert "every family of `pipebounds generate --list`" not in atlas or not missing


def _headings(path: Path) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^## ([A-Z]?\.?[0-9.]*[0-9])\b", path.read_text(),
                                            flags=re.M)}


def test_theory_references_resolve():
    theory = _headings(ROOT / "docs" / "theory.md")
    multi = _headings(ROOT / "docs" / "theory_multiwave.md")
    texts = {p: p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    for path, text in texts.items():
        for m in re.finditer(r"theory\.md §([A-Z]?\.?[0-9.]*[0-9])", text):
            assert m.group(1) in theory, (path.name, m.group(0))
        for m in re.finditer(r"\(§([AB]\.[0-9]+)\)", text):
            if path.name in ("theory.md", "theory_multiwave.md"):
                assert m.group(1) in (theory if m.group(1)[0] == "A" else multi), \
                    (path.name, m.group(0))


def test_theorem_rows_cite_their_own_section():
    text = (ROOT / "docs" / "theory.md").read_text()
    heads = dict(re.findall(r"^## (A\.[0-9]+) (.*)$", text, flags=re.M))
    for tid, sec in re.findall(r"^\| (T[0-9])[a-z]? \|[^\n]*?\(§(A\.[0-9]+)\)", text, flags=re.M):
        assert f"Theorem {tid[1]}" in heads[sec], (tid, sec, heads[sec])
