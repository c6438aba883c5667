"""The report: byte-identical for the same inputs, self-contained HTML, the summary that opens it, the bounds
organised by the regimes a reader thinks in.

The Triton kernels are counted once for the module (conftest.triton_once); one report over GRID is built once
and read by the tests that only read it (:func:`built`); `attnio report` runs end to end in one test.
"""

from __future__ import annotations

import argparse
import base64
import copy
import importlib.util
import json
import math
import random
import re
from pathlib import Path

import pytest

from attnio.bounds import approx
from attnio.bounds.catalog import by_id
from attnio.bounds.expr import evaluate
from attnio.cli import report as report_cmd
from attnio.reports import compute, render, report, sections, sources
from attnio.reports.grid import default_grid_dict, grid_from_dict
from attnio.reports.store import Store
from attnio.reports.sweep import run_sweep

# one worker for this module and test_gate.py: the Triton count (conftest.triton_measured) is made once
pytestmark = [pytest.mark.xdist_group("triton-counts"), pytest.mark.usefixtures("triton_once")]

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


def _fixed_verdicts() -> list[dict]:
    return [{"id": "c1", "verdict": "proved", "constant": "1/4", "claim": "", "solver": "z3"}]


@pytest.fixture
def no_verifier(monkeypatch: pytest.MonkeyPatch) -> None:
    """Verification is another helper's module (and slow); these tests fix its answer."""
    monkeypatch.setattr(sources, "verdicts", _fixed_verdicts)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """One report over GRID (the verifier's answer fixed), written once for the tests that read it: its
    folder and the rows it was built from."""
    out = tmp_path_factory.mktemp("report")
    rows = _rows()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sources, "verdicts", _fixed_verdicts)
        report.make_report(copy.deepcopy(rows), out)
    return out, rows


def test_same_inputs_give_byte_identical_files(tmp_path: Path, no_verifier: None, built: tuple[Path, list[dict]]) -> None:
    first, rows = built
    shuffled = list(reversed(copy.deepcopy(rows)))
    for r in shuffled:
        r["seconds"] = 123.0  # timings differ between runs: they must not reach the files
    report.make_report(shuffled, tmp_path / "b")
    a, b = _files(first), _files(tmp_path / "b")
    assert set(a) >= {"REPORT.md", "report.html"} and any(k.startswith("figures/") for k in a)
    assert a == b
    meta = json.loads((first / "_work" / "report-meta.json").read_text())
    assert "verify_seconds" in meta  # the timings live outside the deterministic files


def test_cli_report_twice_with_different_worker_counts_is_byte_identical(tmp_path: Path, no_verifier: None) -> None:
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps(GRID))
    p = argparse.ArgumentParser()
    report_cmd.add_arguments(p)
    for out, workers in (("a", "0"), ("b", "2")):
        assert report_cmd.main(p.parse_args(["--grid", str(grid), "--out", str(tmp_path / out), "--workers", workers, "--no-progress", "--no-verify", "--no-pebbling"])) == 0
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_html_is_self_contained_and_markdown_figures_exist(built: tuple[Path, list[dict]]) -> None:
    tmp_path = built[0]
    html = (tmp_path / "report.html").read_text()
    srcs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert srcs and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)
    for s in srcs:
        assert base64.b64decode(s.split(",", 1)[1]).startswith(b"<?xml")
    md = (tmp_path / "REPORT.md").read_text()
    figs = re.findall(r"\]\((figures/[^)]+)\)", md)
    assert figs and all((tmp_path / f).is_file() for f in figs)
    assert "Date" not in "".join((tmp_path / f).read_text() for f in figs)


def test_every_section_has_content(tmp_path: Path, no_verifier: None) -> None:
    sections = report.build(report.Context(_rows(), sources.verdicts()))
    assert [s.title for s in sections if not s.blocks] == []


