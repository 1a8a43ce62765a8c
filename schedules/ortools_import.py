"""OR-tools' CP-SAT module without importing pandas at start-up: :func:`cp_model`.

``ortools.sat.python.cp_model`` (9.x) imports pandas at its top, for its ``*_series`` methods
(``new_int_var_series``, ``CpSolver.values`` and the like) and for the type annotations of those
methods, evaluated when the module is executed. Nothing in this project calls them, and pandas
is about half a second of CPU per process (more than the rest of ``cp_model``), paid by every
``pipebounds solve``, ``remat`` and ``synthesize`` that builds a model.

:func:`cp_model` imports the module with a placeholder named ``pandas`` in ``sys.modules`` for
the duration of that import only (its two classes ``Index`` and ``Series`` are what the module
reads at import time, in annotations and one ``Union``), removes the placeholder at once, and
then points the module's global ``pd`` at :data:`LAZY_PANDAS`, which imports the real pandas on
first use. So every feature of ``cp_model`` still works, the pandas ones included
(``tests/test_ortools_import.py`` runs one), and pandas is imported only by code that uses it.
When pandas is already imported, or the placeholder would not be honest (``cp_model`` already
imported by someone else), it is the plain import.
"""

from __future__ import annotations

import sys
import types

_NAME = "ortools.sat.python.cp_model"


class _LazyPandas(types.ModuleType):
    """Stands for the ``pandas`` module: the first attribute read imports it."""

    def __getattr__(self, name: str):
        import pandas

        return getattr(pandas, name)


LAZY_PANDAS = _LazyPandas("pandas")
"""What ``cp_model.pd`` is after :func:`cp_model` deferred the import."""


def cp_model():
    """The module ``ortools.sat.python.cp_model`` (see the module docstring); ImportError when
    OR-tools is not installed."""
    mod = sys.modules.get(_NAME)
    if mod is not None:
        return mod
    if "pandas" in sys.modules:
        from ortools.sat.python import cp_model as mod
        return mod
    placeholder = types.ModuleType("pandas")
    placeholder.__dict__.update(Index=type("Index", (), {}), Series=type("Series", (), {}))
    sys.modules["pandas"] = placeholder
    try:
        from ortools.sat.python import cp_model as mod
    finally:
        if sys.modules.get("pandas") is placeholder:
            del sys.modules["pandas"]
    if getattr(mod, "pd", None) is placeholder:
        mod.pd = LAZY_PANDAS
    return mod
