"""Schedules: the model in code (MODEL.md), orders documents, validator and ASAP simulator.

Main names: :class:`Instance`, :class:`Op`, :class:`Schedule`, :func:`simulate`,
:func:`validate`, :func:`schedule_from_document`, :func:`document_from_schedule`,
:class:`MemoryModel` (memory in bytes); :class:`PipeboundsError`, the root of every exception the
toolkit raises on purpose (:mod:`schedules.errors`).
"""

from .errors import InputError, PipeboundsError
from .instance import Instance, InstanceError
from .memory import MemoryModel, MemoryModelError
from .io import (DocumentError, document_from_schedule, read_schedule, schedule_from_document,
                 write_schedule)
from .ops import KINDS, Op, OpError
from .schedule import Schedule, ScheduleError
from .simulate import SimulationResult, is_valid, simulate, validate
from .validate import Violation

__all__ = [
    "Instance", "InstanceError", "Op", "OpError", "KINDS", "Schedule", "ScheduleError",
    "SimulationResult", "simulate", "Violation", "validate", "is_valid", "DocumentError",
    "schedule_from_document", "document_from_schedule", "read_schedule", "write_schedule",
    "MemoryModel", "MemoryModelError", "PipeboundsError", "InputError",
]