def test_formula_check_table_reports_equality_per_algorithm(no_verifier: None) -> None:
    rows = _rows()
    s = sections.section_formula_check(report.Context(rows, None))
    table = next(b for b in s.blocks if b[0] == "table")
    flash2 = next(r for r in table[2] if r[0] == "flash2")
    assert flash2[3] == f"{len(rows)}/{len(rows)}"
    rows[0]["io"] += 1  # a planted mismatch must show
    s = sections.section_formula_check(report.Context(rows, None))
    flash2 = next(r for r in next(b for b in s.blocks if b[0] == "table")[2] if r[0] == "flash2")
    assert flash2[3] == f"{len(rows) - 1}/{len(rows)}"


def test_fitted_slope_of_an_exact_power_law() -> None:
    assert compute.slope([2, 4, 8, 16], [3 * n * n for n in (2, 4, 8, 16)]) == pytest.approx(2.0)


REGIME_GRID = {
    "numeric_max_N": 16,
    "blocks": [
        # small cache (M < d²), large cache (d² ≤ M ≤ Nd) and beyond (M > Nd), at d = 16 and 64
        {"algorithms": ["auto", "flash2", "square_tiling", "standard"], "N": [64, 1024, 4096], "d": [16, 64], "M": [128, 1024, 65536]},
    ],
}


def _summary_table(ctx: report.Context) -> tuple[list[str], list[list[str]], list[str]]:
    s = sections.section_summary(ctx)
    (_, headers, rows), = [b for b in s.blocks if b[0] == "table"]
    return headers, rows, [b[1] for b in s.blocks if b[0] == "p"]


def test_summary_ratio_is_measured_over_the_named_bound_computed_independently() -> None:
    rows = _rows(REGIME_GRID)
    headers, table, _ = _summary_table(report.Context(rows, None))
    assert [r[0].split(",")[0] for r in table] == ["small cache", "large cache", "beyond", "approximate attention (error ≤ ε)"]
    col = {h: i for i, h in enumerate(headers)}
    checked = 0
    for r in table[:3]:
        bound_id, _, where = r[col["best proved lower bound"]].partition(" at ")
        env = dict((k, int(v)) for k, v in (kv.split("=") for kv in where.split()))
        ratio_text, schedule = re.fullmatch(r"(\S+) \((.+)\)", r[col["measured ÷ bound (schedule)"]]).groups()
        # the fewest words measured at that configuration, straight from the sweep rows
        # (auto is the argmin of every registered schedule, some of them not in this sweep: it is never a winner)
        there = [x for x in rows if (x["N"], x["d"], x["M"]) == (env["N"], env["d"], env["M"]) and x["status"] == "ok"
                 and x["algorithm"] != "auto"]
        best = min(there, key=lambda x: x["io"])
        assert schedule.split(" = ") == sorted(x["algorithm"] for x in there if x["io"] == best["io"])
        b = by_id(bound_id)
        assert b.kind == "lower" and b.explicit and b.status != "under review"
        assert all(rel.holds({**env, "dv": env["d"]}) for rel in b.regime)
        value = float(evaluate(b.expr, {**env, "dv": env["d"]}))
        assert ratio_text == f"{best['io'] / value:.3g}" and best["io"] / value >= 1  # a lower bound: ratio ≥ 1
        checked += 1
    assert checked == 3
    # auto runs the cheapest other schedule: it is never named; the large cache is flash2's at every configuration
    assert not any("auto" in r[col["best schedule (wins)"]] for r in table)
    large = table[1]
    assert large[col["best schedule (wins)"]] == f"flash2 {large[col['configurations']]}/{large[col['configurations']]}"


