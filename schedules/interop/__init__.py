"""Schedules written by other tools, read and written (docs/interop.md).

:mod:`schedules.interop.torch`: torch.distributed.pipelining ``pipeline_order`` mappings, the
list-of-lists of ``get_schedule_ops``, its CSV files and schedule objects (works without torch for
the string and CSV forms), and the way back (``compute_only`` CSV / pipeline order). Chrome
trace JSON (Perfetto) is a picture of a timing: :mod:`pipebounds.viz.chrome_trace`.
"""

from .torch import (InteropError, from_pipeline_order, from_torch_csv, from_torch_schedule,
                    instance_from_pipeline_order, to_pipeline_order, to_torch_csv)

__all__ = ["InteropError", "from_pipeline_order", "from_torch_schedule", "from_torch_csv",
           "instance_from_pipeline_order", "to_pipeline_order", "to_torch_csv"]
