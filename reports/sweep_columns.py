"""The sweep frame's columns: name -> (field of the stored row, or None for a derived column; dtype; meaning).

Read by :mod:`attnio.reports.frames` (the frame) and :mod:`attnio.reports.store` (which fields it packs beside
each row when the row is appended)."""

from __future__ import annotations

SWEEP_COLUMNS: dict[str, tuple[str | None, str, str]] = {
    "key": ("key", "string", "the configuration's key (reports.grid.Config.key)"),
    "algorithm": ("algorithm", "string", "registered algorithm name"),
    "pass": (None, "string", "forward or backward (the registry's pass of the algorithm)"),
    "N": ("N", "Int64", "sequence length"),
    "d": ("d", "Int64", "head dimension of Q and K"),
    "dv": ("dv", "Int64", "head dimension of V (d_v)"),
    "M": ("M", "Int64", "fast-memory capacity in words"),
    "eps": ("eps", "float64", "approximate runs: the error ε (NaN for exact runs)"),
    "B": ("B", "float64", "approximate runs: the entry bound B (NaN for exact runs)"),
    "seed": ("seed", "Int64", "random seed of the inputs"),
    "count_only": ("count_only", "boolean", "counted without arithmetic (the same counts)"),
    "status": ("status", "string", "ok, or error (a documented error: see error)"),
    "reads": ("reads", "Int64", "words read slow → fast"),
    "writes": ("writes", "Int64", "words written fast → slow"),
    "io": ("io", "Int64", "reads + writes"),
    "peak": ("peak_fast_words", "Int64", "largest fast-memory occupancy in words"),
    "overflowed": ("overflowed", "boolean", "exceeded M (audit-mode algorithms only)"),
    "formula_io": ("formula_io", "Int64", "io by the algorithm's exact cost formula, where it has one"),
    "max_abs_error": ("max_abs_error", "float64", "largest |output − float64 reference| (NaN when count-only)"),
    "error": ("error", "string", "the error of an error row"),
    "schedule": ("schedule", "string", "approximate runs: the schedule poly ran"),
    "g": ("g", "Int64", "approximate runs: the degree of the polynomial"),
    "r": ("r", "Int64", "approximate runs: the rank the bounds are evaluated at"),
    "best_bound": (None, "string", "the largest positive proved lower bound evaluated for the row"),
    "best_bound_value": (None, "float64", "its value in words"),
    "ratio": (None, "float64", "io ÷ best_bound_value"),
    "regime": (None, "string", "small cache, large cache, beyond, or approximate"),
    "seconds": ("seconds", "float64", "wall time of the run (not deterministic)"),
    "backend": ("backend", "string", "array backend of the run"),
    "attnio_version": ("attnio_version", "string", "attnio version that wrote the row"),
}


def frame_fields() -> list[tuple[str, str]]:
    """(column, field of the stored row) for each stored column but the key."""
    return [(c, f) for c, (f, _, _) in SWEEP_COLUMNS.items() if f is not None and c != "key"]


# The store packs a row's stored columns, in frame_names() order, as one blob: a tag byte per field (TAG_*), then
# an 8-byte little-endian payload per field (the integer, the real's IEEE bits, a text's frame_strings id, or 0
# for NULL). So reading 10⁶ rows fetches two values a row, not thirty (benchmarks/bench_results.py).
TAG_NULL, TAG_INT, TAG_REAL, TAG_TEXT = 0, 1, 2, 3


def frame_names() -> list[str]:
    """The packed columns: the stored ones, then the best bound and its value."""
    return [*(c for c, _ in frame_fields()), "best_bound", "best_bound_value"]
