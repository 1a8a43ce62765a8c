"""Output files of the CLI: checked before the work starts, written atomically.

:func:`check_output_path` fails fast (exit 2, one line) on a path that cannot be written: a missing
or read-only directory, a path that is a directory (or, for ``want_dir``, a file). :func:`atomic_output`
yields a temporary path beside the target and renames it into place only when the writer
succeeded, so a failed or interrupted write leaves no partial file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Iterator

from .common import CLIError


def check_output_path(path: str, want_dir: bool = False) -> None:
    """Raise :class:`CLIError` unless ``path`` can be written (a directory when ``want_dir``)."""
    if not path:
        raise CLIError("output path is empty")
    if "\0" in path:
        raise CLIError(f"output path {path[:80]!r} holds a NUL character")
    for part in os.path.abspath(path).split(os.sep):
        if len(os.fsencode(part)) > 255:  # NAME_MAX of every common file system
            raise CLIError(f"cannot write {path[:80]!r}...: a file name of "
                           f"{len(os.fsencode(part))} bytes is too long (at most 255)")
    if want_dir:
        if os.path.exists(path) and not os.path.isdir(path):
            raise CLIError(f"output directory {path!r} exists and is not a directory")
        parent = path if os.path.isdir(path) else (os.path.dirname(os.path.abspath(path)) or ".")
        while not os.path.exists(parent):  # created later: check the nearest existing ancestor
            parent = os.path.dirname(parent)
    else:
        if os.path.isdir(path):
            raise CLIError(f"output {path!r} is a directory, expected a file path")
        if os.path.exists(path) and not os.path.isfile(os.path.realpath(path)):
            # atomic_output renames over the target: never over a device such as /dev/null
            raise CLIError(f"output {path!r} exists and is not a regular file")
        parent = os.path.dirname(os.path.abspath(path)) or "."
        if not os.path.isdir(parent):
            raise CLIError(f"cannot write {path!r}: directory {parent!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CLIError(f"cannot write {path!r}: directory {parent!r} is not writable")
    try:  # the permission bits do not tell for root, read-only mounts or /proc: try it
        with tempfile.TemporaryFile(prefix=".pipebounds-probe-", dir=parent):
            pass
    except OSError as exc:
        raise CLIError(f"cannot write {path!r}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[str]:
    """Yield a temporary file path in the target's directory; rename it to ``path`` on success.

    The temporary keeps the target's extension (writers such as matplotlib choose the format
    from it). On any exception the temporary is removed and the target is left untouched.
    """
    directory = os.path.dirname(os.path.abspath(path))
    suffix = os.path.splitext(path)[1]
    fd, tmp = tempfile.mkstemp(prefix=".pipebounds-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make every output private
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
