"""Importers of schedules written by other tools (docs/interop.md).

:mod:`schedules.interop.torch`: torch.distributed.pipelining ``pipeline_order`` mappings and
schedule objects (works without torch for the string form).
"""

from .torch import InteropError, from_pipeline_order, from_torch_schedule

__all__ = ["InteropError", "from_pipeline_order", "from_torch_schedule"]
