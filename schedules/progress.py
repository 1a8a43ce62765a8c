"""Progress display for long runs (tqdm, on stderr), one mechanism for the library and the CLI.

:func:`progress_bar` returns a tqdm bar when progress is wanted, else a silent stand-in with the
same ``update``/``set_postfix_str``/``write``/``close`` methods, so callers never branch.
``enabled``: True (always), False (never, e.g. ``--quiet``), or None: only when stderr is a
terminal (so pipes, CI logs and tests stay clean).

A library function that can run long takes ``progress``: None/False (silent), True (a tqdm bar
when stderr is a terminal), :data:`ALWAYS` (a bar even when stderr is not a terminal: the CLI's
``--progress``), or a callable ``progress(done, total)`` called as work finishes. Work made of
unequal items counts each by its size (:func:`instance_weight`), so the bar's rate and ETA are
per unit of work, not per item.

>>> bar = progress_bar(3, "demo", enabled=False)
>>> for _ in range(3): bar.update()
>>> bar.n
3
"""

from __future__ import annotations

import sys
from typing import Callable, Optional, Union

Progress = Union[None, bool, str, Callable[[int, int], None]]

ALWAYS = "always"
"""``progress=ALWAYS``: show the bar even when stderr is not a terminal (``--progress``)."""


def instance_weight(inst) -> int:
    """The size of one unit of work on ``inst``: its ``P m v`` (stage, microbatch) pairs, what
    simulating, fitting or bounding it scales with. ``inst``: an Instance or an instance object
    (a dict with ``P``, ``m`` and optionally ``v``); 1 when it has no size."""
    get = inst.get if isinstance(inst, dict) else (lambda k, d=None: getattr(inst, k, d))
    try:
        return max(1, int(get("P", 1)) * int(get("m", 1)) * int(get("v", 1) or 1))
    except (TypeError, ValueError):
        return 1


class _Silent:
    def __init__(self, total: Optional[int]):
        self.total, self.n = total, 0

    def update(self, k: int = 1) -> None:
        self.n += k

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        pass

    def set_description(self, text: str = "", refresh: bool = True) -> None:
        pass

    def clear(self) -> None:
        pass

    def write(self, text: str) -> None:
        print(text, file=sys.stderr)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Callback(_Silent):
    def __init__(self, total: Optional[int], callback: Callable[[int, int], None]):
        super().__init__(total)
        self._callback = callback

    def update(self, k: int = 1) -> None:
        super().update(k)
        self._callback(self.n, self.total)


def wanted(enabled: Optional[bool]) -> bool:
    """Whether to show progress: ``enabled``, or (None) whether stderr is a terminal."""
    if enabled is None:
        try:
            return sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False
    return bool(enabled)


def progress_bar(total: Optional[int], desc: str, enabled: Optional[bool] = None, unit: str = "it"):
    """A tqdm bar on stderr if :func:`wanted`, else a silent stand-in."""
    if not wanted(enabled):
        return _Silent(total)
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                dynamic_ncols=True)


def progress_for(progress: Progress, total: Optional[int], desc: str):
    """The bar of a library call's ``progress`` argument (see the module docstring)."""
    if callable(progress):
        return _Callback(total, progress)
    if progress == ALWAYS:
        return progress_bar(total, desc, enabled=True)
    return progress_bar(total, desc, enabled=None if progress else False)
