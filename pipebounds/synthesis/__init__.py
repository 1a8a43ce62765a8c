"""Synthesis of schedules at the sizes people train, with a certified gap (docs/synthesis.md):
:func:`synthesize` returns a :class:`SynthesisResult`."""

from .result import SynthesisResult
from .synthesize import OBJECTIVES, SynthesisError, synthesize

__all__ = ["OBJECTIVES", "SynthesisError", "SynthesisResult", "synthesize"]
