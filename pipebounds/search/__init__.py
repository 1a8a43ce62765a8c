"""Exact schedulers (docs/search.md): :func:`solve` returns an optimal schedule and its status.

Modules, bottom up: :mod:`.model` (the integer form of an instance), :mod:`.result`
(:class:`SolveResult`), :mod:`.proof` (what a status may claim), :mod:`.channel` (progress,
stop, shared incumbent and bound), :mod:`.incumbent` (known schedules as upper bounds),
:mod:`.symmetry` (the microbatch symmetry rules); the backends :mod:`.bnb` + :mod:`.deepening`
(branch and bound), :mod:`.cpsat` (OR-tools CP-SAT) and :mod:`.portfolio` (both in processes);
:mod:`.solve` dispatches through :mod:`.backend` (one options object, one protocol, one
registry of backends). :mod:`.relaxation` is not a backend: it computes the single-GPU
relaxation, a lower bound (docs/theory.md A.7).
"""

from .backend import BACKENDS, Backend, SolveOptions
from .channel import Channel, Progress
from .result import STATUSES, SolveResult
from .solve import ENGINES, solve

__all__ = ["solve", "SolveResult", "STATUSES", "ENGINES", "Channel", "Progress", "SolveOptions",
           "Backend", "BACKENDS"]
