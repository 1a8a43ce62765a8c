"""Sweeps: a grid of instances x a task -> a results table (docs/sweep.md).

One mechanism serves ``pipebounds sweep``, ``python -m proofs_checks --full`` and the notebooks:

- :mod:`.grid` expands a grid file (products of instance fields, or an explicit list) into
  items, each with a stable key;
- :mod:`.tasks` holds the tasks (``bound``, ``solve``, ``generate``, ``best``, ``frontier``): pure
  functions ``params -> list of rows``;
- :mod:`.executors` runs a function over items in-process, on a local process pool, or on a
  Dask distributed cluster given by its address;
- :mod:`.store` keeps finished results in SQLite as they arrive (a killed run loses nothing
  finished; ``resume`` skips them) and loads the table into pandas;
- :mod:`.run` ties them together with progress (counts, rate, ETA).
"""

from .executors import EXECUTORS, make_executor, parallel_map
from .grid import Item, expand, load_grid
from .run import SweepSummary, run_sweep
from .store import Store, flat_rows, load_table
from .store import flat_rows as flat_rows_for_test
from .tasks import TASKS

__all__ = ["EXECUTORS", "Item", "Store", "SweepSummary", "TASKS", "expand", "flat_rows", "load_grid",
           "load_table", "make_executor", "parallel_map", "run_sweep", "flat_rows_for_test"]
