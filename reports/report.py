"""The regime report: Markdown (renders on GitHub) and one self-contained HTML page, from the same blocks.

Each section is one small function ``section_*(ctx) -> Section``. A section whose source module is not built
says so ("section unavailable: <module> not built") instead of being empty. Output is deterministic: rows
sorted, floats in fixed formats, SVG figures with a fixed hash salt and no dates, no timestamps or timings in
the body (they go to ``_work/report-meta.json``, which is not part of the report).

Files written into ``out`` (default ``reports/``): ``REPORT.md``, ``report.html``, ``figures/*.svg``.
"""

from __future__ import annotations

import base64
import html
import json
import math
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnio.reports import sources
from attnio.reports.store import write_atomic

MAP_N = 4096
MAP_DS = [8, 16, 32, 64, 128, 256]
MAP_MS = [2**k for k in range(6, 21)]
CROSSOVER_POINTS = [(N, 64, 16384, 0.1) for N in (1024, 4096, 16384, 65536)]


# blocks -------------------------------------------------------------------------------------------------


@dataclass
class Section:
    title: str
    blocks: list[tuple[Any, ...]] = field(default_factory=list)

    def p(self, text: str) -> Section:
        self.blocks.append(("p", text))
        return self

    def table(self, headers: list[str], rows: list[list[Any]]) -> Section:
        self.blocks.append(("table", headers, [[_fmt(c) for c in r] for r in rows]))
        return self

    def fig(self, name: str, svg: str, caption: str) -> Section:
        self.blocks.append(("fig", name, svg, caption))
        return self

    def unavailable(self, module: str, why: str = "not built") -> Section:
        self.blocks.append(("p", f"**section unavailable: {module} {why}**"))
        return self


@dataclass
class Context:
    rows: list[dict[str, Any]]  # every row of the sweep, sorted by key
    verdicts: list[dict[str, Any]] | sources.SourceUnavailable | None  # None: verification not run
    title_note: str = ""
    pebbling: list[dict[str, Any]] | sources.SourceUnavailable | None = None  # None: not computed
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("status") == "ok"]


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        return f"{x:.3g}" if abs(x) < 1e5 else f"{x:.3e}"
    return str(x)


def _exact_candidates() -> list[str]:
    """Exact algorithms with a cost formula that respect M (audit-mode ones exceed it; auto is their argmin)."""
    from attnio.algorithms import registry
    from attnio.bounds import costs
    from attnio.reports.grid import is_approximate

    out = []
    for name in registry.names():
        spec = registry.REGISTRY[name]
        if spec.audit or name == "auto" or is_approximate(name) or not spec.cost or spec.cost not in costs.FORMULAS:
            continue
        out.append(name)
    return out


def _best_exact(N: int, d: int, M: int, cands: list[str]) -> tuple[int, str] | None:
    """(io, name) of the exact algorithm with the least I/O at (N, d, M) by the cost formulas."""
    from attnio.algorithms import registry
    from attnio.bounds import costs

    vals = []
    for name in cands:
        try:
            vals.append((costs.cost(registry.REGISTRY[name].cost, N=N, d=d, M=M).io_words, name))
        except (ValueError, ZeroDivisionError):
            continue
    return min(vals) if vals else None


def _bounds_or(sec: Section) -> list[Any] | None:
    try:
        return sources.all_bounds()
    except sources.SourceUnavailable as e:
        sec.unavailable(e.module, e.why)
        return None


def _spec(name: str) -> Any:
    from attnio.algorithms import registry

    return registry.REGISTRY.get(name)


# sections ------------------------------------------------------------------------------------------------


def section_summary(ctx: Context) -> Section:
    from attnio import __version__

    s = Section("What was run")
    rows = ctx.rows
    algs = sorted({r["algorithm"] for r in rows})
    n_num = sum(1 for r in ctx.ok if not r["count_only"])
    s.p(
        f"attnio {__version__}. {len(rows)} configurations of {len(algs)} algorithms ({', '.join(algs)}): "
        f"{n_num} with real arithmetic (float64, checked against the reference), {len(ctx.ok) - n_num} count-only "
        f"(same counts, no arithmetic), {len(rows) - len(ctx.ok)} recorded as errors."
        + (f" {ctx.title_note}" if ctx.title_note else "")
    )
    s.p("Every count is exact: one word slow→fast is one read, one word fast→slow is one write; the machine enforces the fast-memory capacity M on every load and allocation (audit-mode algorithms record their overflow instead).")
    errs = [r for r in rows if r.get("status") != "ok"]
    if errs:
        s.p("Configurations that raised a documented error (bad or unsupported configuration):")
        s.table(["configuration", "error"], [[r["key"], r["error"]] for r in errs[:40]])
        if len(errs) > 40:
            s.p(f"… and {len(errs) - 40} more.")
    return s