def test_summary_counts_the_verdicts_of_the_claims_about_each_regimes_bounds() -> None:
    verdicts = [
        {"id": "c1", "verdict": "proved", "about": ["trivial.4Nd"]},  # every cache regime
        {"id": "c2", "verdict": "unknown", "about": ["sy.lemma3.4.explicit"]},  # M ≥ d²: large cache and beyond
        {"id": "c3", "verdict": "proved", "about": ["sy.thm3.7"]},  # M ≤ d²: small cache
    ]
    headers, table, ps = _summary_table(report.Context(_rows(REGIME_GRID), verdicts))
    claims = {r[0].split(",")[0]: r[headers.index("claims about its bounds")] for r in table}
    assert claims["small cache"] == "2/2 proved"
    assert claims["large cache"] == claims["beyond"] == "1/2 proved, 1 unknown"
    assert claims["approximate attention (error ≤ ε)"] == "no claim"
    assert any(p.startswith("Verification: 3 claims, 2 proved, 1 unknown") for p in ps)


def test_bounds_are_grouped_by_the_cache_regimes_a_reader_thinks_in() -> None:
    groups = {k: {b.id for b in v} for k, v in compute.bounds_by_regime(sources.all_bounds()).items()}
    assert "sy.thm3.7" in groups["small cache"] and "sy.thm3.7" not in groups["large cache"]  # M ≤ d²
    assert "sy.lemma3.4.explicit" in groups["large cache"] and "sy.lemma3.4.explicit" not in groups["small cache"]
    assert "trivial.4Nd" in groups["small cache"] & groups["large cache"] & groups["beyond"]
    assert "approx.lower.trivial" in groups["approximate"] and "li.backward.lower" in groups["other"]


def test_no_false_no_configuration_line_under_asymptotic_only_bounds() -> None:
    def says_none(grid: dict) -> dict[str, bool]:
        md = render.render_markdown([sections.section_bounds_by_regime(report.Context(_rows(grid), None))])
        parts = md.split("**Regime: ")[1:]
        return {p.split("**")[0].split(",")[0]: "No configuration of the sweep lies in this regime" in p for p in parts}

    cache = ("small cache", "large cache", "beyond")
    assert {k: v for k, v in says_none(REGIME_GRID).items() if k in cache} == dict.fromkeys(cache, False)
    only_large = {"numeric_max_N": 16, "blocks": [{"algorithms": ["flash2"], "N": [1024], "d": [16], "M": [1024]}]}
    assert says_none(only_large) == {"small cache": True, "large cache": False, "beyond": True, "approximate attention (error ≤ ε)": True, "other: backward pass": False}


def test_constants_status_line_is_text_not_a_python_dict() -> None:
    s = sections.section_constants(report.Context([], None))
    line = next(b[1] for b in s.blocks if b[0] == "p" and b[1].startswith("Status of the constants"))
    assert "{" not in line and "'" not in line and "constants.b1: derived here" in line


def _near_an_edge(x: float, rel: float = 1e-9) -> bool:
    """Within ``rel`` of a boundary of :func:`render.fmt_error`: the floor, or the midpoint between two
    two-digit numbers (where any format must round one way or the other)."""
    if abs(x - render.ERROR_FLOOR) <= rel * x:
        return True
    e = 10.0 ** math.floor(math.log10(x))
    mid = (math.floor(x / e * 10) + 0.5) * e / 10  # the rounding edge of x's two significant digits
    return abs(x - mid) <= rel * x


def test_error_cells_are_stable_under_a_few_ulps_of_noise() -> None:
    rng = random.Random(20261201)
    draws = [10 ** rng.uniform(-17, -2) for _ in range(2000)] + [1.1e-15, 2.9e-15, 3.3e-15, 3.1e-05, 4.4e-07]
    checked = 0
    for x in (x for x in draws if not _near_an_edge(x)):
        want = render.fmt_error(x)
        for k in (1, 2, 8):
            up = down = x
            for _ in range(k):
                up, down = math.nextafter(up, math.inf), math.nextafter(down, 0.0)
            assert render.fmt_error(up) == render.fmt_error(down) == want, (x, k)
        checked += 1
    assert checked > 1900


def test_rounding_level_errors_print_as_one_bucket_whatever_the_blas() -> None:
    """Another BLAS sums in another order: an error of a few ulps of entries of size ~1 may halve or triple."""
    for ulps in (0, 1, 3, 5, 13, 40, 200):
        assert render.fmt_error(ulps * 2.0**-52) == "< 1e-13"
    assert render.fmt_error(1.2e-12) == "1.2e-12" and render.fmt_error(3.14e-05) == "3.1e-05"


