"""Generators of the known pipeline schedules (docs/schedules.md), one module per family.

:data:`GENERATORS` maps each CLI name to a :class:`Generator`: the function
``Instance -> Schedule``, a one-line summary and its :class:`Requires` (waves, placement,
split backward). :func:`generate` checks the requirements with a clear
:class:`GeneratorError`, runs the generator (which ignores the instance's ``K`` and builds its
natural schedule), then, when ``K`` is set, fits the schedule to ``K`` with
:func:`schedules.remat.fit_memory`.

>>> from schedules import Instance, simulate
>>> sorted(GENERATORS)[:3]
['1f1b', 'dualpipe', 'dualpipev']
>>> r = simulate(generate("1f1b", Instance(P=4, m=8, K=2)))
>>> r.valid, max(r.peak_memory)
(True, 2)
>>> generate("zbv", Instance(P=4, m=8))
Traceback (most recent call last):
...
schedules.generators.common.GeneratorError: zbv: needs v=2 (got v=1); needs split backward durations (--b-input and --b-weight)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..instance import Instance, require
from ..schedule import Schedule
from .common import GeneratorError, has_placement
from .dualpipe import dualpipe
from .dualpipev import dualpipev, dualpipev_fb
from .gpipe import gpipe
from .hanayo import hanayo
from .interleaved import interleaved, interleaved_short
from .looped_bfs import looped_bfs
from .one_f_one_b import one_f_one_b
from .vshape_controllable import v_half, v_min
from .zb_auto import zb_2p
from .zbv import zbv
from .zero_bubble import interleaved_zb, zb_h1, zb_h2


@dataclass(frozen=True)
class Requires:
    """What an instance must have: ``v_min <= v <= v_max`` (None: no maximum), a placement
    (None: any), split durations (True: needed; False: fused form, works on both) and its
    ``directions`` (MODEL.md, *Directions*: 1, or 2 for the bidirectional DualPipe)."""

    v_min: int = 1
    v_max: Optional[int] = None
    placement: Optional[str] = None
    split: bool = False
    directions: int = 1

    def problems(self, inst: Instance) -> list[str]:
        """What ``inst`` lacks, as short phrases (empty when it satisfies everything)."""
        out = []
        if inst.directions != self.directions:
            out.append(f"needs directions={self.directions} (--directions {self.directions})"
                       if self.directions != 1 else
                       "does not support directions=2 (only dualpipe is bidirectional)")
        if self.v_max == self.v_min and inst.v != self.v_min:
            out.append(f"needs v={self.v_min} (got v={inst.v})")
        elif inst.v < self.v_min:
            out.append(f"needs v >= {self.v_min} (got v={inst.v})")
        elif self.v_max is not None and inst.v > self.v_max:
            out.append(f"needs v <= {self.v_max} (got v={inst.v})")
        if self.placement and not has_placement(inst, self.placement):
            out.append(f"needs the {self.placement} placement (got {inst.placement})")
        if self.split and not inst.split:
            out.append("needs split backward durations (--b-input and --b-weight)")
        return out

    def describe(self) -> str:
        parts = []
        if self.v_max == self.v_min:
            parts.append(f"v={self.v_min}")
        else:
            parts.append(f"v>={self.v_min}" + (f", v<={self.v_max}" if self.v_max else ""))
        if self.placement:
            parts.append(self.placement)
        parts.append("split" if self.split else "fused")
        if self.directions != 1:
            parts.append(f"directions={self.directions}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Generator:
    """One schedule family: CLI ``name``, ``function(inst) -> Schedule``, ``summary``, ``requires``."""

    name: str
    function: Callable[[Instance], Schedule]
    summary: str
    requires: Requires = Requires()

    def __call__(self, inst: Instance) -> Schedule:
        return self.function(inst)


GENERATORS: dict[str, Generator] = {g.name: g for g in (
    Generator("gpipe", gpipe, "GPipe: all forwards, then all backwards (Huang et al. 2019)",
              Requires(1, 1)),
    Generator("1f1b", one_f_one_b, "1F1B / PipeDream-Flush (Narayanan et al. 2021)",
              Requires(1, 1)),
    Generator("interleaved", interleaved,
              "Megatron interleaved 1F1B over v looped stages (Narayanan et al. 2021)",
              Requires(2, None, "looped")),
    Generator("interleaved-short", interleaved_short,
              "Interleaved 1F1B with 1F1B's warm-up (v-1)g + P-1-p: interleaved's "
              "makespan at peak vP without communication delay (measured; slower with c > 0)",
              Requires(2, None, "looped")),
    Generator("looped-bfs", looped_bfs,
              "Looped breadth-first: stage by stage, all microbatches (Lamy-Poirier 2023)",
              Requires(1, None)),
    Generator("hanayo", hanayo, "Hanayo wave-like pipeline (Liu et al. 2023)",
              Requires(2, None, "vshape")),
    Generator("zb-h1", zb_h1, "ZB-H1 zero-bubble, 1F1B memory (Qi et al. 2024)",
              Requires(1, 1, split=True)),
    Generator("zb-h2", zb_h2, "ZB-H2 zero-bubble, 2P-1 memory (Qi et al. 2024)",
              Requires(1, 1, split=True)),
    Generator("zb-2p", zb_2p, "ZB-2p: the zero-bubble heuristic with 2P activations "
              "(Qi et al. 2024, the ZB2P of its repository)", Requires(1, 1, split=True)),
    Generator("interleaved-zb", interleaved_zb,
              "Interleaved zero-bubble: interleaved rounds, split backward, deferred W "
              "(torch's ScheduleInterleavedZeroBubble)", Requires(2, None, "looped", True)),
    Generator("zbv", zbv, "ZB-V zero-bubble V-shape (Qi et al. 2024)",
              Requires(2, 2, "vshape", True)),
    Generator("v-half", v_half, "V-Half, half of 1F1B's memory (Qi et al. 2024b)",
              Requires(2, 2, "vshape", True)),
    Generator("v-min", v_min, "V-Min, a third of 1F1B's memory (Qi et al. 2024b)",
              Requires(2, 2, "vshape", True)),
    Generator("dualpipev", dualpipev, "DualPipeV (DeepSeek 2024, torch's ScheduleDualPipeV)",
              Requires(2, 2, "vshape", True)),
    Generator("dualpipev-fb", dualpipev_fb,
              "DualPipeV with its overlapped chunks as F&B ops (torch's OVERLAP_F_B)",
              Requires(2, 2, "vshape", True)),
    Generator("dualpipe", dualpipe,
              "DualPipe, bidirectional: two copies, microbatches from both ends; F&B ops when "
              "d_FB is given (DeepSeek 2024)", Requires(1, 1, directions=2)),
)}


def generate(name: str, inst: Instance, progress=None, deadline=None) -> Schedule:
    """The schedule ``name`` of ``inst``, fitted to ``inst.K`` when it is set (``progress`` of the
    fit as in :func:`schedules.remat.fit_memory`; ``deadline`` ends the fit's polish early).

    Raises :class:`GeneratorError` for an unknown name or an instance the family cannot handle.
    """
    require(name, str, "name", "generate")
    require(inst, Instance, "inst", "generate")
    gen = GENERATORS.get(name)
    if gen is None:
        raise GeneratorError(f"unknown schedule {name!r}; known: {', '.join(GENERATORS)}")
    problems = gen.requires.problems(inst)
    if problems:
        raise GeneratorError(f"{name}: " + "; ".join(problems))
    natural = gen.function(inst.with_(K=None))
    if inst.K is None:
        return natural
    if inst.directions != 1:  # no rematerialization for two directions yet: only a K that fits
        from ..simulate import simulate

        peak = max(simulate(natural).peak_memory or [0])
        if peak <= inst.K:
            return natural.with_instance(inst)
        raise GeneratorError(f"{name}: fitting to K={inst.K} (rematerialization) does not "
                             f"support directions=2 yet; its schedule holds {peak} activations, "
                             f"generate it with K >= {peak} or without K")
    if natural.overlaps is not None:
        raise GeneratorError(f"{name}: fitting to K does not keep its F&B ops (MODEL.md third "
                             f"round); generate it without K, or fit the family without F&B ops")
    from ..remat import fit_memory

    return fit_memory(natural, inst.K, progress=progress, deadline=deadline)


__all__ = ["GENERATORS", "Generator", "GeneratorError", "Requires", "generate"]