def section_regime_map(ctx: Context) -> Section:
    """The (d, M) plane at N = MAP_N: best algorithm by exact cost formula, tightest lower bound."""

    s = Section(f"Regime map: the (d, M) plane at N = {MAP_N}")
    cands = _exact_candidates()
    best: dict[tuple[int, int], str] = {}
    for d in MAP_DS:
        for M in MAP_MS:
            b = _best_exact(MAP_N, d, M, cands)
            best[(d, M)] = b[1] if b else "none fits"
    bounds = _bounds_or(s)
    tight = None
    if bounds is not None:
        tight = {}
        for d in MAP_DS:
            for M in MAP_MS:
                env = {"N": MAP_N, "d": d, "M": M, "dv": d}
                vals = [(sources.bound_value(b, env), b.id) for b in bounds if b.kind == "lower" and b.status != "under review" and sources.applicable(b, "", env, False)]
                vals = [(v, i) for v, i in vals if v is not None]
                tight[(d, M)] = max(vals, key=lambda t: (t[0], [-ord(ch) for ch in t[1]]))[1] if vals else "none applies"
    s.p(
        f"Each cell is one (d, M) at N = {MAP_N}. Left: the algorithm with the least exact I/O by its cost formula "
        f"(candidates: {', '.join(cands) or 'none'}; audit-mode algorithms excluded because they exceed M). "
        "Right: the catalog's explicit lower bound with the largest value there (the tightest; bounds under review excluded). Dashed: M = d²; below "
        "the line (M < d²) is the small-cache regime."
    )
    s.fig("regime_map", __import__("attnio.reports.plots", fromlist=["x"]).regime_map(MAP_N, MAP_DS, MAP_MS, best, tight), f"Regime map at N = {MAP_N}")
    Ms = [M for M in MAP_MS if math.log2(M) % 2 == 0]
    s.table(
        ["d \\ M"] + [f"2^{int(math.log2(M))}" + (" (=d²)" if False else "") for M in Ms],
        [[str(d)] + [best[(d, M)] + (f" / {tight[(d, M)]}" if tight else "") + (" ·M<d²" if M < d * d else "") for M in Ms] for d in MAP_DS],
    )
    s.p("Cells: best algorithm" + (" / tightest lower bound" if tight else "") + "; “·M<d²” marks the small-cache side of M = d².")
    return s


def section_bounds_by_regime(ctx: Context) -> Section:
    from attnio.bounds.expr import to_text

    s = Section("Bounds per regime, and measured I/O against them")
    bounds = _bounds_or(s)
    if bounds is None:
        return s
    verd = _claims_by_bound(ctx, s, [b.id for b in bounds])
    by_regime: dict[str, list[Any]] = defaultdict(list)
    for b in bounds:
        by_regime[" ∧ ".join(str(r) for r in b.regime) or "all parameters"].append(b)
    s.p("z3 verdict: the verdicts of the claims about each bound (consistency with every exact cost, derivation steps, tightness), e.g. “3/3 proved”; a claim counts for every bound it declares itself about (consistency claims count for the lower bound and for the exact cost), else for the bound whose id it contains. Proved constant: the bound's leading constant where a proof gives it.")
    for regime in sorted(by_regime):
        bs = sorted(by_regime[regime], key=lambda b: b.id)
        s.p(f"**Regime: {regime}**")
        s.table(
            ["bound", "kind", "formula", "theorem", "status", "z3 verdict", "proved constant"],
            [
                [
                    b.id,
                    b.kind + ("" if b.explicit else " (asymptotic)"),
                    f"`{to_text(b.expr)}`",
                    b.provenance,
                    b.status,
                    _verdict_text(verd, b.id),
                    None if b.constant is None else str(b.constant),
                ]
                for b in bs
            ],
        )
        ids = {b.id: b for b in bs}
        stats: dict[tuple[str, str], list[float]] = defaultdict(list)
        for r in ctx.ok:
            for bid, ratio in (r.get("ratios") or {}).items():
                if bid in ids:
                    stats[(r["algorithm"], bid)].append(ratio)
        if stats:
            s.table(
                ["algorithm", "bound", "kind", "configs", "measured ÷ bound (median)", "measured ÷ bound (max)", "min"],
                [
                    [a, bid, ids[bid].kind, len(v), statistics.median(v), max(v), min(v)]
                    for (a, bid), v in sorted(stats.items())
                ],
            )
        else:
            s.p("No configuration of the sweep lies in this regime.")
    return s


