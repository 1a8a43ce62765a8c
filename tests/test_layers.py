"""The layers of GUIDE.md, as data, checked on the source: every module of the package is parsed
with ``ast`` (imports inside functions count too), and the test fails when a module imports
from a layer it may not use, or when two modules import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("schedules", "bounds", "pipebounds", "proofs_checks")

# layer name -> module-name prefixes (a module belongs to the layer of its longest prefix)
LAYERS: dict[str, tuple[str, ...]] = {
    "model": ("schedules.instance", "schedules.ops", "schedules.schedule", "schedules.io",
              "schedules.limits", "schedules.numbers", "schedules.memory",
              "schedules.progress"),
    "simulate": ("schedules.compiled", "schedules.simulate", "schedules.validate", "schedules"),
    "generators": ("schedules.generators", "schedules.remat", "schedules.remat_optimal",
                   "schedules.gantt", "schedules.gantt_html",
                   "schedules.interop"),
    "bounds": ("bounds",),
    "solvers": ("schedules.constructions", "schedules.search"),
    "certification": ("pipebounds.certify",),
    "top": ("pipebounds", "proofs_checks"),
}

# layer -> the layers its modules may import (GUIDE.md: imports point one way; bounds are
# formulas and import only the model)
MAY_IMPORT: dict[str, set[str]] = {
    "model": {"model"},
    "simulate": {"model", "simulate"},
    "generators": {"model", "simulate", "generators"},
    "bounds": {"model", "bounds"},
    "solvers": {"model", "simulate", "generators", "bounds", "solvers"},
    "certification": {"model", "simulate", "generators", "bounds", "solvers", "certification"},
    "top": set(LAYERS),
}


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("")
            name = ".".join(rel.parts)
            out[name.removesuffix(".__init__")] = path
    return out


def layer_of(name: str) -> str:
    best, layer = -1, None
    for lay, prefixes in LAYERS.items():
        for pre in prefixes:
            if (name == pre or name.startswith(pre + ".")) and len(pre) > best:
                best, layer = len(pre), lay
    assert layer is not None, f"module {name} is in no layer: add it to LAYERS"
    return layer


def imports(name: str, path: Path, known: dict) -> set[str]:
    """The package modules ``name`` imports (``from x import y`` counts ``x`` and, when ``y``
    is a module, ``x.y``; relative imports resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            # "from . import x" names the module x, not the package
            targets = subs if subs and len(subs) == len(node.names) else [base] + subs
        else:
            continue
        for t in targets:
            while t and t not in known:  # "import a.b.c" of a deeper name: its module
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


MODULES = modules()
EDGES = {name: imports(name, path, MODULES) for name, path in MODULES.items()}


def test_every_module_is_in_a_layer():
    for name in MODULES:
        layer_of(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    lay = layer_of(name)
    bad = sorted(t for t in EDGES[name] if layer_of(t) not in MAY_IMPORT[lay])
    assert not bad, f"{name} ({lay}) imports from {[(t, layer_of(t)) for t in bad]}"


def test_no_two_modules_import_each_other():
    pairs = sorted((a, b) for a, ts in EDGES.items() for b in ts
                   if a < b and a in EDGES.get(b, ()))
    assert not pairs, f"import circles: {pairs}"


def test_the_check_can_fail(tmp_path):
    """A planted upward import and a planted circle are found."""
    (tmp_path / "bounds").mkdir()
    up = tmp_path / "bounds" / "x.py"
    up.write_text("def f():\n    from schedules.constructions import optimal_schedule\n")
    known = {"bounds.x": up, "schedules.constructions": up}
    assert imports("bounds.x", up, known) == {"schedules.constructions"}
    assert layer_of("schedules.constructions") not in MAY_IMPORT[layer_of("bounds.x")]
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from .b import g\n")
    b.write_text("def g():\n    from . import a\n")
    known = {"schedules.a": a, "schedules.b": b}
    assert imports("schedules.a", a, known) == {"schedules.b"}
    assert imports("schedules.b", b, known) == {"schedules.a"}
