"""The sweep store: finished results in SQLite, written as they arrive.

One table ``results``: the item ``key`` (primary key), ``task``, ``params`` (JSON), ``status``
(``ok`` or ``error``), ``rows`` (JSON list) or ``error``, ``seconds``, and the versions the
result was computed with: ``code_version`` (package version and git commit) and
``theory_version`` (a hash of the bound formulas' sources, :func:`theory_version`). Each result
is committed on arrival (WAL journal), so a killed sweep loses nothing finished and
``--resume`` skips exactly what is stored without error (failed items run again).

:func:`load_table` flattens the store into a pandas DataFrame, one line per row, with the
instance fields as columns; exact numbers stay exact in ``*_exact`` columns (Fractions) next to
float columns, and rows whose makespan is below their lower bound are refused (a bug in a bound
or a schedule, never data).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import time
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional

from schedules.errors import PipeboundsError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY, task TEXT NOT NULL, params TEXT NOT NULL, status TEXT NOT NULL,
    rows TEXT, error TEXT, seconds REAL, code_version TEXT, theory_version TEXT,
    finished_at TEXT)
"""

COLUMNS = ("key", "task", "params", "status", "rows", "error", "seconds", "code_version",
           "theory_version", "finished_at")
"""The columns of ``results``, in order: a file whose table differs is another program's."""


class StoreError(PipeboundsError, ValueError):
    """A file that cannot be used as a results store; the message names it."""


NUMERIC = ("makespan", "lower_bound", "gap", "optimum")
"""Row fields holding exact numbers (ints or ``"p/q"`` strings)."""


