"""Write pipebounds/data/certificates.jsonl: the recorded schedules that reach the bound, shipped
with the package so that ``pipebounds bound --certify S`` finds them (basis ``certificate``).

Reads every ``data/k1_*_reached_*.json`` (schedules found by long solver runs whose simulated
makespan equals T3 or T3d, docs/theory.md §A.6); writes one compact orders document per line,
sorted by file name. ``tests/test_stored_certificates.py`` checks that the shipped file is this
script's output.

    python tools/ship_certificates.py
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "pipebounds" / "data" / "certificates.jsonl"


def certificates_text(root: Path = ROOT) -> str:
    """The file's text: one document per ``data/k1_*_reached_*.json``, in name order."""
    lines = []
    for path in sorted((root / "data").glob("k1_*_reached_*.json")):
        doc = json.loads(path.read_text())
        doc["recorded_as"] = f"data/{path.name}"
        lines.append(json.dumps(doc, separators=(",", ":"), sort_keys=True))
    return "".join(line + "\n" for line in lines)


def main() -> int:
    OUT.write_text(certificates_text())
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
