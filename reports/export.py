"""Export a results store as a table file: CSV (pandas), or Parquet when pyarrow is installed.

The columns are those of :func:`attnio.reports.frames.sweep_frame` (``attnio.results()``). The file is written to
a temporary file in the same folder and renamed over the target (:func:`os.replace`), so a reader never sees half
a file and a failed export leaves any previous file as it was.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from attnio.core.errors import InvalidParameter, Unsupported
from attnio.reports.frames import sweep_frame
from attnio.reports.store import Store, write_atomic_with

FORMATS = (".csv", ".parquet")


def check_export(path: str | Path) -> str:
    """The format of ``path`` by its suffix; InvalidParameter for another suffix, Unsupported (one line naming
    the package) for Parquet without pyarrow."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InvalidParameter("export", str(path), "a file name ending in " + " or ".join(FORMATS))
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise Unsupported(f"--export {path}: Parquet needs the package pyarrow (pip install pyarrow), which is not installed; or export to .csv")
    return suffix


def export(store: Store, path: str | Path) -> int:
    """Write every row of ``store`` to ``path`` (.csv or .parquet) atomically; returns the number of rows."""
    suffix = check_export(path)
    frame = sweep_frame(store)

    def write(tmp: str) -> None:
        if suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)

    write_atomic_with(path, write)
    return len(frame)