@lru_cache(maxsize=1)
def theory_version() -> str:
    """A short hash of the sources of :mod:`bounds` (the formulas every bound comes from), their
    code only (:func:`code_text`: comments and docstrings left out)."""
    import bounds

    h = hashlib.sha256()
    for path in sorted(Path(bounds.__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(code_text(path.read_text()).encode())
    return h.hexdigest()[:12]


def _chars(line: str, byte_col: int) -> int:
    """The character column of UTF-8 byte column ``byte_col`` of ``line`` (ast's columns)."""
    return len(line.encode()[:byte_col].decode())


def code_text(source: str) -> str:
    r"""``source`` without its comments, docstrings and blank lines, trailing spaces cut: what
    the versions (:func:`theory_version`, :func:`synthesis_version`) hash, so that a mend of the
    documentation alone leaves the stored results current.

    A docstring is the string literal opening a module, class or function body (``ast``'s
    positions); it is replaced by ``""`` (the body stays a body). Comments are the tokenizer's
    ``COMMENT`` tokens. Everything else, including every other string, is kept as written.

    >>> code_text("def f(x):  # the identity\n    'Return x.'\n\n    return x\n")
    'def f(x):\n    ""\n    return x'
    """
    import ast
    import io
    import tokenize

    lines = source.splitlines(keepends=True)
    cuts: list[tuple[int, int, int, int]] = []
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            d = body[0]
            er = d.end_lineno or d.lineno
            cuts.append((d.lineno, _chars(lines[d.lineno - 1], d.col_offset), er,
                         _chars(lines[er - 1], d.end_col_offset or 0)))
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            (r, c), (er, ec) = tok.start, tok.end
            cuts.append((r, c, er, ec))
    # Apply from the end so earlier positions stay valid; a comment becomes nothing, a
    # docstring the empty string literal. (Positions: 1-based rows, 0-based columns in
    # characters of the line; ast counts columns in UTF-8 bytes, tokenize in characters.)
    for r, c, er, ec in sorted(cuts, reverse=True):
        head, tail = lines[r - 1][:c], lines[er - 1][ec:]
        is_comment = lines[r - 1][c:].startswith("#")
        lines[r - 1:er] = [head + ("" if is_comment else '""') + tail]
    kept = (line.rstrip() for line in "".join(lines).splitlines())
    return "\n".join(line for line in kept if line)


SYNTHESIS_SOURCES = ("pipebounds/synthesis", "schedules/generators", "schedules/remat.py",
                     "schedules/remat_optimal.py", "schedules/simulate.py")
"""What a synthesized schedule depends on beside the bound (:func:`theory_version`): the
synthesis, the list scheduler and the families, the rematerializations and the simulator."""


@lru_cache(maxsize=1)
def synthesis_version() -> str:
    """A short hash of the sources of :data:`SYNTHESIS_SOURCES` and of :mod:`bounds` (the
    synthesis reads the bound), their code only (:func:`code_text`): rows of the ``synthesize``
    task carry it, and a resumed sweep recomputes a row of another version instead of mixing
    it in (:meth:`Store.stale_keys`)."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256(theory_version().encode())
    for src in SYNTHESIS_SOURCES:
        path = root / src
        for f in (sorted(path.rglob("*.py")) if path.is_dir() else [path]):
            h.update(str(f.relative_to(root)).encode())
            h.update(code_text(f.read_text()).encode())
    return h.hexdigest()[:12]


@lru_cache(maxsize=1)
def code_version() -> str:
    """The package version, and the git commit when running from a checkout."""
    from importlib import metadata

    try:
        version = metadata.version("pipebounds")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, timeout=5, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{version}+{sha}" if sha else version


class Store:
    """A results store at ``path`` (created when missing).

    ``read_only=True`` opens an existing store for reading and writes nothing beside it: while
    no connection holds it (no ``-wal`` file) it is opened ``immutable`` (SQLite then creates
    no ``-shm``/``-wal`` files, which a read-only open of a WAL database otherwise leaves
    behind); while a sweep writes it, ``mode=ro`` beside the writer's files.
    """

    def __init__(self, path: str | Path, read_only: bool = False):
        self.path = Path(path)
        if read_only:
            if not self.path.is_file():
                raise FileNotFoundError(f"no results store at {self.path}")
            busy = Path(str(self.path) + "-wal").exists()
            uri = self.path.resolve().as_uri() + ("?mode=ro" if busy else "?mode=ro&immutable=1")
            self._db = sqlite3.connect(uri, uri=True, timeout=30)
            return
        try:
            self._db = sqlite3.connect(str(self.path), timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
            cols = tuple(r[1] for r in self._db.execute("PRAGMA table_info(results)"))
        except sqlite3.Error as exc:  # not an SQLite file, corrupt, locked, read-only
            raise StoreError(f"cannot open store {self.path}: {exc}") from None
        if cols != COLUMNS:
            self._db.close()
            raise StoreError(f"{self.path} is not a pipebounds results store (its 'results' "
                             f"table has the columns {', '.join(cols)[:120]})")

    def done_keys(self) -> set[str]:
        """Keys of the items finished without error (a failed item is run again on resume)."""
        return {k for (k,) in self._db.execute("SELECT key FROM results WHERE status = 'ok'")}

    def stale_keys(self, field: str, current: str, task: Optional[str] = None) -> set[str]:
        """Keys of the finished items (of ``task``) with a row whose ``field`` is not
        ``current`` (missing counts as another version): work of another code version, to be
        recomputed rather than mixed in."""
        query = "SELECT key, rows FROM results WHERE status = 'ok'"
        args: tuple = ()
        if task:
            query += " AND task = ?"
            args = (task,)
        out = set()
        for key, rows in self._db.execute(query, args):
            if any(r.get(field) != current for r in json.loads(rows or "[]")):
                out.add(key)
        return out

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def add(self, key: str, task: str, params: dict, status: str, payload, seconds: float) -> None:
        """Store one finished item (``payload``: rows when ``ok``, else the error message)."""
        rows, error = (json.dumps(payload), None) if status == "ok" else (None, str(payload))
        self._db.execute(
            "INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?,?,?,?)",
            (key, task, json.dumps(params, sort_keys=True), status, rows, error, seconds,
             code_version(), theory_version(), time.strftime("%Y-%m-%dT%H:%M:%S")))
        self._db.commit()

    def results(self, task: Optional[str] = None) -> Iterable[dict]:
        """Every stored result as a dict (``rows`` decoded)."""
        query = "SELECT key, task, params, status, rows, error, seconds, code_version, " \
                "theory_version FROM results"
        args: tuple = ()
        if task:
            query += " WHERE task = ?"
            args = (task,)
        for key, tsk, params, status, rows, error, secs, cv, tv in self._db.execute(query, args):
            yield {"key": key, "task": tsk, "params": json.loads(params), "status": status,
                   "rows": json.loads(rows) if rows else [], "error": error, "seconds": secs,
                   "code_version": cv, "theory_version": tv}

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _exact(x) -> Optional[Fraction]:
    return None if x is None else Fraction(x)


def flat_rows(path: str | Path, task: Optional[str] = None, check: bool = True) -> list[dict]:
    """The store as a list of flat dicts, one per row (see :func:`load_table`)."""
    out = []
    with Store(path, read_only=True) as store:
        for res in store.results(task):
            inst = res["params"].get("instance", {})
            base = {"key": res["key"], "task": res["task"], "status": res["status"],
                    "error": res["error"], "code_version": res["code_version"],
                    "theory_version": res["theory_version"], **inst}
            for row in res["rows"] or ([{}] if res["status"] != "ok" else []):
                line = {**base, **{k: v for k, v in row.items() if k not in ("terms",)}}
                for col in NUMERIC:
                    if col in line:
                        line[col + "_exact"] = _exact(line[col])
                        line[col] = None if line[col] is None else float(Fraction(line[col]))
                if check and line.get("makespan_exact") is not None and \
                        line.get("lower_bound_exact") is not None and line.get("valid", True) \
                        and line["makespan_exact"] < line["lower_bound_exact"]:
                    raise ValueError(f"store {path}: row {res['key']} has makespan "
                                     f"{line['makespan_exact']} below its lower bound "
                                     f"{line['lower_bound_exact']} ({inst})")
                out.append(line)
    return out


def load_table(path: str | Path, task: Optional[str] = None, check: bool = True):
    """The store as a pandas DataFrame (one line per row; needs pandas)."""
    import pandas as pd

    return pd.DataFrame(flat_rows(path, task, check))
