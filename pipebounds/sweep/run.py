"""Run a sweep: items -> executor -> store, with progress and a summary."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable, Optional, Sequence

from schedules.progress import instance_weight, progress_bar

from .executors import run_item
from .grid import Item
from .store import Store
from .tasks import ROW_VERSIONS


@dataclass(frozen=True)
class SweepSummary:
    """What a run did: items in the grid, skipped (already stored), run now, failed, seconds."""

    items: int
    skipped: int
    ran: int
    failed: int
    seconds: float
    store: str
    rows: int
    stale: int = 0
    """Stored items of another code version (:data:`~.tasks.ROW_VERSIONS`) run again."""

    def to_dict(self) -> dict:
        return asdict(self)


def run_sweep(items: Sequence[Item], store: Store, executor: Callable, resume: bool = False,
              progress: Optional[bool] = None, fn: Callable = run_item) -> SweepSummary:
    """Run every item not yet in ``store`` (all of them unless ``resume``) through ``executor``.

    Without ``resume`` a store that already holds any of these items is refused (ValueError), so
    results of different code are never mixed by accident; with it, an item whose stored rows
    carry another version than the current one (:data:`~.tasks.ROW_VERSIONS`, e.g. the
    ``synthesize`` task's ``synthesis_version``) runs again and replaces them. Each result
    is stored as it arrives.
    ``progress``: a tqdm bar on stderr (None: only when stderr is a terminal), counting each
    item by its instance's size (:func:`schedules.progress.instance_weight`).
    """
    done = store.done_keys()
    stale: set = set()
    for task in {it.task for it in items} & set(ROW_VERSIONS):
        field, current = ROW_VERSIONS[task]
        stale |= store.stale_keys(field, current(), task)
    done -= stale  # rows of another version are recomputed, never mixed in
    todo = [it for it in items if it.key not in done]
    if not resume and len(todo) < len(items):
        raise ValueError(f"store {store.path} already holds {len(items) - len(todo)} of these "
                         "items; pass resume=True (--resume) to skip them, or use a new store")
    # the bar counts work, not items: each item weighs its instance's size (P m v), so the
    # rate and the ETA hold on a grid whose items differ a thousandfold (the atlas)
    weight = {it.key: instance_weight(it.params.get("instance", {})) for it in todo}
    bar = progress_bar(sum(weight.values()), "sweep", enabled=progress if todo else False,
                       unit="pair")
    t0 = time.perf_counter()
    ran = failed = rows = 0
    try:
        for item, (status, payload, seconds) in executor(todo, fn):
            store.add(item.key, item.task, item.params, status, payload, round(seconds, 4))
            ran += 1
            if status == "ok":
                rows += len(payload)  # type: ignore[arg-type]
            else:
                failed += 1
            bar.update(weight.get(item.key, 1))
            bar.set_postfix_str(f"items={ran}/{len(todo)} failed={failed}", refresh=False)
    finally:
        bar.close()
    return SweepSummary(len(items), len(items) - len(todo), ran, failed,
                        round(time.perf_counter() - t0, 3), str(store.path), rows,
                        sum(it.key in stale for it in todo))