def section_formula_check(ctx: Context) -> Section:
    s = Section("Measured counts against the exact cost formulas")
    s.p("For every algorithm with a cost formula, the machine's count must equal the formula at every configuration; real-arithmetic runs are checked against the float64 reference.")
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in ctx.ok:
        by[r["algorithm"]].append(r)
    rows = []
    for a in sorted(by):
        rs = by[a]
        with_f = [r for r in rs if r.get("formula_io") is not None]
        errs = [r["max_abs_error"] for r in rs if r.get("max_abs_error") is not None]
        rows.append(
            [
                a,
                len(rs),
                sum(1 for r in rs if not r["count_only"]),
                f"{sum(1 for r in with_f if r['formula_io'] == r['io'])}/{len(with_f)}" if with_f else "no formula",
                f"{max(errs):.1e}" if errs else "–",
                f"{sum(1 for r in rs if r['peak_fast_words'] <= r['M'])}/{len(rs)}",
            ]
        )
    s.table(["algorithm", "configs", "with arithmetic", "count = formula", "max abs error", "peak ≤ M"], rows)
    return s


def section_loglog(ctx: Context) -> Section:
    from attnio.reports import plots

    s = Section("Measured I/O against N")
    s.p("Log-log, one panel per algorithm: markers are measured words, solid lines the exact cost formula, dotted lines the tightest applicable explicit lower bound of the catalog (bounds under review excluded). The slope is the least-squares fit of log io against log N over the four largest N of each series (2 for Θ(N²) I/O).")
    by: dict[tuple[str, int, int, int], list[dict[str, Any]]] = defaultdict(list)
    for r in ctx.ok:
        if r.get("eps") is None:
            by[(r["algorithm"], r["d"], r["dv"], r["M"])].append(r)
    slope_rows = []
    for a in sorted({k[0] for k in by}):
        series = []
        for key in sorted(k for k in by if k[0] == a):
            rs = sorted(by[key], key=lambda r: r["N"])
            if len(rs) < 2:
                continue
            _, d, dv, M = key
            lows = [max([v for bid, v in (r.get("bounds") or {}).items() if _kind(bid) == "lower" and _status(bid) != "under review"], default=None) for r in rs]
            series.append({"label": f"d={d} M={M}" + (f" dv={dv}" if dv != d else ""), "N": [r["N"] for r in rs], "io": [r["io"] for r in rs], "formula": [r.get("formula_io") for r in rs], "lower": lows})
            top = rs[-4:]  # the four largest N: the asymptotic slope, not the lower-order terms
            slope_rows.append([a, d, M, f"{top[0]['N']}–{top[-1]['N']}", f"{_slope([r['N'] for r in top], [r['io'] for r in top]):.3f}"])
        if series:
            s.fig(f"io_vs_N_{_safe(a)}", plots.io_vs_N(a, series), f"{a}: measured I/O against N")
    s.table(["algorithm", "d", "M", "N range", "fitted slope"], slope_rows)
    return s