def test_formula_check_table_is_identical_when_the_measured_errors_are_perturbed(no_verifier: None) -> None:
    rows = _rows()
    assert any(r.get("max_abs_error") for r in rows)  # real-arithmetic runs are among them
    before = render.render_markdown([sections.section_formula_check(report.Context(rows, None))])
    rng = random.Random(7)
    for r in rows:
        if r.get("max_abs_error"):
            r["max_abs_error"] *= rng.uniform(0.3, 3.0)  # a different summation order: same bucket
    assert render.render_markdown([sections.section_formula_check(report.Context(rows, None))]) == before


def test_only_the_figures_module_and_the_sweep_call_the_runners() -> None:
    """One figures pipeline: sections and the gate read figures; they never run a schedule themselves."""
    runners = re.compile(r"algorithms\.(run|run_backward|workloads|workloads_bwd)\b|\b(count_backward|train_step|run_workload|run_workload_backward|train_workload)\(")
    here = Path(compute.__file__).parent
    callers = sorted(p.name for p in here.glob("*.py") if p.name not in ("figures.py", "sweep.py") and runners.search(p.read_text()))
    assert callers == []


def test_the_backward_section_prints_what_the_figures_module_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    from attnio.reports import figures, section_backward

    rows = figures.backward_measured()
    assert rows
    planted = [dict(rows[0], io=123456789)]  # what the section prints is what figures computed
    monkeypatch.setattr(figures, "backward_measured", lambda: planted)
    s = section_backward.fill(render.Section("Backward"), None)
    measured = next(b for b in s.blocks if b[0] == "table" and "= formula" in b[1])
    assert [str(r[4]) for r in measured[2]] == ["123456789"]


# The approximate-attention figure: poly's measured io ÷ the largest approximate lower bound whose class holds the
# schedule poly ran (bounds.approx.CLASS_SCHEDULES), at the rank r of the run; benchmarks/approx_gap.py prints the
# same figure, and a bound outside a schedule's class is never divided against it.

ROOT = Path(__file__).resolve().parent.parent
APPROX_LOWER = [b for b in approx.BOUNDS if b.kind == "lower"]


