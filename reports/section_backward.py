"""Report section: the backward pass and the training step (regime map, measured ÷ bound, the tightest-constant
table against the best backward lower bound, log-log slopes, forward + backward against the sum of the bounds).

:func:`section` is the report's section function (listed in ``reports/report.py``'s ``SECTIONS``); it fills a
:class:`attnio.reports.render.Section` through :func:`fill`. Deterministic: no timings, fixed formats.

:func:`gate_entries` gives the regression gate (reports/gate.py) its backward figures: count-only I/O at
:data:`GATE_POINTS`, the exact backward formulas, the backward bounds and the backward constants table.
"""

from __future__ import annotations

import math
from typing import Any

from attnio.algorithms import auto
from attnio.algorithms import registry as reg
from attnio.algorithms import run as rb
from attnio.bounds import backward as bb
from attnio.bounds import constants as cons
from attnio.bounds import costs, expr
from attnio.reports import plots
from attnio.reports.compute import Context
from attnio.reports.render import Section

from attnio.errors import InvalidParameter

MAP_N = 4096
MAP_DS = [8, 16, 32, 64, 128, 256]
MAP_MS = [2**k for k in range(6, 21)]
SLOPE_NS = [2**k for k in range(12, 17)]
SLOPE_POINTS = [("flash2-bwd", 64, 16384), ("flash1-fit-bwd", 64, 16384), ("square_tiling-bwd", 128, 4096), ("standard-bwd", 64, 16384)]
MEASURE_POINTS = [(4096, 64, 16384), (4096, 64, 65536), (4096, 128, 4096), (16384, 128, 131072)]
TRAINING_POINT = (4096, 64, 65536)
PAIRS = ["flash2", "flash2-square", "flash1", "flash1-fit", "standard", "square_tiling", "auto"]
GATE_POINTS = [(1024, 64, 16384), (4096, 64, 65536), (4096, 128, 4096), (65536, 128, 262144), (1000, 13, 777)]


def _unit(N: int, d: int, M: int) -> float:
    return N * N * d * d / M


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
    best: dict[tuple[int, int], str] = {}
    tight: dict[tuple[int, int], str] = {}
    for d in MAP_DS:
        for M in MAP_MS:
            name = "none fits"
            try:
                name = auto.choose("backward", MAP_N, d, M)[0]
            except InvalidParameter:  # nothing fits
                pass
            best[(d, M)] = name
            tight[(d, M)] = bb.best_lower_bound(MAP_N, d, M, None if name == "none fits" else name)[0]
    s.p(
        f"Regime map of the backward at N = {MAP_N}: in each cell the backward schedule with the least exact I/O "
        f"(candidates {', '.join(cands)}; flash1-bwd as published exceeds M and is excluded) / the largest backward "
        "lower bound whose model covers it. “·M<d²” marks the small-cache side."
    )
    s.fig("backward_regime_map", plots.regime_map(MAP_N, MAP_DS, MAP_MS, best, tight), f"Backward regime map at N = {MAP_N}")
    Ms = [M for M in MAP_MS if math.log2(M) % 2 == 0]
    s.table(
        ["d \\ M"] + [f"2^{int(math.log2(M))}" for M in Ms],
        [[str(d)] + [best[(d, M)] + f" / {tight[(d, M)]}" + (" ·M<d²" if M < d * d else "") for M in Ms] for d in MAP_DS],
    )

    # measured ÷ bound -----------------------------------------------------------------------------------
    rows = []
    for N, d, M in MEASURE_POINTS:
        for name in sorted(F):
            spec = reg.get(name)
            if M < spec.tiling_cls.min_M(N, d, d):
                continue
            meas = rb.count(name, N=N, d=d, M=M)
            form = costs.backward_cost(name, N=N, d=d, M=M)
            lb_id, lb = bb.best_lower_bound(N, d, M, name)
            rows.append([N, d, M, name, meas.io_words, "yes" if meas.io == form else "NO", f"{meas.io_words / _unit(N, d, M):.2f}",
                         lb_id, f"{meas.io_words / float(lb):.3f}" if lb > 0 else "—", "overflows M" if meas.overflowed else "fits"])
    s.p("Measured (count-only run on the machine) against the exact formula and the best backward lower bound covering the "
        "schedule; constant in units of N²d²/M (d_v = d).")
    s.table(["N", "d", "M", "schedule", "measured words", "= formula", "constant", "best lower bound", "measured ÷ bound", "fast memory"], rows)

    # tightest constants ------------------------------------------------------------------------------------
    table = bb.backward_constants_table()
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
            s.p("z3 verdicts of the backward claims (solver/claims_backward.py): consistency of every backward bound with every "
                "backward exact cost, tightest constants (c in cost ≤ c·shape + 12Nd), the crossover, the training step.")
            s.table(["claim", "verdict", "constant"], sorted(vt))
    else:
        s.p("Backward claims: verification not run here (`attnio verify --list` lists them, ids `backward.*`).")

    # log-log slopes ---------------------------------------------------------------------------------------
    srows = []
    for name, d, M in SLOPE_POINTS:
        ios = [rb.count(name, N=N, d=d, M=M).io_words for N in SLOPE_NS]
        slope = (math.log(ios[-1]) - math.log(ios[0])) / (math.log(SLOPE_NS[-1]) - math.log(SLOPE_NS[0]))
        srows.append([name, d, M, f"{SLOPE_NS[0]}..{SLOPE_NS[-1]}", f"{slope:.3f}"])
    s.p("Log-log slope of measured backward I/O in N (2 = quadratic, as every bound here).")
    s.table(["schedule", "d", "M", "N range", "slope"], srows)

    # training step ----------------------------------------------------------------------------------------
    N, d, M = TRAINING_POINT
    env = {"N": N, "d": d, "M": M, "dv": d}
    fwd_lb = max(float(expr.evaluate(b.expr, env)) for b in (cons.B1, cons.B2) if all(r.holds(env) for r in b.regime))
    bwd_lb = float(bb.best_lower_bound(N, d, M, "flash2-bwd")[1])
    trows = []
    for fwd in PAIRS:
        try:
            st = rb.run(fwd, pass_="step", N=N, d=d, M=M, count_only=True)
        except Exception as e:  # noqa: BLE001  (a forward that does not fit M at this point)
            trows.append([fwd, "—", "—", "—", "—", f"not run: {type(e).__name__}"])
            continue
        f, b = st.forward.measurement, st.backward.measurement
        bname = st.backward.algorithm + (f" → {st.backward.tiling.algorithm}" if st.backward.algorithm == "auto-bwd" else "")
        trows.append([fwd + (f" → {st.forward.tiling.algorithm}" if fwd == "auto" else ""), bname, f.io_words, b.io_words, f.io_words + b.io_words,
                      f"{(f.io_words + b.io_words) / (fwd_lb + bwd_lb):.3f}" + (" (overflows M)" if f.overflowed or b.overflowed else "")])
    s.p(f"One training step (forward, then its backward; `attnio run <forward> --backward`) at N = {N}, d = {d}, M = {M}, against "
        f"the sum of the best proved forward bound (B1/B2: {fwd_lb:,.0f}) and the best backward bound covering flash2-bwd ({bwd_lb:,.0f}).")
    s.table(["forward", "backward", "forward words", "backward words", "total", "total ÷ (sum of bounds)"], trows)
    f1, f2 = costs.backward_cost("flash1-bwd", N=N, d=d, M=M).io_words, costs.backward_cost("flash2-bwd", N=N, d=d, M=M).io_words
    s.p(f"FA-1 against FA-2 backward at this point: flash1-bwd (published blocks) moves {f1:,d} words, flash2-bwd {f2:,d}: "
        f"ratio {f1 / f2:.3f}.")
    return s