def section_crossover(ctx: Context) -> Section:
    s = Section("Approximate versus exact attention: the crossover")
    rows = []
    try:
        for N, d, M, eps in CROSSOVER_POINTS:
            c = sources.crossover_B(N, d, M, eps)
            if isinstance(c, dict):
                rows.append([N, d, M, eps, c.get("flash2_io"), _b(c.get("B_below")), c.get("poly_io_below"), c.get("schedule_below"),
                             _b(c.get("B")), c.get("poly_io"), c.get("g"), "yes" if c.get("B") is None and c.get("poly_wins_at_B_lo") else ("no" if c.get("B") is None else "")])
            else:
                rows.append([N, d, M, eps, None, None, None, None, _b(c), None, None, ""])
    except sources.SourceUnavailable as e:
        s.unavailable(e.module, e.why)
    if rows:
        s.p("B* is the bound on |entries| of Q and K at which the approximate algorithm (poly, its cheapest schedule, by its exact formulas) stops moving fewer words than flash2 at the same (N, d, M) and error ε; just below B* poly moves fewer (bounds.approx.crossover_B).")
        s.table(["N", "d", "M", "ε", "flash2 io", "B just below B*", "poly io there", "poly schedule", "B*", "poly io at B*", "degree g at B*", "no B* in range: poly always wins"], rows)
    approx = [r for r in ctx.ok if r.get("eps") is not None]
    if approx:
        cands = _exact_candidates()
        s.p("Measured: approximate runs on the machine against the exact algorithm with the least I/O at the same (N, d, M) (by the exact cost formulas, which equal the measured counts). Max abs error: real-arithmetic runs only (bounded random inputs), against the float64 reference.")
        table = []
        for r in sorted(approx, key=lambda r: (r["algorithm"], r["d"], r["M"], r["eps"], r["B"], r["N"])):
            b = _best_exact(r["N"], r["d"], r["M"], cands)
            table.append([r["algorithm"], r["N"], r["d"], r["M"], r["eps"], r["B"], r["io"], None if b is None else f"{b[0]} ({b[1]})",
                          None if b is None else r["io"] / b[0], None if r.get("max_abs_error") is None else f"{r['max_abs_error']:.1e}"])
        s.table(["algorithm", "N", "d", "M", "ε", "B", "io", "best exact io", "approx ÷ exact", "max abs error"], table)
    elif not rows:
        s.p("No approximate algorithm in this sweep.")
    return s


def section_flash1(ctx: Context) -> Section:
    from attnio.reports import plots

    s = Section("FlashAttention-1 as published: working set against M")
    f1 = [r for r in ctx.ok if r["algorithm"] in ("flash1", "flash1-fit")]
    if not f1:
        if _spec("flash1") is None:
            return s.unavailable("attnio.algorithms.flash1")
        return s.p("No flash1 configuration in this sweep.")
    s.p("FlashAttention (Dao et al. 2022) Algorithm 1 sets B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d). Run in audit mode, the machine records the peak fast-memory words the schedule needs; above the line peak = M it does not fit in M.")
    groups: dict[tuple[str, int, int], list[dict[str, Any]]] = defaultdict(list)
    for r in f1:
        groups[(r["algorithm"], r["N"], r["d"])].append(r)
    series, rows = [], []
    groups = {k: v for k, v in groups.items() if len({r["M"] for r in v}) >= 5}  # the M sweeps only
    if not groups:
        return s.p("No flash1 configuration swept over five or more M in this sweep.")
    for (a, N, d), rs in sorted(groups.items()):
        rs = sorted(rs, key=lambda r: r["M"])
        if len(rs) >= 2:
            series.append({"label": f"{a} N={N} d={d}", "M": [r["M"] for r in rs], "peak": [r["peak_fast_words"] for r in rs]})
        for r in rs:
            rows.append([a, N, d, r["M"], r["peak_fast_words"], r["peak_fast_words"] / r["M"], r["overflowed"], r["io"]])
    if series:
        s.fig("flash1_working_set", plots.working_set(series), "FlashAttention-1 working set against M")
    s.table(["algorithm", "N", "d", "M", "peak fast words", "peak ÷ M", "overflows M", "io"], rows)
    return s


