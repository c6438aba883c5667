"""The regime report: orchestration. Markdown (renders on GitHub) and one self-contained HTML page.

Four modules, one job each:

- :mod:`attnio.reports.figures`: every figure that is not a row of the sweep (backward, workloads, the gate's
  figures), computed once and read by the sections and by the gate;
- :mod:`attnio.reports.compute`: what the report says about the sweep's rows, as data (:class:`Context`,
  regimes, summaries);
- :mod:`attnio.reports.render`: the section builder :class:`Section` (``s.p``, ``s.table``, ``s.fig``) and the
  Markdown/HTML writers;
- this module: the one ordered list of sections, :data:`SECTIONS`, and :func:`make_report`, which gathers the
  verdicts, builds every section and writes the files.

Adding a section (e.g. for the backward pass or a workload): write ``reports/section_<topic>.py`` with a
function ``section(ctx: Context) -> Section`` that builds its blocks with the :class:`Section` API from data
computed in :mod:`attnio.reports.figures`, import it here and add it, in the place it should print, to
:data:`SECTIONS`: one line. If the gate should guard its figures too, register a gate source there
(:func:`attnio.reports.figures.gate_source`). Nothing else changes.

Output is deterministic: rows sorted, floats in fixed formats, SVG figures with a fixed hash salt and no
dates, no timestamps or timings in the body (they go to ``_work/report-meta.json``, outside the report).
Files written into ``out`` (default ``reports/``): ``REPORT.md``, ``report.html``, ``figures/*.svg``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnio.reports import (
    section_backward,
    section_distributed,
    section_dram,
    section_gallery,
    section_pebble_bench,
    section_serving,
    section_triton,
    section_workloads,
    sources,
)
from attnio.reports.compute import Context
from attnio.reports.render import Section, render_html, render_markdown, write
from attnio.reports.sections import (
    section_bounds_by_regime,
    section_constants,
    section_crossover,
    section_flash1,
    section_formula_check,
    section_loglog,
    section_pebbling,
    section_regime_map,
    section_summary,
    section_verification,
    section_what_was_run,
)
from attnio.reports.store import write_atomic

__all__ = ["SECTIONS", "Context", "Section", "build", "make_report", "render_html", "render_markdown", "write"]

# The report, in order. One line per section.
SECTIONS: list[Callable[[Context], Section]] = [
    section_summary,
    section_what_was_run,
    section_regime_map,
    section_bounds_by_regime,
    section_formula_check,
    section_loglog,
    section_crossover,
    section_flash1,
    section_pebbling,
    section_pebble_bench.section,
    section_constants,
    section_backward.section,
    section_workloads.section,
    section_serving.section,
    section_dram.section,
    section_triton.section,
    section_gallery.section,
    section_distributed.section,
    section_verification,
]


def build(ctx: Context) -> list[Section]:
    """Every section of :data:`SECTIONS`, in order."""
    return [fn(ctx) for fn in SECTIONS]


def make_report(
    rows: list[dict[str, Any]],
    out: str | Path = "reports",
    *,
    verify: bool = True,
    verdicts: list[dict[str, Any]] | None = None,
    pebbling: list[dict[str, Any]] | None = None,
    note: str = "",
    meta: dict[str, Any] | None = None,
) -> list[Path]:
    """Build every section and write the files. ``verdicts``: the verifier's answer if already computed;
    otherwise it is computed here unless ``verify=False``. Timings go to ``out/_work/report-meta.json``, outside
    the deterministic files."""
    t0 = time.perf_counter()
    if verdicts is None and verify:
        verdicts = sources.verdicts()
    t_verify = time.perf_counter() - t0
    m_seconds = {}
    if verdicts is not None:
        m_seconds = {v["id"]: v.get("seconds") for v in verdicts}
        verdicts = [{k: x for k, x in v.items() if k != "seconds"} for v in verdicts]
    ctx = Context(sorted(rows, key=lambda r: r["key"]), verdicts, note, pebbling)
    if verdicts is not None:
        ctx.info["crosscheck"] = sources.crosscheck_summary()
    sections = build(ctx)
    written = write(sections, out)
    m = dict(meta or {})
    m.update(verify_seconds=round(t_verify, 3), render_seconds=round(time.perf_counter() - t0 - t_verify, 3), unix_time=time.time(), claim_seconds=m_seconds)
    write_atomic(Path(out) / "_work" / "report-meta.json", json.dumps(m, indent=1, sort_keys=True) + "\n")
    return written
