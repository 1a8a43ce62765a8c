"""The table of optima (data/optima.jsonl) as evidence for the checks.

Only rows proven optimal *independently of the theory* count (``"status": "optimal"`` and
``"independent": true``: the engine ran with ``use_theory=False``, so no bound of :mod:`bounds`
took part in the proof); a malformed row raises instead of being skipped.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Callable

from schedules import Instance

OPTIMA = Path(__file__).resolve().parent.parent / "data" / "optima.jsonl"


def optima_rows(pred: Callable[[Instance], bool]) -> list[tuple[Instance, Fraction]]:
    """``(instance, opt)`` for the rows of data/optima.jsonl proven optimal independently of the
    theory (``"independent": true``) that satisfy ``pred``."""
    out = []
    if not OPTIMA.exists():
        return out
    for line in OPTIMA.read_text().splitlines():
        row = json.loads(line)
        # only optima proven without the theory's bound count as evidence for it
        if row.get("status") != "optimal" or row.get("independent") is not True:
            continue
        inst = Instance.from_dict(row)
        if pred(inst):
            out.append((inst, Fraction(str(row["opt"]))))
    return out
