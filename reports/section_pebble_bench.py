"""Report section: the pebbling benchmark (certified optima of attention graphs, three games, every bound beside).

:func:`section` reads the committed table ``reports/pebbling.json`` (written by ``attnio pebble --benchmark``,
docs/pebbling.md §9) and lays it out; it computes nothing beyond comparing each recorded bound with the row's
proved sides (:func:`attnio.solver.pebble.small_bounds.verdict`). Deterministic apart from the recorded seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnio.reports import committed
from attnio.reports.render import Section
from attnio.solver.pebble.small_bounds import verdict

MARK = {"confirms": "✓", "refuted": "✗", "open": "?"}

TABLE = Path(__file__).with_name("pebbling.json")


def _opt(r: dict[str, Any]) -> str:
    if r.get("status") == "optimal":
        return str(r["opt"])
    if r.get("status") == "infeasible":
        return "infeasible"
    return f"[{r.get('lower')}, {r.get('upper')}] gap {r.get('gap')}"


def _verdicts(r: dict[str, Any]) -> dict[str, str]:
    """Each lower bound's and small form's verdict on the row (recorded, or from the row's proved sides)."""
    vals = {**(r.get("lower_bounds") or {}), **(r.get("small_forms") or {})}
    return {k: (r.get("verdicts") or {}).get(k) or verdict(v, r) for k, v in vals.items()}


def _forms(r: dict[str, Any]) -> str | None:
    forms, marks = r.get("small_forms") or {}, _verdicts(r)
    return ", ".join(f"{k} {v} {MARK[marks[k]]}" for k, v in sorted(forms.items())) or None


def section(ctx: Any = None, path: Path = TABLE) -> Section:
    s = Section("Pebbling benchmark: certified optima")
    data = committed.load(path)
    if data is None:
        return s.p("No benchmark table (reports/pebbling.json): run `attnio pebble --benchmark`.")
    rows, meta = data["rows"], data["meta"]
    s.p(
        f"Exact red-blue pebbling of attention graphs, {len(rows)} rows, {meta.get('time_limit_s')} s per row "
        f"(A* search, then OR-Tools CP-SAT hinted with the best schedule; docs/pebbling.md §9). ‘optimal’ is certified: "
        "the schedule replayed by the independent rule checker, the lower side proved (by A*, by the trivial "
        "bound, or by CP-SAT with its horizon proved sufficient in the one-shot game). Otherwise the bracket and "
        f"its gap. Load average when run: {meta.get('load_average')} on {meta.get('cpus')} cores."
    )
    table = []
    for r in rows:
        lbs = {**(r.get("lower_bounds") or {}), **(r.get("small_forms") or {})}
        best_lb = max(lbs.items(), key=lambda kv: (kv[1], kv[0])) if lbs else None
        costs = r.get("costs") or {}
        cheapest = min(costs.items(), key=lambda kv: (kv[1], kv[0])) if costs else None
        table.append([
            r["N"], r["d"], r["M"], r["game"] + (" causal" if r.get("causal") else "")
            + (" backward" if r.get("computation") == "backward" else ""), r["vertices"], r["edges"], _opt(r),
            r.get("lower_by"), r.get("solver"), r.get("seconds"), r.get("cpu_seconds"),
            None if best_lb is None else f"{best_lb[1]:.4g} ({best_lb[0]})",
            _forms(r), None if cheapest is None else f"{cheapest[1]} ({cheapest[0]})",
        ])
    s.table(["N", "d", "M", "game", "vertices", "edges", "OPT", "lower side by", "solver", "s", "CPU s",
             "largest lower bound", "small forms (✓ ≤ proved lower side, ✗ > OPT: refuted, ? open)", "cheapest schedule"],
            table)
    tally: dict[str, dict[str, int]] = {}
    for r in rows:
        for k, v in _verdicts(r).items():
            tally.setdefault(k, {"confirms": 0, "open": 0, "refuted": 0})[v] += 1
    s.p("Per bound and small form, rows that confirm it / leave it open / refute it: " + "; ".join(
        f"{k} {t['confirms']}/{t['open']}/{t['refuted']}" for k, t in sorted(tally.items())) + ".")
    std = {(r["N"], r["d"], r["M"]): r for r in rows if r["game"] == "one-shot" and not r.get("causal")}
    drops = [(r, std[r["N"], r["d"], r["M"]]) for r in rows if r["game"] == "prbp" and (r["N"], r["d"], r["M"]) in std]
    lines = []
    for p, o in drops:
        if p.get("upper") is not None and o.get("lower") is not None and p["upper"] < o["lower"]:
            lines.append(f"N={p['N']}, d={p['d']}, M={p['M']}: PRBP ≤ {p['upper']} < {o['lower']} ≤ standard one-shot")
    s.p("Partial computations (PRBP) proved below the standard one-shot game: " + ("; ".join(lines) if lines else "none on these rows") + ".")
    return s
