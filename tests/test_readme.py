"""The README's examples print exactly what the tool prints.

Every fenced ```text block of README.md whose first line is ``$ pipebounds ...`` is run (the
command with ``python -m pipebounds``, from the repository root) and its output compared with the
lines that follow it, up to the next ``$`` line. ``...`` in the expected text matches any text (as
doctest's ELLIPSIS): the README uses it for times and to cut long JSON.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_examples(text: str) -> list[tuple[str, str]]:
    """``(command, expected output)`` of every ``$ pipebounds`` example in ``text``."""
    out = []
    for block in re.findall(r"```text\n(.*?)```", text, flags=re.S):
        if not block.startswith("$ pipebounds"):
            continue
        cmd, lines = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if cmd is not None:
                    out.append((cmd, "\n".join(lines)))
                cmd, lines = line[2:], []
            else:
                lines.append(line)
        out.append((cmd, "\n".join(lines)))
    return out


def matches(expected: str, actual: str) -> bool:
    """``actual`` equals ``expected`` where each ``...`` may stand for any text."""
    pattern = ".*?".join(re.escape(part) for part in expected.rstrip().split("..."))
    return re.fullmatch(pattern, actual.rstrip(), flags=re.S) is not None


EXAMPLES = readme_examples((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_examples():
    commands = [c.split()[1] for c, _ in EXAMPLES]
    assert {"bound", "solve", "simulate", "export"} <= set(commands)
    assert any("--batch examples/" in c for c, _ in EXAMPLES)


@pytest.mark.parametrize("command, expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example_prints_what_the_tool_prints(command, expected):
    args = shlex.split(command)
    assert args[0] == "pipebounds" and not {"|", ">", "<"} & set(args), command
    proc = subprocess.run([sys.executable, "-m", "pipebounds", *args[1:]], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert matches(expected, proc.stdout), f"README says:\n{expected}\n\nthe tool prints:\n{proc.stdout}"


def test_the_comparison_can_fail():
    assert matches("a ... c", "a b c") and not matches("a ... c", "a b d")
    assert not matches("lower bound 36", "lower bound 37")
