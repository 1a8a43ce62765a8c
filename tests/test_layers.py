"""The layers of docs/architecture.md, as data, checked on the source: every module of the package is parsed
with ``ast`` (imports inside functions count too), and the test fails when a module imports
from a layer it may not use, or when two modules import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("schedules", "bounds", "pipebounds", "proofs_checks")

# The layers are folders (docs/architecture.md), lowest first. A module belongs to the layer of
# its longest prefix. Inside ``schedules/`` the model files sit below the simulator, and the
# simulator below the generators and remat (one package, three floors).
LAYERS: dict[str, tuple[str, ...]] = {
    # schedules/: the schedule side (model, simulate, generators, remat, document formats)
    "schedules.model": ("schedules.instance", "schedules.ops", "schedules.schedule", "schedules.io",
                        "schedules.limits", "schedules.numbers", "schedules.json_numbers", "schedules.brief",
                        "schedules.memory",
                        "schedules.progress", "schedules.errors"),
    "schedules.simulate": ("schedules.compiled", "schedules.simulate", "schedules.validate",
                           "schedules.comms", "schedules"),
    "schedules.generators": ("schedules.generators", "schedules.remat", "schedules.remat_optimal",
                             "schedules.remat_policies",
                             "schedules.interop"),
    # bounds/: the formulas and the one theorem registry (functions of the instance)
    "bounds": ("bounds",),
    # pipebounds/: exact engines, then certification, then services, then the CLI and the face
    "pipebounds.engines": ("pipebounds.constructions", "pipebounds.search"),
    "pipebounds.certify": ("pipebounds.certify",),
    "pipebounds.services": ("pipebounds.services", "pipebounds.sweep", "pipebounds.viz",
                            "pipebounds.torch", "pipebounds.synthesis"),
    "pipebounds.cli": ("pipebounds.cli", "pipebounds.__main__"),
    "pipebounds": ("pipebounds",),
    # proofs_checks/: the machine checks, on top of everything they check
    "proofs_checks": ("proofs_checks",),
}

ORDER = list(LAYERS)
"""Lowest first: a layer may import itself and every layer before it, never one after it."""

MAY_IMPORT: dict[str, set[str]] = {lay: set(ORDER[:i + 1]) for i, lay in enumerate(ORDER)}
# the public face and the CLI are alternatives at the top: the CLI may read the face's version
MAY_IMPORT["pipebounds.cli"].add("pipebounds")


def test_layers_are_folders():
    """Each layer outside schedules/ is a package folder (or a module) of its own."""
    for lay, prefixes in LAYERS.items():
        for pre in prefixes:
            parts = pre.split(".")
            path = ROOT.joinpath(*parts)
            assert path.is_dir() or path.with_suffix(".py").is_file() or pre in (
                "pipebounds.torch", "pipebounds.synthesis", "schedules.errors"), pre


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
    up.write_text("def f():\n    from pipebounds.constructions import optimal_schedule\n")
    known = {"bounds.x": up, "pipebounds.constructions": up}
    assert imports("bounds.x", up, known) == {"pipebounds.constructions"}
    assert layer_of("pipebounds.constructions") not in MAY_IMPORT[layer_of("bounds.x")]
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from .b import g\n")
    b.write_text("def g():\n    from . import a\n")
    known = {"schedules.a": a, "schedules.b": b}
    assert imports("schedules.a", a, known) == {"schedules.b"}
    assert imports("schedules.b", b, known) == {"schedules.a"}