def section_pebbling(ctx: Context) -> Section:
    s = Section("Optimal pebbling: the sandwich")
    if isinstance(ctx.pebbling, sources.SourceUnavailable):
        return s.unavailable(ctx.pebbling.module, ctx.pebbling.why)
    if ctx.pebbling is None:
        return s.p("Not computed in this report (`attnio report` computes it; `attnio pebble` runs one instance).")
    s.p(
        "Exact optimum OPT of the red-blue pebble game (recomputation allowed) on tiny graphs, between every explicit "
        f"lower bound of the catalog and the exact cost of every algorithm (solver.pebble). The search stops after "
        f"{sources.PEBBLE_MAX_STATES:,} states (a deterministic limit): status “bounds” then gives OPT ∈ [lower, upper]."
    )
    rows = []
    for r in ctx.pebbling:
        inst = r["instance"]
        lbs, cs = r.get("lower_bounds") or {}, r.get("costs") or {}
        lb = max(lbs.items(), key=lambda kv: (kv[1], kv[0])) if lbs else None
        c = min(cs.items(), key=lambda kv: (kv[1], kv[0])) if cs else None
        rows.append([
            inst.get("graph"), ", ".join(f"{k}={v}" for k, v in inst.items() if k not in ("graph", "tree")), r.get("vertices"), r.get("status"),
            r.get("opt") if r.get("opt") is not None else f"[{r.get('opt_lower')}, {r.get('opt_upper')}]",
            None if lb is None else f"{lb[1]:.4g} ({lb[0]})", None if c is None else f"{c[1]} ({c[0]})",
            len(r.get("violations") or []), r.get("states"),
        ])
    s.table(["graph", "instance", "vertices", "status", "OPT", "best explicit lower bound", "cheapest algorithm", "violations", "states searched"], rows)
    for r in ctx.pebbling:
        for v in r.get("violations") or []:
            s.p(f"Finding: {v}")
    return s


def section_constants(ctx: Context) -> Section:
    s = Section("Tight constants")
    try:
        rows = sources.constants_table()
    except sources.SourceUnavailable as e:
        return s.unavailable(e.module, e.why)
    if not rows:
        return s.p("The constants table is empty.")
    if all(k in rows[0] for k in ("best_schedule", "best_proved_bound", "ratio")):
        s.p("At each point, the cheapest exact schedule (by its cost formula, d_v = d) against the best proved lower bound; constants in units of N²d²/M (bounds.constants).")
        s.table(
            ["N", "d", "M", "regime", "best schedule", "its constant", "best proved lower bound", "its constant", "schedule ÷ bound", "÷ B3 (under review)"],
            [[r["N"], r["d"], r["M"], r.get("regime"), r["best_schedule"], r.get("best_schedule_constant"), r["best_proved_bound"],
              r.get("best_proved_constant"), r["ratio"], r.get("ratio_if_b3")] for r in sorted(rows, key=lambda r: (r["N"], r["d"], r["M"]))],
        )
        if rows[0].get("statuses"):
            s.p("Status of the constants: " + str(rows[0]["statuses"]) + ".")
        try:
            asym = sources.asymptotic_constants()
        except sources.SourceUnavailable:
            asym = {}
        if asym:
            s.p("Leading constants in the limit d → ∞, M/d² → ∞, M/(Nd) → 0 (units of N²d²/M):")
            s.table(["", "constant"], [[k, v] for k, v in sorted(asym.items())])
        return s
    return _dict_table(s, rows)


def section_verification(ctx: Context) -> Section:
    s = Section("Verification")
    if ctx.verdicts is None:
        return s.p("Verification not run (--no-verify).")
    if isinstance(ctx.verdicts, sources.SourceUnavailable):
        return s.unavailable(ctx.verdicts.module, ctx.verdicts.why)
    counts: dict[str, int] = defaultdict(int)
    for v in ctx.verdicts:
        counts[v["verdict"]] += 1
    s.p("z3 verdicts of every claim (proved = the negation is unsat for every parameter of the regime, the regime holds at an integer witness point and every expression is defined on it; unknown, vacuous or error is never a pass): " + ", ".join(f"{k}: {n}" for k, n in sorted(counts.items())) + ".")
    by_solver: dict[str, int] = defaultdict(int)
    for v in ctx.verdicts:
        for solver, st in (v.get("solvers") or {}).items():
            by_solver[solver] += st == "proved"
    if by_solver:
        s.p("Claims proved by each solver: " + ", ".join(f"{k} {n} of {len(ctx.verdicts)}" for k, n in sorted(by_solver.items())) + " (cvc5 re-proves every obligation z3 proved with `attnio verify --solver both`; see docs/solver.md).")
    s.p("Reproducibility: every solver call runs under a resource limit counted by the solver (solver/engine.py), with no wall-clock limit that can change a verdict, so these verdicts are the same on a fast or a loaded machine.")
    s.table(["claim", "verdict", "constant", "solver"], [[v["id"], v["verdict"], v["constant"], v["solver"]] for v in ctx.verdicts])
    return s


