"""Running schedules in torch (docs/interop.md): :func:`run_schedule` executes an orders document
on a ``torch.distributed`` group with recomputation, split backward and measured memory;
:mod:`.models` has the built-in small models, :mod:`.launch` spawns local gloo processes and
checks gradients against a sequential reference (``pipebounds execute``), :mod:`.profile`
measures per-stage times and activation bytes (``pipebounds profile``).

This package is the only one that imports torch; importing it without torch raises
ImportError.
"""

from __future__ import annotations

from .run import RunError, run_schedule

__all__ = ["run_schedule", "RunError"]
