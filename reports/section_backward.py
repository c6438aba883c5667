"""Report section: the backward pass and the training step (regime map, measured ÷ bound, the tightest-constant
table against the best backward lower bound, log-log slopes, forward + backward against the sum of the bounds).

:func:`section` is the report's section function (listed in ``reports/report.py``'s ``SECTIONS``); it fills a
:class:`attnio.reports.render.Section` through :func:`fill`. Layout only: every figure comes from
:mod:`attnio.reports.figures` (which also gives the gate its backward figures). Deterministic: no timings,
fixed formats.
"""

from __future__ import annotations

from typing import Any

from attnio.algorithms import registry as reg
from attnio.bounds import backward as bb
from attnio.bounds import costs
from attnio.reports import figures, sources
from attnio.reports.compute import Context
from attnio.reports.render import Section
from attnio.reports.sections import regime_map


def fill(s: Any, verdicts: list[dict[str, Any]] | None = None) -> Any:
    """Fill section ``s`` with the backward pass; ``verdicts``: the z3 verdicts (dicts with id, verdict,
    constant), or None when verification did not run."""
    F = costs.BACKWARD_FORMULAS
    s.p(
        "The backward pass (dQ, dK, dV from Q, K, V, O, dO and the forward's saved statistics; docs/costs.md#backward) "
        "on the same two-level machine. Schedules: " + ", ".join(f"`{n}` ({reg.get(n).summary})" for n in reg.names("backward")) + ". "
        "Lower bounds (docs/bounds/backward.md and, for M ≤ d², docs/bounds/backward-small.md; derived here, standard "
        "backward CDAG): "
        + "; ".join(f"`{b.id}`: {b.statement}" for b in bb.BOUNDS) + "."
    )

    # regime map -----------------------------------------------------------------------------------------
    cands = [n for n in reg.candidates("backward") if n in F]
    best, tight = figures.backward_regime_map()
    N_map, ds, ms = figures.BWD_MAP_N, figures.BWD_MAP_DS, figures.BWD_MAP_MS
    s.p(
        f"Regime map of the backward at N = {N_map}: in each cell the backward schedule with the least exact I/O "
        f"(candidates {', '.join(cands)}; flash1-bwd as published exceeds M and is excluded) / the largest backward "
        "lower bound whose model covers it. “·M<d²” marks the small-cache side."
    )
    regime_map(s, "backward_regime_map", N_map, ds, ms, best, tight, f"Backward regime map at N = {N_map}")

    # measured ÷ bound -----------------------------------------------------------------------------------
    rows = [[r["N"], r["d"], r["M"], r["name"], r["io"], "yes" if r["equals_formula"] else "NO", f"{r['constant']:.2f}",
             r["bound"], "—" if r["ratio"] is None else f"{r['ratio']:.3f}", "overflows M" if r["overflowed"] else "fits"]
            for r in figures.backward_measured()]
    s.p("Measured (count-only run on the machine) against the exact formula and the best backward lower bound covering the "
        "schedule; constant in units of N²d²/M (d_v = d).")
    s.table(["N", "d", "M", "schedule", "measured words", "= formula", "constant", "best lower bound", "measured ÷ bound", "fast memory"], rows)

    # tightest constants ------------------------------------------------------------------------------------
    table = sources.backward_constants_table()
    s.p("Tight constants of the backward at the forward's constants-table points: the cheapest backward schedule that fits M "
        "and flash2-bwd against the best backward lower bound covering them (units of N²d²/M).")
    s.table(
        ["N", "d", "M", "best schedule", "its constant", "flash2-bwd constant", "best lower bound", "its constant", "flash2-bwd ÷ bound", "best ÷ bound"],
        [[r.N, r.d, r.M, r.best_schedule, f"{r.best_schedule_constant:.3f}", f"{r.flash2_bwd_constant:.3f}", r.best_bound,
          f"{r.best_bound_constant:.3f}", f"{r.ratio_flash2_bwd:.3f}", f"{r.ratio_best:.3f}"] for r in table],
    )
    small = bb.small_cache_table()
    s.p("Small cache (M ≤ d²): square_tiling-bwd against BWD-dP-small (the small-cache bound covering it) and flash2-bwd "
        "against BWD-SdP-small, units of N²d/√M (docs/bounds/backward-small.md#numbers).")
    s.table(
        ["N", "d", "M", "BWD-dP-small", "BWD-SdP-small", "square_tiling-bwd", "÷ BWD-dP-small", "flash2-bwd", "÷ BWD-SdP-small"],
        [[r.N, r.d, r.M, f"{r.dp_small_constant:.3f}", f"{r.sdp_small_constant:.3f}", f"{r.square_tiling_bwd_constant:.2f}",
          f"{r.ratio_square_tiling_bwd:.2f}", f"{r.flash2_bwd_constant:.2f}", f"{r.ratio_flash2_bwd:.2f}"] for r in small],
    )
    if verdicts:
        vt = [[v["id"], v["verdict"], v.get("constant") or ""] for v in verdicts if str(v.get("id", "")).startswith("backward.")]
        if vt:
            s.p("z3 verdicts of the backward claims (solver/claims/backward.py): consistency of every backward bound with every "
                "backward exact cost, tightest constants (c in cost ≤ c·shape + 12Nd), the crossover, the training step.")
            s.table(["claim", "verdict", "constant"], sorted(vt))
    else:
        s.p("Backward claims: verification not run here (`attnio verify --list` lists them, ids `backward.*`).")

    # log-log slopes ---------------------------------------------------------------------------------------
    ns = figures.BWD_SLOPE_NS
    srows = [[r["name"], r["d"], r["M"], f"{ns[0]}..{ns[-1]}", f"{r['slope']:.3f}"] for r in figures.backward_slopes()]
    s.p("Log-log slope of measured backward I/O in N (2 = quadratic, as every bound here).")
    s.table(["schedule", "d", "M", "N range", "slope"], srows)

    # training step ----------------------------------------------------------------------------------------
    t = figures.backward_training()
    N, d, M, fwd_lb, bwd_lb = t["N"], t["d"], t["M"], t["forward_bound"], t["backward_bound"]
    trows = []
    for r in t["rows"]:
        if "error" in r:
            trows.append([r["forward"], "—", "—", "—", "—", f"not run: {r['error']}"])
            continue
        total = r["forward_io"] + r["backward_io"]
        trows.append([r["forward"], r["backward"], r["forward_io"], r["backward_io"], total,
                      f"{total / (fwd_lb + bwd_lb):.3f}" + (" (overflows M)" if r["overflowed"] else "")])
    s.p(f"One training step (forward, then its backward; `attnio run <forward> --backward`) at N = {N}, d = {d}, M = {M}, against "
        f"the sum of the best proved forward bound (B1/B2: {fwd_lb:,.0f}) and the best backward bound covering flash2-bwd ({bwd_lb:,.0f}).")
    s.table(["forward", "backward", "forward words", "backward words", "total", "total ÷ (sum of bounds)"], trows)
    f1, f2 = t["flash1_bwd"], t["flash2_bwd"]
    s.p(f"FA-1 against FA-2 backward at this point: flash1-bwd (published blocks) moves {f1:,d} words, flash2-bwd {f2:,d}: "
        f"ratio {f1 / f2:.3f}.")
    return s


def section(ctx: Context) -> Section:
    """The report's section function: the backward pass and the training step."""
    return fill(Section("Backward pass and training step"), ctx.verdicts)