SECTIONS: list[Callable[[Context], Section]] = [
    section_summary,
    section_regime_map,
    section_bounds_by_regime,
    section_formula_check,
    section_loglog,
    section_crossover,
    section_flash1,
    section_pebbling,
    section_constants,
    section_verification,
]


# helpers -------------------------------------------------------------------------------------------------


_KINDS: dict[str, tuple[str, str]] = {}


def _kind(bound_id: str) -> str | None:
    if not _KINDS:
        try:
            _KINDS.update({b.id: (b.kind, b.status) for b in sources.all_bounds()})
        except sources.SourceUnavailable:
            return None
    return _KINDS.get(bound_id, (None, None))[0]


def _status(bound_id: str) -> str | None:
    _kind(bound_id)
    return _KINDS.get(bound_id, (None, None))[1]


def _claims_by_bound(ctx: Context, s: Section, bound_ids: list[str]) -> dict[str, list[dict[str, Any]]] | None:
    """Verdicts grouped by the bound each claim is about; None when verification was not run."""
    if ctx.verdicts is None:
        return None
    if isinstance(ctx.verdicts, sources.SourceUnavailable):
        s.p(f"z3 verdicts: section unavailable: {ctx.verdicts.module} {ctx.verdicts.why}")
        return {}
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    known = set(bound_ids)
    for v in ctx.verdicts:
        # the claim's own links (Claim.about) where it declares them; else the bound named in its id
        linked = [b for b in v.get("about") or () if b in known] or [sources.bound_of_claim(v["id"], bound_ids)]
        for b in linked:
            if b is not None:
                out[b].append(v)
    return out


def _verdict_text(verd: dict[str, list[dict[str, Any]]] | None, bound_id: str) -> str:
    if verd is None:
        return "verification not run"
    vs = verd.get(bound_id, [])
    if not vs:
        return "no claim"
    counts: dict[str, int] = defaultdict(int)
    for v in vs:
        counts[v["verdict"]] += 1
    proved = counts.pop("proved", 0)
    return f"{proved}/{len(vs)} proved" + "".join(f", {n} {k}" for k, n in sorted(counts.items()))


def _dict_table(s: Section, rows: list[dict[str, Any]]) -> Section:
    if not rows:
        return s.p("The source returned no rows.")
    headers = list(rows[0].keys())
    for r in rows[1:]:
        headers += [k for k in r if k not in headers]
    body = sorted(([r.get(h) for h in headers] for r in rows), key=lambda r: [_fmt(c) for c in r])
    return s.table(headers, body)


def _slope(xs: list[int], ys: list[int]) -> float:
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) if y > 0 else 0.0 for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / den if den else float("nan")


def _b(x: Any) -> str | None:
    return None if x is None else f"{x:.4g}"


