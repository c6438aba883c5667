"""Results as pandas DataFrames: the sweep's rows, the measured ÷ bound ratios, the claims and the bounds.

A sweep row is canonical JSON in the store (:mod:`attnio.reports.store`), and beside it the fields this module
reads, pulled out by SQLite's ``json_extract`` (and the row's best proved lower bound, by ``json_each``) when the
row was appended, packed in one blob: :func:`sweep_frame` reads the key and that blob a row and unpacks the
columns with numpy, so no row's JSON is parsed when a frame is read (benchmarks/bench_results.py).
The columns, their dtypes and meanings are :data:`SWEEP_COLUMNS`; integers are nullable (``Int64``: an error row
has no count), text is ``string``, flags ``boolean``, reals ``float64`` (NaN where absent).

Derived columns, computed the one way the report computes them:

- ``pass``: the registry's pass of the algorithm (``forward``/``backward``; <NA> for one unknown to this process);
- ``best_bound``, ``best_bound_value``: the largest positive proved lower bound among the bounds the sweep
  evaluated for the row (:func:`attnio.reports.sources.proved_lower_bounds`; ties: the larger id), and ``ratio``
  = io ÷ that value;
- ``regime``: the reader's regime: ``approximate`` for a run with ε, else :func:`attnio.reports.sources.cache_regime`.

:func:`ratio_frame` is the long form of every row's measured ÷ bound (one row per (run, bound)), from which the
report's per-regime tables are grouped. The report builds its frames from its rows through an in-memory store
(:func:`attnio.reports.compute.frame_of_rows`), so a notebook reading a store and the report compute the same
figures the same way.

>>> from attnio.reports.grid import grid_from_dict
>>> from attnio.reports.store import Store
>>> from attnio.reports.sweep import run_sweep
>>> s = Store(":memory:")
>>> _ = run_sweep(grid_from_dict({"blocks": [{"algorithms": ["flash2"], "N": [4, 1024], "d": [2], "M": [14]}]}), s, workers=0, progress=False)
>>> f = sweep_frame(s)
>>> print(f[["N", "reads", "writes", "io", "best_bound", "regime"]].to_string(index=False))
   N   reads  writes      io   best_bound      regime
1024 4196352    3072 4199424 constants.b3 large cache
   4      72      12      84  trivial.4Nd      beyond
>>> str(f["io"].dtype), str(f["count_only"].dtype)
('Int64', 'boolean')
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnio.core.errors import InvalidParameter
from attnio.reports.sweep_columns import SWEEP_COLUMNS, TAG_INT, TAG_NULL, TAG_REAL, TAG_TEXT, frame_names

if TYPE_CHECKING:
    from attnio.reports.store import Store

RATIO_COLUMNS: dict[str, str] = {"key": "string", "algorithm": "string", "regime": "string", "bound": "string", "ratio": "float64"}

_STORED = [(c, f) for c, (f, _, _) in SWEEP_COLUMNS.items() if f is not None and c != "key"]


def check_columns(param: str, names: Iterable[str], valid: Iterable[str]) -> None:
    """Every name must be a column: else InvalidParameter naming ``param``, the name and the valid columns."""
    valid = list(valid)
    for n in names:
        if n not in valid:
            raise InvalidParameter(param, n, "a column: one of " + ", ".join(valid))


def check_arguments(where: Any, columns: Any) -> None:
    """``where`` and ``columns`` of :func:`sweep_frame` name only its columns (InvalidParameter otherwise)."""
    _check(where, columns, SWEEP_COLUMNS)


def _check(where: Any, columns: Any, valid: Iterable[str], param: str = "") -> None:
    if where is not None:
        if not isinstance(where, Mapping):
            raise InvalidParameter(param + "where", where, "a mapping {column: value or list of values}")
        check_columns(param + "where", where, valid)
    if columns is not None:
        if isinstance(columns, str):
            raise InvalidParameter(param + "columns", columns, "a list of column names, not one string")
        check_columns(param + "columns", list(columns), valid)


def select(frame: pd.DataFrame, where: Mapping[str, Any] | None = None, columns: Iterable[str] | None = None, *, param: str = "") -> pd.DataFrame:
    """Rows whose column equals each ``where`` value (a list, tuple or set: is one of them), then only
    ``columns`` (in that order). An unknown column raises InvalidParameter naming ``where`` or ``columns``."""
    columns = columns if columns is None or isinstance(columns, str) else list(columns)
    _check(where, columns, frame.columns, param)
    if where is not None:
        mask = pd.Series(True, index=frame.index)
        for c, v in where.items():
            hit = frame[c].isin(list(v)) if isinstance(v, list | tuple | set | frozenset) else frame[c] == v
            mask &= hit.fillna(False).astype(bool)
        frame = frame[mask]
    if columns is not None:
        frame = frame[columns]
    return frame.reset_index(drop=True)


def _lows() -> list[str]:
    from attnio.reports import sources

    return sorted(b.id for b in sources.proved_lower_bounds(sources.all_bounds()))


def _query(store: Store, sql: str, params: list[Any], con: sqlite3.Connection | None = None) -> list[tuple[Any, ...]]:
    try:
        return store.query(sql, params) if con is None else con.execute(sql, params).fetchall()
    except sqlite3.OperationalError as e:
        if "JSON" not in str(e):
            raise
        raise InvalidParameter("store", store.path, f"an attnio store of canonical JSON rows (SQLite: {e}; a row holding NaN or Infinity cannot be read as JSON)") from None


CHUNK_ROWS = 100_000  # a store file larger than this is read in key ranges, one reader thread per range


def _fetch(store: Store, sql: str) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (whose ``{keys}`` is a condition on the results table's ``key``), in key order.

    A store file of more than :data:`CHUNK_ROWS` rows is cut into key ranges (from its key index), each read by
    the same query on its own read-only connection in a thread: SQLite's JSON work runs outside the GIL, so the
    ranges are read on as many cores as there are. A store being appended to meanwhile gives each range as it
    was when that range was read."""
    n = store.count()
    k = min(os.cpu_count() or 1, -(-n // CHUNK_ROWS))
    if store.path == ":memory:" or k < 2:
        return _query(store, sql.format(keys="1"), [])
    cuts = [store.query("SELECT key FROM frame_columns ORDER BY key LIMIT 1 OFFSET ?", [i * n // k])[0][0] for i in range(1, k)]
    ranges = list(zip([None, *cuts], [*cuts, None], strict=True))

    def read(lo_hi: tuple[str | None, str | None]) -> list[tuple[Any, ...]]:
        lo, hi = lo_hi
        cond = " AND ".join(c for c, v in (("key >= ?", lo), ("key < ?", hi)) if v is not None)
        con = sqlite3.connect(Path(store.path).resolve().as_uri() + "?mode=ro", uri=True, timeout=60)
        try:
            return _query(store, sql.format(keys=cond), [v for v in (lo, hi) if v is not None], con)
        finally:
            con.close()

    with ThreadPoolExecutor(k) as ex:
        return [row for part in ex.map(read, ranges) for row in part]


def sweep_frame(store: Store, where: Mapping[str, Any] | None = None, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """Every row of ``store`` as a DataFrame of :data:`SWEEP_COLUMNS`, sorted by key (see the module docstring)."""
    columns = columns if columns is None or isinstance(columns, str) else list(columns)
    _check(where, columns, SWEEP_COLUMNS)
    if store.count() != store.query("SELECT COUNT(*) FROM frame_columns")[0][0]:
        store.fill_missing()
    data = _fetch(store, "SELECT key, packed FROM frame_columns WHERE {keys} ORDER BY key")
    texts = dict(store.query("SELECT id, text FROM frame_strings"))
    return select(_finish(_unpack(store, data, texts)), where, columns)


def _unpack(store: Store, data: list[tuple[str, bytes | None]], texts: dict[int, str]) -> pd.DataFrame:
    """The stored columns from frame_columns' packed rows (reports.store._fill), typed: a column whose values are
    all of its dtype's kind (NULL or integer for Int64 and boolean, NULL, integer or real for float64, NULL or
    text for string) is converted with numpy; any other is left as the objects SQLite gave, for :func:`_finish`
    to type (as it typed them before, and raising as it did)."""
    names = frame_names()
    n = len(names)
    keys = [k for k, _ in data]
    packed = [p for _, p in data]
    if any(p is None for p in packed):
        raise InvalidParameter("store", store.path, "an attnio store of canonical JSON rows (SQLite: malformed JSON; "
                                                    "a row holding NaN or Infinity cannot be read as JSON)")
    arr = np.frombuffer(b"".join(packed), dtype=np.dtype([("t", "u1", (n,)), ("v", "<i8", (n,))]))
    ids = sorted(texts)
    strings = pd.array([texts[i] for i in ids], dtype="string")  # each text typed once, then taken by position
    position = np.zeros(max(ids, default=0) + 1, dtype=np.int64)
    position[ids] = np.arange(len(ids))
    out: dict[str, Any] = {"key": pd.array(keys, dtype="string")}
    for j, c in enumerate(names):
        tag, val = arr["t"][:, j], arr["v"][:, j]
        null = tag == TAG_NULL
        kinds = set(np.unique(tag).tolist()) - {TAG_NULL}
        dtype = SWEEP_COLUMNS[c][1]
        if dtype == "Int64" and kinds <= {TAG_INT}:
            out[c] = pd.arrays.IntegerArray(np.where(null, 0, val), null)
        elif dtype == "boolean" and kinds <= {TAG_INT} and np.isin(val[~null], (0, 1)).all():
            out[c] = pd.arrays.BooleanArray(val == 1, null)
        elif dtype == "float64" and kinds <= {TAG_INT, TAG_REAL}:
            out[c] = np.where(tag == TAG_REAL, val.view("<f8"), np.where(tag == TAG_INT, val.astype("float64"), np.nan))
        elif dtype == "string" and kinds <= {TAG_TEXT}:
            out[c] = strings.take(np.where(null, -1, position[np.where(null, 0, val)]), allow_fill=True)
        else:  # a mixed column: the objects SQLite gave, typed by _finish
            f8 = val.view("<f8")
            out[c] = [None if t == TAG_NULL else int(v) if t == TAG_INT else float(x) if t == TAG_REAL else texts[v]
                      for t, v, x in zip(tag.tolist(), val.tolist(), f8.tolist(), strict=True)]
    return pd.DataFrame(out)


def _finish(raw: pd.DataFrame) -> pd.DataFrame:
    """Type the extracted columns and add the derived ones (pass, ratio, regime), in :data:`SWEEP_COLUMNS` order."""
    from attnio.algorithms import registry
    from attnio.reports import sources

    out: dict[str, Any] = {}
    for c, (_, dtype, _) in SWEEP_COLUMNS.items():
        if c in raw:
            col = raw[c]
            if dtype == "boolean" and col.dtype != "boolean":  # SQLite gives JSON true/false as 1/0
                col = col.map({1: True, 0: False}, na_action="ignore")
            out[c] = col.astype(dtype)
    f = pd.DataFrame(out)
    algs = f["algorithm"].dropna().unique()
    f["pass"] = f["algorithm"].map({a: registry.REGISTRY[a].pass_ for a in algs if a in registry.REGISTRY}).astype("string")
    f["ratio"] = (f["io"].astype("float64") / f["best_bound_value"]).astype("float64")
    regime = pd.Series(pd.NA, index=f.index, dtype="string")
    regime[f["eps"].notna()] = sources.APPROXIMATE_REGIME
    exact = f["eps"].isna() & f["N"].notna() & f["d"].notna() & f["M"].notna()
    triples = f.loc[exact, ["N", "d", "M"]].drop_duplicates()
    by = {(int(N), int(d), int(M)): sources.cache_regime(int(N), int(d), int(M)) for N, d, M in triples.itertuples(index=False)}
    if by:
        idx = pd.MultiIndex.from_frame(f.loc[exact, ["N", "d", "M"]].astype("int64"))
        regime[exact] = pd.Series(by).reindex(idx).to_numpy()
    f["regime"] = regime
    return f[list(SWEEP_COLUMNS)]


def ratio_frame(store: Store) -> pd.DataFrame:
    """Long form of every ok row's measured ÷ bound (the row's ``ratios``): one row per (run, bound), with the
    run's key, algorithm and regime; sorted by key, then bound. The report's per-regime tables group it."""
    data = _query(store, "SELECT r.key, b.key, b.value FROM results AS r, json_each(r.row, '$.ratios') AS b "
                         "WHERE json_extract(r.row, '$.status') = 'ok' ORDER BY r.key, b.key", [])
    long = pd.DataFrame.from_records(data, columns=["key", "bound", "ratio"]) if data else pd.DataFrame({"key": [], "bound": [], "ratio": []})
    rows = sweep_frame(store, columns=["key", "algorithm", "regime"])
    f = long.merge(rows, on="key", how="left")
    return f[list(RATIO_COLUMNS)].astype(RATIO_COLUMNS)
