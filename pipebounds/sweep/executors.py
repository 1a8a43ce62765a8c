"""Executors: run ``fn(item)`` over items and yield ``(item, outcome)`` as each finishes.

- ``inprocess``: one after another in this process (debugging, tiny sweeps);
- ``pool``: a local process pool (:class:`concurrent.futures.ProcessPoolExecutor`, the default;
  ``workers`` processes, at most ``2 * workers`` items in flight so a long sweep starts at once
  and an interrupt loses little);
- ``dask``: an existing Dask distributed cluster, given by its scheduler address
  (``tcp://host:8786``) or an in-process ``LocalCluster`` for tests; needs the ``cluster`` extra.
  Dask rather than Ray: its ``Client`` connects to a scheduler started with one command
  (``dask scheduler`` / ``dask worker ADDRESS``) or by a job queue (dask-jobqueue on SLURM/PBS),
  it ships as plain Python wheels, and ``as_completed`` is all this needs (docs/sweep.md).

An outcome is ``("ok", rows, seconds)`` or ``("error", message, seconds)``: a failing item never
stops a sweep.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import time
from typing import Callable, Iterable, Iterator, Optional

from .grid import Item
from .tasks import run_task

Outcome = tuple[str, object, float]

CONNECT_TIMEOUT = 5
"""Seconds to wait for a Dask scheduler before giving up."""


def run_item(item: Item) -> Outcome:
    """Run one item, turning any exception into an ``error`` outcome (worker side)."""
    t0 = time.perf_counter()
    try:
        rows = run_task(item.task, item.params)
        return "ok", rows, time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - a failing item must not stop the sweep
        return "error", f"{type(exc).__name__}: {exc}", time.perf_counter() - t0


def inprocess(items: Iterable[Item], fn: Callable = run_item) -> Iterator[tuple[Item, Outcome]]:
    for item in items:
        yield item, fn(item)


def pool(items: Iterable[Item], fn: Callable = run_item, workers: int = 2
         ) -> Iterator[tuple[Item, Outcome]]:
    it = iter(items)
    with cf.ProcessPoolExecutor(max_workers=workers, initializer=_worker_ignores_sigint) as ex:
        pending: dict = {}

        def fill() -> None:
            while len(pending) < 2 * workers:
                item = next(it, None)
                if item is None:
                    return
                pending[ex.submit(fn, item)] = item

        fill()
        try:
            while pending:
                done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    item = pending.pop(fut)
                    try:
                        yield item, fut.result()
                    except Exception as exc:  # noqa: BLE001 - a worker that died
                        yield item, ("error", f"worker failed: {type(exc).__name__}: {exc}", 0.0)
                fill()
        except BaseException:  # an interrupt or a failure here: no worker outlives the sweep
            _terminate(ex)
            raise
        finally:
            for fut in pending:
                fut.cancel()


def _worker_ignores_sigint() -> None:
    """Pool workers leave SIGINT (Ctrl-C reaches the whole process group) to their parent,
    which stops them (:func:`_terminate`)."""
    from schedules.stopping import detach_child

    detach_child()


def _terminate(ex: cf.ProcessPoolExecutor) -> None:
    """End the pool's worker processes now (running items are lost; stored ones are kept)."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    for p in procs:
        with contextlib.suppress(Exception):
            p.terminate()
    for p in procs:
        with contextlib.suppress(Exception):
            p.join(2)
    ex.shutdown(wait=False, cancel_futures=True)


@contextlib.contextmanager
def dask_client(address: object) -> Iterator:
    """A ``distributed.Client`` for ``address`` (a scheduler address, or a Client / cluster
    given by the caller, which stays open); needs the ``cluster`` extra."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - depends on the extra
        raise RuntimeError("the dask executor needs the 'cluster' extra: "
                           "pip install 'pipebounds[cluster]'") from None
    own = not isinstance(address, Client)
    if own:
        try:  # a refused or unreachable address: one line, within the connect timeout
            client = Client(address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise RuntimeError(f"cannot reach the Dask scheduler {str(address)[:100]}: "
                               f"{str(exc)[:200]}") from None
        except MemoryError:  # something answered, not in Dask's protocol (a huge frame size)
            raise RuntimeError(f"cannot reach the Dask scheduler {str(address)[:100]}: the "
                               f"peer does not speak Dask's protocol") from None
    else:
        client = address
    try:
        yield client
    finally:
        if own:
            client.close()


def dask(items: Iterable[Item], fn: Callable = run_item, address: Optional[object] = None
         ) -> Iterator[tuple[Item, Outcome]]:
    """``address``: a scheduler address string, or a ``distributed.Client`` / ``LocalCluster``."""
    with dask_client(address) as client:
        from distributed import as_completed

        futures = {client.submit(fn, item, key=f"pipebounds-{item.key}", pure=False): item
                   for item in items}
        for fut in as_completed(futures):
            item = futures[fut]
            try:
                yield item, fut.result()
            except Exception as exc:  # noqa: BLE001
                yield item, ("error", f"worker failed: {type(exc).__name__}: {exc}", 0.0)


POOL_CALLS: list[dict] = []
"""One entry per :func:`parallel_map` call in this process: ``items``, the sum and the largest
of the items' own run times (``item_seconds``, ``longest``; measured where they ran) and the
call's ``wall`` time. The machine checks read the calls made during a check to project its run
time on N workers (docs/sweep.md)."""


class _Timed:
    """``fn`` returning ``(value, seconds it took)`` (a class, so pools can pickle it)."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def __call__(self, a):
        t0 = time.perf_counter()
        value = self.fn(a)
        return value, time.perf_counter() - t0


def parallel_map(fn: Callable, args: list, workers: int = 1, address: Optional[object] = None
                 ) -> list:
    """``[fn(a) for a in args]`` on the sweep's executors, in order: in-process for one worker,
    a local process pool for more, a Dask cluster when ``address`` is given (what
    ``python -m proofs_checks --workers N [--scheduler ADDRESS]`` runs its exhaustive checks
    on). Exceptions propagate: a check that crashes is a failed check. Appends to
    :data:`POOL_CALLS`."""
    t0 = time.perf_counter()
    timed = _Timed(fn)
    if address is not None:
        with dask_client(address) as client:
            pairs = client.gather(client.map(timed, args, pure=False))
    elif workers <= 1 or len(args) <= 1:
        pairs = [timed(a) for a in args]
    else:
        # one item per task: the solves of a check differ in cost by orders of magnitude (the
        # largest instances come last), so chunks would leave one worker with all the hard ones
        with cf.ProcessPoolExecutor(max_workers=workers) as ex:
            pairs = list(ex.map(timed, args, chunksize=1))
    times = [s for _, s in pairs]
    POOL_CALLS.append({"items": len(times), "item_seconds": sum(times),
                       "longest": max(times, default=0.0), "wall": time.perf_counter() - t0})
    return [v for v, _ in pairs]


EXECUTORS = ("inprocess", "pool", "dask")


def make_executor(name: str = "pool", workers: int = 2, address: Optional[object] = None):
    """The executor ``name`` as a function ``items -> iterator of (item, outcome)``."""
    if name == "inprocess":
        return inprocess
    if name == "pool":
        return lambda items, fn=run_item: pool(items, fn, workers)
    if name == "dask":
        return lambda items, fn=run_item: dask(items, fn, address)
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {name!r}")
