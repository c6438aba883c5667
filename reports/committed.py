"""The committed JSON tables that slow runs write and the report only reads (``reports/dram.json`` by
``benchmarks/bench_l2.py``, ``reports/pebbling.json`` by ``attnio pebble --benchmark``): a section renders the
table when it is there and says so in one line when it is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[str, Any] | None:
    """The table stored at ``path`` (None when missing or unreadable)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
