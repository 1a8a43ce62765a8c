"""A synthesized first incumbent for the exact engines: what ``pipebounds solve --synthesize S``
and the sweep's ``solve`` task (option ``synthesize``) hand to :func:`pipebounds.search.solve`.
"""

from __future__ import annotations

from typing import Optional

from schedules import Instance, Schedule

MIN_SECONDS = 0.05
"""Below this a synthesis is not started (it could not even build its first schedule)."""


def synthesized_incumbent(inst: Instance, seconds: float, channel=None) -> Optional[Schedule]:
    """The schedule of :func:`pipebounds.synthesis.synthesize` run for ``seconds`` without its
    exact phase (the engines are the exact part), or None: ``seconds`` below
    :data:`MIN_SECONDS`, no memory limit (the known schedules are optimal already), or an
    instance with a feature the synthesis refuses. ``channel``: the synthesis's channel (its
    stop test is honoured)."""
    if seconds <= MIN_SECONDS or (inst.K is None and inst.memory is None):
        return None
    from pipebounds.synthesis import SynthesisError, synthesize

    kwargs = {} if channel is None else {"channel": channel}
    try:
        return synthesize(inst, time_limit=seconds, exact=False, **kwargs).schedule
    except SynthesisError:
        return None
