"""Machine checks of every theorem in docs/theory.md: ``python -m proofs_checks [--quick|--full]``.

Each module in :data:`CHECK_MODULES` registers its checks with
:func:`proofs_checks.registry.check`; :func:`run_checks` runs them and returns the table rows.
"""

from __future__ import annotations

import importlib
import time

from .registry import CHECKS, Check, CheckResult, Context, check

CHECK_MODULES: tuple[str, ...] = ("single_wave", "multi_wave", "table", "heterogeneous", "frontier",
                                  "backward_remat", "overlap", "directions")
"""Modules holding checks, imported by :func:`load_checks` (theory modules add themselves)."""


def load_checks() -> list[Check]:
    for name in CHECK_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    return list(CHECKS)


def selected_checks(select: str | None = None) -> list[Check]:
    """The registered checks whose theorem or name contains ``select`` (all without it)."""
    return [chk for chk in load_checks()
            if not select or select.lower() in (chk.theorem + " " + chk.name).lower()]


def run_checks(ctx: Context, select: str | None = None, on_result=None) -> list[dict]:
    """Run every registered check (those whose theorem or name contains ``select``);
    ``on_result(row)`` is called as each check finishes (progress, streaming output)."""
    from pipebounds.sweep.executors import POOL_CALLS

    rows = []
    for chk in selected_checks(select):
        first_call = len(POOL_CALLS)
        t0 = time.perf_counter()
        try:
            res = chk.func(ctx)
        except Exception as exc:  # a crashing check is a failed check, reported as such
            res = CheckResult(0, False, None, f"check raised {type(exc).__name__}: {exc}")
        # the part that ran through pipebounds.sweep.parallel_map (docs/sweep.md: projection)
        calls = POOL_CALLS[first_call:]
        parallel = {k: sum(c[k] for c in calls) for k in ("items", "item_seconds", "wall")}
        parallel["longest"] = max((c["longest"] for c in calls), default=0.0)
        rows.append({"theorem": chk.theorem, "kind": chk.kind, "range": chk.range_for(ctx.mode),
                     "instances": res.instances, "worst_gap": res.worst_gap, "ok": res.ok,
                     "detail": res.detail, "seconds": time.perf_counter() - t0,
                     "check": chk.name, "parallel": parallel})
        if on_result is not None:
            on_result(rows[-1])
    return rows


__all__ = ["CHECKS", "CHECK_MODULES", "Check", "CheckResult", "Context", "check", "load_checks",
           "run_checks", "selected_checks"]