def _benchmark():
    spec = importlib.util.spec_from_file_location("approx_gap", ROOT / "benchmarks" / "approx_gap.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def approx_rows() -> list[dict]:
    """The approximate block of the default grid, run as the report runs it (real arithmetic at small N)."""
    block = next(b for b in default_grid_dict()["blocks"] if "eps" in b)
    with Store(":memory:") as s:
        run_sweep(grid_from_dict({"blocks": [block]}), s, workers=0, progress=False)
        return [r for r in s.rows() if r["status"] == "ok"]


def _approx_summary(rows: list[dict]) -> compute.RegimeSummary:
    (s,) = [s for s in compute.regime_summaries(compute.Context(rows, None), sources.all_bounds()) if s.regime == compute.APPROXIMATE]
    return s


def _approx_fig(p: compute.PointBest) -> tuple:
    return (p.key, p.io, p.variant, p.r, p.bound, p.bound_value)


def test_rows_record_the_schedule_and_rank_poly_ran(approx_rows: list[dict]) -> None:
    assert len(approx_rows) == 20
    for r in approx_rows:
        io, schedule, g, rank = approx.poly_io(N=r["N"], d=r["d"], M=r["M"], eps=r["eps"], B=r["B"])
        assert (r["io"], r["schedule"], r["g"], r["r"]) == (io, schedule, g, rank)


def test_report_figure_equals_the_benchmark_table_and_an_independent_recomputation(approx_rows: list[dict]) -> None:
    ours = _approx_summary(approx_rows)
    bench = _benchmark().gap_summary()  # the benchmark's own count-only sweep
    assert [_approx_fig(p) for p in ours.points] == [_approx_fig(p) for p in bench.points]
    assert len(ours.points) == 20 and ours.median_ratio == bench.median_ratio and ours.largest == bench.largest
    # independently: poly's exact formulas, and the largest lower bound of its schedule's class at its r
    for p in ours.points:
        io, schedule, _, r = approx.poly_io(N=p.N, d=p.d, M=p.M, eps=p.eps, B=p.B)
        env = {"N": p.N, "d": p.d, "M": p.M, "r": r, "dv": p.d}  # poly runs at d_v = d
        vals = {b.id: float(evaluate(b.expr, env)) for b in APPROX_LOWER
                if schedule in approx.CLASS_SCHEDULES[b.id] and all(rel.holds(env) for rel in b.regime)}
        best = max(vals, key=lambda k: (vals[k], k))
        assert (p.io, p.variant, p.r, p.bound, p.bound_value) == (io, schedule, r, best, vals[best])
        assert p.ratio >= 1  # a lower bound


def test_a_bound_outside_the_schedules_class_is_never_divided_against_it(approx_rows: list[dict]) -> None:
    pts = {(p.N, p.M, p.B): p for p in _approx_summary(approx_rows).points}
    outside_larger = 0
    for r in approx_rows:
        env = {"N": r["N"], "d": r["d"], "M": r["M"], "r": r["r"], "dv": r["dv"]}
        used = {bid for bid in r["bounds"] if bid.startswith("approx.lower.")}
        assert used and all(r["schedule"] in approx.CLASS_SCHEDULES[bid] for bid in used), (r["key"], used)
        p = pts[(r["N"], r["M"], r["B"])]
        assert r["schedule"] in approx.CLASS_SCHEDULES[p.bound]
        for b in APPROX_LOWER:  # a bound of another class that holds at this point and is larger than the one used
            if r["schedule"] not in approx.CLASS_SCHEDULES[b.id] and all(rel.holds(env) for rel in b.regime):
                outside_larger += float(evaluate(b.expr, env)) > p.bound_value
    # the filter matters on this grid: the matmul bound (class: tiled) exceeds every bound of chunked's class
    # at the largest chunked points, so dividing chunked by it would change the figure
    assert outside_larger > 0
    assert "tiled" not in {r["schedule"] for r in approx_rows}


def test_applicable_follows_the_class_table_for_every_schedule() -> None:
    env = sources.bound_env(65536, 16, 8192, 16, 0.1, 0.5, 4845)
    for b in APPROX_LOWER:
        for s in approx.SCHEDULES:
            assert sources.applicable(by_id(b.id), "poly", env, True, s) == (s in approx.CLASS_SCHEDULES[b.id]), (b.id, s)
    # a tiled run is divided by the matmul bound, the largest there; a chunked run at the same point is not
    row = {"algorithm": "poly", "N": 65536, "d": 16, "M": 8192, "eps": 0.1, "B": 0.5, "r": 4845}
    lows = compute.proved_lower_bounds(sources.all_bounds())
    assert compute.best_lower_bound(lows, {**row, "schedule": "tiled"})[1] == "approx.lower.matmul"
    assert compute.best_lower_bound(lows, {**row, "schedule": "chunked"})[1] == "approx.lower.row-resident"  # its class: chunked


def test_a_run_that_records_no_schedule_gets_only_the_bounds_of_every_schedule() -> None:
    """Rows of a store written before runs recorded their schedule and r: only 4Nd (class: all, no r)."""
    row = {"algorithm": "poly", "N": 65536, "d": 16, "M": 8192, "eps": 0.1, "B": 0.5}
    lows = compute.proved_lower_bounds(sources.all_bounds())
    assert compute.best_lower_bound(lows, row) == (4 * 65536 * 16, "approx.lower.trivial")
    assert [sources.in_class(by_id(b.id), None) for b in APPROX_LOWER] == [set(approx.CLASS_SCHEDULES[b.id]) == set(approx.SCHEDULES) for b in APPROX_LOWER]