def section(ctx: Context) -> Section:
    """The report's section function: the backward pass and the training step."""
    return fill(Section("Backward pass and training step"), ctx.verdicts)


def gate_entries() -> dict[str, dict[str, Any]]:
    """Backward figures for the gate: ``io`` (count-only reads/writes at GATE_POINTS, keyed like the forward's
    rows), ``formulas``, ``bounds`` and ``constants`` (keys prefixed ``bwd:`` where they could clash)."""
    from attnio.algorithms import registry as reg
    from attnio.algorithms.run import count
    from attnio.bounds import backward as bb
    from attnio.bounds.costs import BACKWARD_FORMULAS
    from attnio.bounds.expr import to_json

    io: dict[str, Any] = {}
    for name in reg.names("backward"):
        for N, d, M in GATE_POINTS:
            if M < reg.get(name).tiling_cls.min_M(N, d, d):
                continue
            m = count(name, N=N, d=d, M=M)
            io[f"{name}|N={N}|d={d}|dv={d}|M={M}|eps=-|B=-"] = {"reads": m.reads_words, "writes": m.writes_words}
    formulas = {
        f"bwd:{name}": {"reads": to_json(f.reads), "writes": to_json(f.writes), "valid": [to_json(r) for r in f.valid]}
        for name, f in sorted(BACKWARD_FORMULAS.items())
    }
    bounds = {
        b.id: {"kind": b.kind, "model": b.model, "explicit": b.explicit, "expr": to_json(b.expr),
               "regime": [to_json(r) for r in b.regime], "constant": None if b.constant is None else str(b.constant)}
        for b in bb.BOUNDS
    }
    constants = {
        f"bwd:N={r.N}|d={r.d}|M={r.M}": {
            "lower_constant": str(r.best_bound_constant),
            "upper_constant": str(r.best_schedule_constant),
            "best_proved_bound": r.best_bound,
            "best_schedule": r.best_schedule,
        }
        for r in bb.backward_constants_table()
    }
    return {"io": io, "formulas": formulas, "bounds": bounds, "constants": constants}
