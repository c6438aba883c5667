"""The results store: one SQLite file (standard library), one table, one row per configuration.

- ``key`` is UNIQUE (:meth:`reports.grid.Config.key`): appends are ``INSERT OR IGNORE`` inside one
  transaction, so a re-run skips finished rows and two sweeps writing one store never duplicate a row.
- A batch of rows is committed atomically (SQLite's journal): a sweep killed with SIGKILL loses at most the
  batch in flight, never half a row; the re-run redoes it.
- WAL mode and a busy timeout let several processes append at once.

The row itself is stored as canonical JSON (sorted keys) next to the key.

>>> s = Store(":memory:")
>>> s.append([{"key": "a", "io": 1}, {"key": "a", "io": 2}, {"key": "b", "io": 3}])
2
>>> [r["io"] for r in s.rows()]
[1, 3]
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attnio.core.errors import InvalidParameter

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT NOT NULL UNIQUE,
    row TEXT NOT NULL
)
"""


_HEADER = b"SQLite format 3\x00"


class InvalidStore(InvalidParameter):
    """The path given as a store is not an attnio results store (or cannot be opened as one). The file is
    left as it was: nothing is written to it before it has passed :meth:`Store._check`."""

    def __init__(self, path: str, reason: str) -> None:
        self.name, self.value = "store", path
        self.valid = "an attnio results store (an SQLite file with one results(key, row) table) or a new path"
        ValueError.__init__(self, f"{path} is not a valid attnio store ({reason}); it was left unchanged")


class Store:
    def __init__(self, path: str | Path, timeout_s: float = 60.0) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            self._check_path()
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
        except sqlite3.Error as e:
            raise InvalidStore(self.path, f"{type(e).__name__}: {e}") from None
        try:
            self._db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
            if self.path != ":memory:":
                self._check()  # reads only: a file that is not a store is never written
            self._retry(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
            self._db.execute("PRAGMA synchronous=FULL")
            self._retry(lambda: self._db.execute(SCHEMA))
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise InvalidStore(self.path, f"{type(e).__name__}: {e}") from None
        except BaseException:
            self._db.close()
            raise

    def _check_path(self) -> None:
        p = Path(self.path)
        if p.exists() and not p.is_file():
            raise InvalidStore(self.path, "not a regular file")
        if p.is_file():
            try:
                with open(p, "rb") as f:
                    head = f.read(len(_HEADER))
            except OSError as e:
                raise InvalidStore(self.path, f"unreadable: {e.strerror or e}") from None
            if head and head != _HEADER[: len(head)] or 0 < len(head) < len(_HEADER):
                raise InvalidStore(self.path, "not an SQLite database file")
        else:
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise InvalidStore(self.path, f"its folder cannot be created: {e.strerror or e}") from None

    def _check(self) -> None:
        """An existing file must be an intact SQLite database that is empty or holds exactly attnio's table."""
        tables = self._retry(lambda: self._db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())
        if not tables:
            return  # a new (or empty) database: the table is created next
        names = sorted(n for n, _ in tables)
        if names != ["results"]:
            raise InvalidStore(self.path, "its tables are " + ", ".join(names) + ", not attnio's one results table")
        cols = [r[1] for r in self._db.execute("PRAGMA table_info(results)")]
        if cols != ["key", "row"]:
            raise InvalidStore(self.path, f"its results table has columns {cols}, not [key, row]")
        problems = [r[0] for r in self._retry(lambda: self._db.execute("PRAGMA quick_check(1)").fetchall())]
        if problems != ["ok"]:
            raise InvalidStore(self.path, "the database is damaged: " + " ".join(problems[0].split())[:200])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keys(self) -> set[str]:
        return {k for (k,) in self._db.execute("SELECT key FROM results")}

    def append(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert rows whose key is new, all in one transaction. Returns how many were new."""
        data = [(r["key"], json.dumps(r, sort_keys=True, allow_nan=True)) for r in rows]

        def tx() -> int:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                n = 0
                for k, js in data:
                    cur.execute("INSERT OR IGNORE INTO results(key, row) VALUES (?, ?)", (k, js))
                    n += cur.rowcount
                cur.execute("COMMIT")
                return n
            except BaseException:
                cur.execute("ROLLBACK")
                raise

        return self._retry(tx)

    def rows(self) -> list[dict[str, Any]]:
        """Every row, sorted by key (a deterministic order)."""
        return [json.loads(js) for (_, js) in self._db.execute("SELECT key, row FROM results ORDER BY key")]

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row a read-only SQL query over the ``results`` table returns (reports.frames reads the rows'
        fields with SQLite's JSON functions this way)."""
        return self._db.execute(sql, list(params)).fetchall()

    def frame(self, where: dict[str, Any] | None = None, columns: Iterable[str] | None = None) -> Any:
        """Every row as a pandas DataFrame of typed columns: :func:`attnio.reports.frames.sweep_frame`
        (``attnio.results(path)``)."""
        from attnio.reports.frames import sweep_frame

        return sweep_frame(self, where, columns)

    def _retry(self, fn: Any, attempts: int = 50) -> Any:
        for i in range(attempts):
            try:
                return fn()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e) or i == attempts - 1:
                    raise
                time.sleep(0.05 * (i + 1))
        raise AssertionError("unreachable")


def write_atomic(path: str | Path, text: str) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=p.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
