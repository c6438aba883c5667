"""The report: byte-identical for the same inputs, self-contained HTML, explicit 'section unavailable' lines."""

from __future__ import annotations

import argparse
import base64
import json
import re
from pathlib import Path

import pytest
from attnio.reports import report, sources
from attnio.reports.grid import grid_from_dict
from attnio.reports.store import Store
from attnio.reports.sweep import run_sweep

from attnio.commands import report as report_cmd

GRID = {
    "numeric_max_N": 32,
    "blocks": [
        {"algorithms": ["flash2"], "N": [16, 32, 256, 1024], "d": [4, 16], "M": [128, 2048]},
    ],
}


def _rows(grid: dict = GRID) -> list[dict]:
    s = Store(":memory:")
    run_sweep(grid_from_dict(grid), s, workers=0, progress=False)
    return s.rows()


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and "_work" not in p.parts}


@pytest.fixture
def no_verifier(monkeypatch: pytest.MonkeyPatch) -> None:
    """Verification is another helper's module (and slow); these tests fix its answer."""
    monkeypatch.setattr(sources, "verdicts", lambda: [{"id": "c1", "verdict": "proved", "constant": "1/4", "claim": "", "solver": "z3"}])


def test_same_inputs_give_byte_identical_files(tmp_path: Path, no_verifier: None) -> None:
    rows = _rows()
    report.make_report(rows, tmp_path / "a")
    shuffled = list(reversed(rows))
    for r in shuffled:
        r["seconds"] = 123.0  # timings differ between runs: they must not reach the files
    report.make_report(shuffled, tmp_path / "b")
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert set(a) >= {"REPORT.md", "report.html"} and any(k.startswith("figures/") for k in a)
    assert a == b
    meta = json.loads((tmp_path / "a" / "_work" / "report-meta.json").read_text())
    assert "verify_seconds" in meta  # the timings live outside the deterministic files


def test_cli_report_twice_with_different_worker_counts_is_byte_identical(tmp_path: Path, no_verifier: None) -> None:
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps(GRID))
    p = argparse.ArgumentParser()
    report_cmd.add_arguments(p)
    for out, workers in (("a", "0"), ("b", "2")):
        assert report_cmd.main(p.parse_args(["--grid", str(grid), "--out", str(tmp_path / out), "--workers", workers, "--no-progress", "--no-verify", "--no-pebbling"])) == 0
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_html_is_self_contained_and_markdown_figures_exist(tmp_path: Path, no_verifier: None) -> None:
    report.make_report(_rows(), tmp_path)
    html = (tmp_path / "report.html").read_text()
    srcs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert srcs and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)
    for s in srcs:
        assert base64.b64decode(s.split(",", 1)[1]).startswith(b"<?xml")
    md = (tmp_path / "REPORT.md").read_text()
    figs = re.findall(r"\]\((figures/[^)]+)\)", md)
    assert figs and all((tmp_path / f).is_file() for f in figs)
    assert "Date" not in "".join((tmp_path / f).read_text() for f in figs)


def test_a_missing_source_says_section_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(module: str):
        def f(*a, **k):
            raise sources.SourceUnavailable(module)

        return f

    monkeypatch.setattr(sources, "all_bounds", missing("attnio.bounds.catalog"))
    monkeypatch.setattr(sources, "verdicts", missing("attnio.solver.verify"))
    monkeypatch.setattr(sources, "constants_table", missing("attnio.bounds.constants"))
    monkeypatch.setattr(sources, "crossover_B", missing("attnio.bounds.approx"))
    report.make_report(_rows(), tmp_path, pebbling=sources.SourceUnavailable("attnio.solver.pebble"))
    md = (tmp_path / "REPORT.md").read_text()
    for module in ("attnio.bounds.catalog", "attnio.solver.verify", "attnio.bounds.constants", "attnio.solver.pebble", "attnio.bounds.approx"):
        assert f"section unavailable: {module} not built" in md, module


def test_every_section_has_content(tmp_path: Path, no_verifier: None) -> None:
    sections = report.build(report.Context(_rows(), sources.verdicts()))
    assert [s.title for s in sections if not s.blocks] == []


def test_formula_check_table_reports_equality_per_algorithm(no_verifier: None) -> None:
    rows = _rows()
    s = report.section_formula_check(report.Context(rows, None))
    table = next(b for b in s.blocks if b[0] == "table")
    flash2 = next(r for r in table[2] if r[0] == "flash2")
    assert flash2[3] == f"{len(rows)}/{len(rows)}"
    rows[0]["io"] += 1  # a planted mismatch must show
    s = report.section_formula_check(report.Context(rows, None))
    flash2 = next(r for r in next(b for b in s.blocks if b[0] == "table")[2] if r[0] == "flash2")
    assert flash2[3] == f"{len(rows) - 1}/{len(rows)}"


def test_fitted_slope_of_an_exact_power_law() -> None:
    assert report._slope([2, 4, 8, 16], [3 * n * n for n in (2, 4, 8, 16)]) == pytest.approx(2.0)