def _fmt_any(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return _fmt(x)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


# rendering -----------------------------------------------------------------------------------------------


def render_markdown(sections: list[Section], fig_dir: str = "figures") -> str:
    out = ["# attnio regime report", "", "Generated by `attnio report`. Same inputs give byte-identical files; see `reports/report.html` for the self-contained page.", ""]
    for s in sections:
        out += [f"## {s.title}", ""]
        for b in s.blocks:
            if b[0] == "p":
                out += [b[1], ""]
            elif b[0] == "table":
                _, headers, rows = b
                esc = lambda c: str(c).replace("|", "\\|").replace("\n", " ")  # noqa: E731
                out.append("| " + " | ".join(esc(h) for h in headers) + " |")
                out.append("|" + "|".join("---" for _ in headers) + "|")
                out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
                out.append("")
            elif b[0] == "fig":
                _, name, _, caption = b
                out += [f"![{caption}]({fig_dir}/{name}.svg)", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def render_html(sections: list[Section]) -> str:
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>attnio regime report</title>',
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.4}"
        "table{border-collapse:collapse;margin:0.5em 0 1.2em;font-size:0.85em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
        "th{background:#f3f3f3}code{background:#f6f6f6}img{max-width:100%}</style></head><body>",
        "<h1>attnio regime report</h1>",
        "<p>Generated by <code>attnio report</code>. Same inputs give byte-identical files.</p>",
    ]
    for s in sections:
        out.append(f"<h2>{e(s.title)}</h2>")
        for b in s.blocks:
            if b[0] == "p":
                out.append(f"<p>{_inline_html(b[1])}</p>")
            elif b[0] == "table":
                _, headers, rows = b
                out.append("<table><thead><tr>" + "".join(f"<th>{e(str(h))}</th>" for h in headers) + "</tr></thead><tbody>")
                out += ["<tr>" + "".join(f"<td>{_inline_html(str(c))}</td>" for c in r) + "</tr>" for r in rows]
                out.append("</tbody></table>")
            elif b[0] == "fig":
                _, name, svg, caption = b
                data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
                out.append(f'<figure><img alt="{e(caption)}" src="data:image/svg+xml;base64,{data}"><figcaption>{e(caption)}</figcaption></figure>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _inline_html(text: str) -> str:
    """Escape, then the two Markdown marks the report uses: **bold** and `code`."""
    t = html.escape(text)
    parts = t.split("**")
    t = "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts)) if len(parts) % 2 else t
    parts = t.split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)) if len(parts) % 2 else t


# building ------------------------------------------------------------------------------------------------


def build(ctx: Context) -> list[Section]:
    return [fn(ctx) for fn in SECTIONS]


def write(sections: list[Section], out: str | Path) -> list[Path]:
    """Write REPORT.md, report.html and figures/*.svg atomically; remove figures this run did not produce."""
    out = Path(out)
    figdir = out / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    written = []
    names = set()
    for s in sections:
        for b in s.blocks:
            if b[0] == "fig":
                p = figdir / f"{b[1]}.svg"
                write_atomic(p, b[2])
                names.add(p.name)
                written.append(p)
    for old in sorted(figdir.glob("*.svg")):
        if old.name not in names:
            old.unlink()
    for name, text in (("REPORT.md", render_markdown(sections)), ("report.html", render_html(sections))):
        write_atomic(out / name, text)
        written.append(out / name)
    return written


def pebbling_tasks() -> list[tuple[Callable[..., Any], tuple[Any, ...]]] | sources.SourceUnavailable:
    """One side task per pebbling instance (``sources.pebble_row``)."""
    try:
        return [(sources.pebble_row, t) for t in sources.pebble_tasks()]
    except sources.SourceUnavailable as e:
        return e


def make_report(
    rows: list[dict[str, Any]],
    out: str | Path = "reports",
    *,
    verify: bool = True,
    verdicts: Any = None,
    pebbling: Any = None,
    note: str = "",
    meta: dict[str, Any] | None = None,
) -> list[Path]:
    """Build every section and write the files. ``verdicts``: the verifier's answer if already computed
    (a list, or a SourceUnavailable); otherwise it is computed here unless ``verify=False``. Timings go to
    ``out/_work/report-meta.json``, outside the deterministic files."""
    t0 = time.perf_counter()
    if verdicts is None and verify:
        try:
            verdicts = sources.verdicts()
        except sources.SourceUnavailable as e:
            verdicts = e
    t_verify = time.perf_counter() - t0
    if isinstance(verdicts, list):
        m_seconds = {v["id"]: v.get("seconds") for v in verdicts}
        verdicts = [{k: x for k, x in v.items() if k != "seconds"} for v in verdicts]
    else:
        m_seconds = {}
    ctx = Context(sorted(rows, key=lambda r: r["key"]), verdicts, note, pebbling)
    sections = build(ctx)
    written = write(sections, out)
    m = dict(meta or {})
    m.update(verify_seconds=round(t_verify, 3), render_seconds=round(time.perf_counter() - t0 - t_verify, 3), unix_time=time.time(), claim_seconds=m_seconds)
    write_atomic(Path(out) / "_work" / "report-meta.json", json.dumps(m, indent=1, sort_keys=True) + "\n")
    return written
