"""The report's sections. Each is one function ``section_*(ctx) -> Section``: it reads the sweep rows and the
verdicts from the :class:`~attnio.reports.compute.Context`, computes with :mod:`attnio.reports.compute` and
lays out with the :class:`~attnio.reports.render.Section` builder (``s.p``, ``s.table``, ``s.fig``). Their
order is the one list in :mod:`attnio.reports.report`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from attnio import __version__
from attnio.bounds.expr import to_text
from attnio.reports import compute, plots, sources
from attnio.reports.compute import Context
from attnio.reports.render import ERROR_FLOOR, Section, fmt, fmt_error

MAP_N = 4096
MAP_DS = [8, 16, 32, 64, 128, 256]
MAP_MS = [2**k for k in range(6, 21)]
CROSSOVER_POINTS = [(N, 64, 16384, 0.1) for N in (1024, 4096, 16384, 65536)]


def section_summary(ctx: Context) -> Section:
    """One screen: per regime, the best schedule, the best proved lower bound, the ratio, the verification."""
    s = Section("Summary")
    bounds = sources.all_bounds()
    sums = compute.regime_summaries(ctx, bounds)
    s.p(
        "Per regime of the sweep: the schedules that moved the fewest words, with the share of configurations each "
        "won (ties count for each; d_v = d; audit-mode schedules and auto, which runs the cheapest of the others, excluded), the best proved lower bound (the largest explicit lower bound not under "
        "review that applies to the run; for an approximate run, evaluated at the rank r of the run and only among "
        "the bounds whose class of schedules holds the schedule it ran) at the configuration with the largest N, "
        "measured ÷ bound there and its median over the regime, and the z3 verdicts of the claims about the regime's bounds."
    )
    rows = []
    for r in sums:
        p = r.largest
        claims = "verification not run" if not r.verified else (
            "no claim" if not r.claims else f"{r.claims.get('proved', 0)}/{sum(r.claims.values())} proved"
            + "".join(f", {n} {k}" for k, n in sorted(r.claims.items()) if k != "proved")
        )
        rows.append([
            compute.REGIME_TITLES[r.regime],
            r.configs,
            ", ".join(f"{a} {n}/{r.configs}" for a, n in sorted(r.wins.items(), key=lambda kv: (-kv[1], kv[0]))) or None,
            None if p is None else f"{p.bound} at {p.key}",
            None if p is None else f"{p.ratio:.3g} ({p.schedule}" + ("" if p.variant is None else f" {p.variant} r={p.r}") + ")",  # who measured p.io
            None if r.median_ratio is None else f"{r.median_ratio:.3g} over {len(r.points)}",
            claims,
        ])
    s.table(["regime", "configurations", "best schedule (wins)", "best proved lower bound", "measured ÷ bound (schedule)", "median ÷ bound", "claims about its bounds"], rows)
    if ctx.verdicts is None:
        s.p("Verification not run (--no-verify).")
    else:
        counts = compute.verdict_counts(ctx.verdicts)
        s.p(f"Verification: {len(ctx.verdicts)} claims, " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + " (details in the last section).")
    return s


def section_what_was_run(ctx: Context) -> Section:
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
    cands = compute.exact_candidates()
    best: dict[tuple[int, int], str] = {}
    for d in MAP_DS:
        for M in MAP_MS:
            b = compute.best_exact(MAP_N, d, M, cands)
            best[(d, M)] = b[1] if b else "none fits"
    bounds = sources.all_bounds()
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
    regime_map(s, "regime_map", MAP_N, MAP_DS, MAP_MS, best, tight, f"Regime map at N = {MAP_N}")
    s.p("Cells: best algorithm / tightest lower bound; “·M<d²” marks the small-cache side of M = d².")
    return s


def regime_map(s: Section, stem: str, N: int, ds: list[int], ms: list[int], best: dict, tight: dict, caption: str) -> None:
    """Add a regime map to ``s``: the figure ``stem`` (every (d, M) cell: ``best[(d, M)]`` / ``tight[(d, M)]``) and
    the same cells as a table at the M that are even powers of two ("·M<d²" marking the small-cache side)."""
    s.fig(stem, plots.regime_map(N, ds, ms, best, tight), caption)
    Ms = [M for M in ms if math.log2(M) % 2 == 0]
    s.table(
        ["d \\ M"] + [f"2^{int(math.log2(M))}" for M in Ms],
        [[str(d)] + [best[(d, M)] + f" / {tight[(d, M)]}" + (" ·M<d²" if M < d * d else "") for M in Ms] for d in ds],
    )


def section_bounds_by_regime(ctx: Context) -> Section:
    s = Section("Bounds per regime, and measured I/O against them")
    bounds = sources.all_bounds()
    verd = None if ctx.verdicts is None else compute.claims_by_bound(ctx.verdicts, [b.id for b in bounds])
    s.p(
        "The regimes a reader thinks in: small cache (M < d²), large cache (d² ≤ M ≤ Nd), beyond (M > Nd), "
        "approximate attention, and the bounds that are not about forward attention in (N, d, M). A bound is listed "
        "under every regime its own regime meets. z3 verdict: the verdicts of the claims that declare themselves "
        "about the bound (consistency with every exact cost, derivation steps, tightest constants), e.g. “3/3 "
        "proved”. Proved constant: the bound's leading constant where a proof gives it. Attained by: the schedules "
        "that attain the bound (`attnio bounds --id ID` shows their exact formulas and the claims). Measured ÷ "
        "bound: over the runs a bound applies to; an approximate lower bound applies only to runs of a schedule in "
        "its class (docs/approx.md §5), at the rank r of the run."
    )
    per_regime = compute.bounds_by_regime(bounds)
    frame, ratios = ctx.frames
    runs_in = frame[frame["status"] == "ok"].groupby("regime").size()
    for regime in compute.REGIME_NAMES:
        bs = per_regime[regime]
        if not bs:
            continue
        s.p(f"**Regime: {compute.REGIME_TITLES[regime]}**")
        s.table(
            ["bound", "kind", "formula", "regime", "theorem", "status", "z3 verdict", "proved constant", "attained by"],
            [
                [
                    b.id,
                    b.kind + ("" if b.explicit else " (asymptotic)"),
                    f"`{to_text(b.expr)}`",
                    " ∧ ".join(str(r) for r in b.regime) or "all",
                    b.provenance,
                    b.status,
                    compute.verdict_text(verd, b.id),
                    None if b.constant is None else str(b.constant),
                    ", ".join(b.attained_by) or None,
                ]
                for b in bs
            ],
        )
        if regime == compute.OTHER:
            continue
        ids = {b.id: b for b in bs}
        n_runs = int(runs_in.get(regime, 0))
        stats = compute.ratio_stats(ratios, regime, list(ids))
        if len(stats):
            s.table(
                ["algorithm", "bound", "kind", "configs", "measured ÷ bound (median)", "measured ÷ bound (max)", "min"],
                [[t.algorithm, t.bound, ids[t.bound].kind, int(t.configs), float(t.median), float(t.max), float(t.min)]
                 for t in stats.reset_index().itertuples(index=False)],
            )
        elif not n_runs:
            s.p("No configuration of the sweep lies in this regime.")
        elif not any(b.explicit for b in bs):
            s.p(f"{n_runs} runs of the sweep lie in this regime; every bound listed here is asymptotic only (Θ/Ω/O, no explicit constant), so no measured ÷ bound is computed.")
        else:
            s.p(f"{n_runs} runs of the sweep lie in this regime; no explicit bound listed here applies to them (model, regime or value).")
    return s


def section_formula_check(ctx: Context) -> Section:
    s = Section("Measured counts against the exact cost formulas")
    s.p(f"For every algorithm with a cost formula, the machine's count must equal the formula at every configuration; real-arithmetic runs are checked against the float64 reference. An error below {ERROR_FLOOR:.0e} is float64 rounding, whose last digits differ between BLAS builds; it is printed as that bucket.")
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
                fmt_error(max(errs)) if errs else "–",
                f"{sum(1 for r in rs if r['peak_fast_words'] <= r['M'])}/{len(rs)}",
            ]
        )
    s.table(["algorithm", "configs", "with arithmetic", "count = formula", "max abs error", "peak ≤ M"], rows)
    return s


def section_loglog(ctx: Context) -> Section:
    s = Section("Measured I/O against N")
    s.p("Log-log, one panel per algorithm: markers are measured words, solid lines the exact cost formula, dotted lines the tightest applicable explicit lower bound of the catalog (bounds under review excluded). The slope is the least-squares fit of log io against log N over the four largest N of each series (2 for Θ(N²) I/O).")
    by: dict[tuple[str, int, int, int], list[dict[str, Any]]] = defaultdict(list)
    for r in ctx.ok:
        if r.get("eps") is None:
            by[(r["algorithm"], r["d"], r["dv"], r["M"])].append(r)
    kinds = {b.id: (b.kind, b.status != "under review") for b in sources.all_bounds()}
    slope_rows = []
    for a in sorted({k[0] for k in by}):
        series = []
        for key in sorted(k for k in by if k[0] == a):
            rs = sorted(by[key], key=lambda r: r["N"])
            if len(rs) < 2:
                continue
            _, d, dv, M = key
            lows = [max([v for bid, v in (r.get("bounds") or {}).items() if kinds.get(bid) == ("lower", True)], default=None) for r in rs]
            series.append({"label": f"d={d} M={M}" + (f" dv={dv}" if dv != d else ""), "N": [r["N"] for r in rs], "io": [r["io"] for r in rs], "formula": [r.get("formula_io") for r in rs], "lower": lows})
            top = rs[-4:]  # the four largest N: the asymptotic slope, not the lower-order terms
            slope_rows.append([a, d, M, f"{top[0]['N']}–{top[-1]['N']}", f"{compute.slope([r['N'] for r in top], [r['io'] for r in top]):.3f}"])
        if series:
            s.fig(f"io_vs_N_{_safe(a)}", plots.io_vs_N(a, series), f"{a}: measured I/O against N")
    s.table(["algorithm", "d", "M", "N range", "fitted slope"], slope_rows)
    return s


def section_crossover(ctx: Context) -> Section:
    s = Section("Approximate versus exact attention: the crossover")
    rows = []
    for N, d, M, eps in CROSSOVER_POINTS:
        c = sources.crossover_B(N, d, M, eps)
        if isinstance(c, dict):
            rows.append([N, d, M, eps, c.get("flash2_io"), _b(c.get("B_below")), c.get("poly_io_below"), c.get("schedule_below"),
                         _b(c.get("B")), c.get("poly_io"), c.get("g"), "yes" if c.get("B") is None and c.get("poly_wins_at_B_lo") else ("no" if c.get("B") is None else "")])
        else:
            rows.append([N, d, M, eps, None, None, None, None, _b(c), None, None, ""])
    if rows:
        s.p("B* is the bound on |entries| of Q and K at which the approximate algorithm (poly, its cheapest schedule, by its exact formulas) stops moving fewer words than flash2 at the same (N, d, M) and error ε; just below B* poly moves fewer (bounds.approx.crossover_B).")
        s.table(["N", "d", "M", "ε", "flash2 io", "B just below B*", "poly io there", "poly schedule", "B*", "poly io at B*", "degree g at B*", "no B* in range: poly always wins"], rows)
    approx = [r for r in ctx.ok if r.get("eps") is not None]
    if approx:
        cands = compute.exact_candidates()
        s.p("Measured: approximate runs on the machine against the exact algorithm with the least I/O at the same (N, d, M) (by the exact cost formulas, which equal the measured counts). Max abs error: real-arithmetic runs only (bounded random inputs), against the float64 reference.")
        table = []
        for r in sorted(approx, key=lambda r: (r["algorithm"], r["d"], r["M"], r["eps"], r["B"], r["N"])):
            b = compute.best_exact(r["N"], r["d"], r["M"], cands)
            table.append([r["algorithm"], r["N"], r["d"], r["M"], r["eps"], r["B"], r["io"], None if b is None else f"{b[0]} ({b[1]})",
                          None if b is None else r["io"] / b[0], fmt_error(r.get("max_abs_error"))])
        s.table(["algorithm", "N", "d", "M", "ε", "B", "io", "best exact io", "approx ÷ exact", "max abs error"], table)
    elif not rows:
        s.p("No approximate algorithm in this sweep.")
    return s


def section_flash1(ctx: Context) -> Section:
    s = Section("FlashAttention-1 as published: working set against M")
    f1 = [r for r in ctx.ok if r["algorithm"] in ("flash1", "flash1-fit")]
    if not f1:
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
    rows = sources.constants_table()
    if not rows:
        return s.p("The constants table is empty.")
    if all(k in rows[0] for k in ("best_schedule", "best_proved_bound", "ratio")):
        s.p("At each point, the cheapest exact schedule (by its cost formula, d_v = d) against the best proved lower bound: B3 (refereed) where it is the largest, the larger of BSPV and BSPV-near (both products charged, refereed) in the small cache (bounds.constants). Constants in units of the row's unit: N²d²/M in the large cache, N²d/√M in the small cache. The headline is schedule ÷ bound; ÷ B3 is shown wherever B3's regime holds in the large cache.")
        s.table(
            ["N", "d", "M", "regime", "unit", "best schedule", "its constant", "best proved lower bound", "its constant", "schedule ÷ bound", "÷ B3"],
            [[r["N"], r["d"], r["M"], r.get("regime"), r.get("unit", "N²d²/M"), r["best_schedule"], r.get("best_schedule_constant"), r["best_proved_bound"],
              r.get("best_proved_constant"), r["ratio"], r.get("ratio_if_b3")] for r in sorted(rows, key=lambda r: (r.get("unit", ""), r["N"], r["d"], r["M"]))],
        )
        if rows[0].get("statuses"):
            s.p("Status of the constants: " + rows[0]["statuses"] + ".")
        asym = sources.asymptotic_constants()
        if asym:
            s.p("Leading constants in the limit d → ∞, M/d² → ∞, M/(Nd) → 0 (units of N²d²/M):")
            s.table(["", "constant"], [[k, v] for k, v in sorted(asym.items())])
        return s
    return _dict_table(s, rows)


def section_verification(ctx: Context) -> Section:
    s = Section("Verification")
    if ctx.verdicts is None:
        return s.p("Verification not run (--no-verify).")
    counts: dict[str, int] = defaultdict(int)
    for v in ctx.verdicts:
        counts[v["verdict"]] += 1
    s.p("z3 verdicts of every claim (proved = the negation is unsat for every parameter of the regime, the regime holds at an integer witness point and every expression is defined on it; unknown, vacuous or error is never a pass): " + ", ".join(f"{k}: {n}" for k, n in sorted(counts.items())) + ".")
    by_solver: dict[str, int] = defaultdict(int)
    for v in ctx.verdicts:
        for solver, st in (v.get("solvers") or {}).items():
            by_solver[solver] += st == "proved"
    if by_solver:
        s.p("Claims proved by each solver in this run: " + ", ".join(f"{k} {n} of {len(ctx.verdicts)}" for k, n in sorted(by_solver.items())) + ".")
    cc = ctx.info.get("crosscheck")
    if cc is None:
        s.p("Second opinion: no cvc5 record (reports/crosscheck.json; write it with `attnio verify --solver both --record reports/crosscheck.json`).")
    else:
        line = (f"Second opinion (the committed record reports/crosscheck.json of `attnio verify --solver both`, in which "
                f"cvc5 re-proves every obligation z3 proved; see docs/solver.md): z3 proved {cc['z3_proved']} and cvc5 "
                f"re-proved {cc['cvc5_proved']} of the {cc['claims']} claims as they are now")
        if not cc.get("header_matches", True):
            line += ("; the record was written by other solver versions or before a change to the encoding "
                     "(solver/record.py), so none of its entries is counted (re-run `attnio verify --stale --solver both "
                     "--record reports/crosscheck.json`)")
        elif cc["stale"]:
            line += f"; {len(cc['stale'])} claims are new or changed since the record and were not re-checked ({', '.join(cc['stale'])})"
        if cc["not_reproved"]:
            line += f"; not re-proved by cvc5: {', '.join(cc['not_reproved'])}"
        s.p(line + ".")
    s.p("Reproducibility: every solver call runs under a resource limit counted by the solver (solver/engine.py), with no wall-clock limit that can change a verdict, so these verdicts are the same on a fast or a loaded machine.")
    s.table(["claim", "verdict", "constant", "solver"], [[v["id"], v["verdict"], v["constant"], v["solver"]] for v in ctx.verdicts])
    return s




# helpers -------------------------------------------------------------------------------------------------


def _b(x: Any) -> str | None:
    return None if x is None else f"{x:.4g}"


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)




def _dict_table(s: Section, rows: list[dict[str, Any]]) -> Section:
    if not rows:
        return s.p("The source returned no rows.")
    headers = list(rows[0].keys())
    for r in rows[1:]:
        headers += [k for k in r if k not in headers]
    body = sorted(([r.get(h) for h in headers] for r in rows), key=lambda r: [fmt(c) for c in r])
    return s.table(headers, body)
