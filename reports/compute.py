"""Computing: what the report says, as plain data (no text layout, no files).

:class:`Context` is the input every section function gets (the sweep's rows, the verdicts, the pebbling rows).
The functions here derive figures from it and from the lower layers: the best exact algorithm at a point, the
cache regime of a configuration, the bounds that speak about each regime, the verdicts of the claims about each
bound (from the claims' own ``about`` links), and the per-regime summary that opens the report.

The summary and the per-regime measured ÷ bound tables are computed from the sweep's DataFrames
(:mod:`attnio.reports.frames`: ``attnio.results()`` in a notebook) by group-by, median and first-per-group, with
:func:`point_frame` and :func:`ratio_stats`, so a notebook and the report compute the same figures the same way.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from attnio.algorithms import registry
from attnio.bounds import costs
from attnio.bounds.catalog import CACHE_REGIMES, NOT_IO
from attnio.bounds.expr import Rel, free_symbols
from attnio.bounds.types import Bound
from attnio.reports import sources
from attnio.reports.frames import ratio_frame, sweep_frame
from attnio.reports.sources import cache_regime as cache_regime  # re-exported: the report's names for them
from attnio.reports.sources import proved_lower_bounds as proved_lower_bounds
from attnio.reports.store import Store

APPROXIMATE = sources.APPROXIMATE_REGIME
OTHER = "other"
# The regimes a reader thinks in: the cache partition of the catalog, then approximate attention, then the
# bounds that are not about forward attention in (N, d, M) (backward pass, matrix multiplication, components).
REGIME_NAMES: tuple[str, ...] = (*(name for name, _, _ in CACHE_REGIMES), APPROXIMATE, OTHER)
REGIME_TITLES: dict[str, str] = {
    **{name: f"{name}, {reads}" for name, reads, _ in CACHE_REGIMES},
    APPROXIMATE: "approximate attention (error ≤ ε)",
    OTHER: "other: backward pass, matrix multiplication and component bounds",
}


@dataclass
class Context:
    """What every section is computed from."""

    rows: list[dict[str, Any]]  # every row of the sweep, sorted by key
    verdicts: list[dict[str, Any]] | None  # None: verification not run
    title_note: str = ""
    pebbling: list[dict[str, Any]] | None = None  # None: not computed
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("status") == "ok"]

    @cached_property
    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(sweep frame, ratio frame) of the rows (:func:`frame_of_rows`), built once."""
        return frame_of_rows(self.rows)


def frame_of_rows(rows: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(:func:`~attnio.reports.frames.sweep_frame`, :func:`~attnio.reports.frames.ratio_frame`) of plain sweep
    rows (each with its ``key``), through an in-memory store: the report's rows become frames the way a store's do."""
    with Store(":memory:") as s:
        s.append(rows)
        return sweep_frame(s), ratio_frame(s)


# algorithms -----------------------------------------------------------------------------------------------


def exact_candidates() -> list[str]:
    """Exact algorithms with a cost formula that respect M (audit-mode ones exceed it; auto is their argmin)."""
    out = []
    for name in registry.names():
        spec = registry.get(name)
        if spec.audit or name == "auto" or spec.approximate or not spec.cost or spec.cost not in costs.FORMULAS:
            continue
        out.append(name)
    return out


def best_exact(N: int, d: int, M: int, cands: list[str]) -> tuple[int, str] | None:
    """(io, name) of the exact algorithm with the least I/O at (N, d, M) by the cost formulas."""
    vals = []
    for name in cands:
        try:
            vals.append((costs.cost(registry.get(name).cost, N=N, d=d, M=M).io_words, name))
        except (ValueError, ZeroDivisionError):
            continue
    return min(vals) if vals else None


def slope(xs: list[int], ys: list[int]) -> float:
    """Least-squares slope of log y against log x."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) if y > 0 else 0.0 for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / den if den else float("nan")


# regimes --------------------------------------------------------------------------------------------------


def row_regime(r: dict[str, Any]) -> str:
    """The reader's regime of a sweep row: approximate for approximate algorithms, else its cache regime."""
    return APPROXIMATE if r.get("eps") is not None else cache_regime(r["N"], r["d"], r["M"])


# Probe points for "does a bound's regime meet a cache regime": d ≤ N, M from 1 to far beyond Nd, just either
# side of M = d² and M = Nd but not on them (a closed regime such as M ≤ d² touches the large cache only at
# M = d², where both shapes are equal: it is a small-cache bound).
_PROBE_N = [2**k for k in range(1, 21, 3)]
_PROBE_D = [1, 2, 4, 16, 64, 256]


def _probe_points() -> list[dict[str, int]]:
    out = []
    for N in _PROBE_N:
        for d in _PROBE_D:
            if d > N:
                continue
            Ms = {2**k for k in range(0, 44, 2)} | {d * d - 1, d * d + 1, N * d - 1, N * d + 1, 4 * d * d, 8 * d * d}
            for M in sorted(m for m in Ms if m >= 1 and m not in (d * d, N * d)):
                for dv in sorted({max(1, d // 2), d, 2 * d}):
                    out.append({"N": N, "d": d, "M": M, "dv": dv})
    return out


_PROBES = _probe_points()


def _meets(bound_regime: tuple[Rel, ...], rels: tuple[Rel, ...]) -> bool:
    for env in _PROBES:
        try:
            if all(r.holds(env) for r in rels) and all(r.holds(env) for r in bound_regime):
                return True
        except (ZeroDivisionError, ValueError, KeyError):
            continue
    return False


def _approximate(name: str) -> bool:
    spec = registry.REGISTRY.get(name)
    return bool(spec and spec.approximate)


def bound_regimes(b: Bound) -> list[str]:
    """The reader's regimes a bound speaks about: approximate for approximate attention (its model, or an
    approximate algorithm that attains it), ``other`` for bounds
    not about forward attention I/O in (N, d, M); else every cache regime its own regime meets (on probe points
    with d ≤ N, both sides of M = d² and M = Nd)."""
    if "approx" in b.model.lower() or any(_approximate(a) for a in b.attained_by):
        return [APPROXIMATE]
    syms = {s.name for s in free_symbols(b.expr)}
    for r in b.regime:
        syms |= {s.name for s in free_symbols(r)}
    if b.id in NOT_IO or "backward" in b.model or not syms <= {"N", "d", "M", "dv"}:
        return [OTHER]
    return [name for name, _, rels in CACHE_REGIMES if _meets(tuple(b.regime), rels)] or [OTHER]


def bounds_by_regime(bounds: list[Bound]) -> dict[str, list[Bound]]:
    """Each reader regime -> the bounds that speak about it (a bound appears under every regime it meets)."""
    out: dict[str, list[Bound]] = {name: [] for name in REGIME_NAMES}
    for b in sorted(bounds, key=lambda b: b.id):
        for name in bound_regimes(b):
            out[name].append(b)
    return out


# verdicts -------------------------------------------------------------------------------------------------


def claims_by_bound(verdicts: list[dict[str, Any]], bound_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Verdicts grouped by the bounds each claim declares itself about (``Claim.about``)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    known = set(bound_ids)
    for v in verdicts:
        for b in v.get("about") or ():
            if b in known:
                out[b].append(v)
    return out


def verdict_counts(vs: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for v in vs:
        counts[v["verdict"]] += 1
    return dict(counts)


def verdict_text(verd: dict[str, list[dict[str, Any]]] | None, bound_id: str) -> str:
    """``"3/3 proved"`` (and any other verdicts) for the claims about one bound."""
    if verd is None:
        return "verification not run"
    vs = verd.get(bound_id, [])
    if not vs:
        return "no claim"
    counts = verdict_counts(vs)
    proved = counts.pop("proved", 0)
    return f"{proved}/{len(vs)} proved" + "".join(f", {n} {k}" for k, n in sorted(counts.items()))


# the summary ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointBest:
    """At one configuration: the schedule that moved the fewest words, and the best proved lower bound there."""

    key: str  # N, d, M (and ε, B for approximate runs)
    N: int
    d: int
    M: int
    schedule: str  # the schedules that moved the fewest words there, joined by " = " when tied
    io: int
    bound: str
    bound_value: float
    variant: str | None = None  # an approximate run's own schedule (poly's stream, chunked, tiled), where recorded
    r: int | None = None  # and the rank of its polynomial, the r its bounds are evaluated at
    eps: float | None = None  # an approximate run's ε and B
    B: float | None = None

    @property
    def ratio(self) -> float:
        return self.io / self.bound_value


@dataclass(frozen=True)
class RegimeSummary:
    regime: str
    configs: int  # sweep configurations in the regime (distinct points)
    wins: dict[str, int]  # schedule -> points where it moved the fewest words (ties count for each)
    points: list[PointBest]  # points with a proved lower bound > 0
    claims: dict[str, int]  # verdict -> claims about the regime's bounds
    verified: bool
    median_ratio: float | None = None  # the median of the points' measured ÷ bound
    largest: PointBest | None = None  # the point with the largest N (then d, M): the asymptotic end of the regime

    @property
    def best_schedule(self) -> str | None:
        return max(sorted(self.wins), key=lambda k: self.wins[k]) if self.wins else None


def _audit(name: str) -> bool:
    """Runs in audit mode (exceeds M as published). A row's algorithm may be unknown to this process (a user's
    algorithm in a sweep store): not audit then."""
    spec = registry.REGISTRY.get(name)
    return bool(spec and spec.audit)


def best_lower_bound(lows: list[Bound], row: dict[str, Any]) -> tuple[float, str] | None:
    """(value, id) of the largest positive lower bound of ``lows`` that applies to one sweep row
    (:func:`attnio.reports.sources.applicable`, at d_v = d): for an approximate run, evaluated at the rank r it
    used and only among the bounds whose class holds the schedule it ran (bounds.approx.CLASS_SCHEDULES).

    Evaluated afresh: the sweep frame's ``best_bound`` takes the largest of the values the row carries (computed
    the same way when it was swept); tests/test_results.py checks that the two agree."""
    approx = row.get("eps") is not None
    env = sources.bound_env(row["N"], row["d"], row["M"], row["d"], row.get("eps"), row.get("B"), row.get("r"))
    vals = []
    for b in lows:
        if sources.applicable(b, row["algorithm"], env, approx, row.get("schedule")):
            v = sources.bound_value(b, env)
            if v is not None and v > 0:
                vals.append((v, b.id))
    return max(vals, key=lambda t: (t[0], t[1])) if vals else None


POINT = ["N", "d", "M", "eps", "B"]  # one configuration of the sweep (the algorithms run there share it)


def point_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration (N, d, M, ε, B) of a sweep frame at d_v = d, sorted by it (exact points first):
    ``schedule``, every algorithm that moved the fewest words there (joined by " = "; auto, which runs the
    cheapest of the others, is left out unless it ran alone; audit-mode algorithms excluded: they exceed M);
    of the run with the fewest words (then the first name): ``io``, ``regime``, ``variant`` and ``r`` (an
    approximate run's schedule and rank), ``bound``, ``bound_value`` and ``ratio`` (its best proved lower
    bound: NaN where none is positive), and ``key`` (``"N=… d=… M=…"``, with ``" ε=… B=…"`` for approximate runs).
    The tied algorithms are in :func:`tied_frame`."""
    tied = tied_frame(frame)
    best = tied.groupby(POINT, dropna=False, sort=False).head(1)  # sorted by io, then name: the first is the best
    names = tied.groupby(POINT, dropna=False, sort=False)["algorithm"].agg(lambda s: " = ".join(sorted(s)))
    out = best.merge(names.rename("winners").reset_index(), on=POINT, how="left")
    out = out.assign(_e=out["eps"].fillna(-1), _b=out["B"].fillna(-1)).sort_values(["N", "d", "M", "_e", "_b"], kind="stable")
    key = [f"N={N} d={d} M={M}" + ("" if pd.isna(e) else f" ε={e} B={b}") for N, d, M, e, b in out[POINT].itertuples(index=False)]
    return pd.DataFrame({
        "key": pd.array(key, dtype="string"),
        **{c: out[c].to_numpy() for c in POINT},
        "regime": out["regime"].to_numpy(),
        "schedule": out["winners"].astype("string").to_numpy(),
        "io": out["io"].to_numpy(),
        "variant": out["schedule"].to_numpy(),
        "r": out["r"].to_numpy(),
        "bound": out["best_bound"].to_numpy(),
        "bound_value": out["best_bound_value"].to_numpy(),
        "ratio": out["ratio"].to_numpy(),
    })


def tied_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs of a sweep frame that moved the fewest words at their configuration (d_v = d, status ok;
    audit-mode algorithms and auto excluded as in :func:`point_frame`), sorted by configuration, io, name."""
    f = frame[(frame["status"] == "ok") & (frame["dv"] == frame["d"])]
    f = f[~f["algorithm"].map(_audit).astype(bool)]
    auto = f["algorithm"] == "auto"
    others = (~auto).groupby([f[c] for c in POINT], dropna=False).transform("any")
    f = f[~auto | ~others].sort_values([*POINT, "io", "algorithm"], kind="stable")
    least = f.groupby(POINT, dropna=False, sort=False)["io"].transform("min")
    return f[f["io"] == least]


def _point(p: Any) -> PointBest:
    na = pd.isna
    return PointBest(p.key, int(p.N), int(p.d), int(p.M), p.schedule, int(p.io), p.bound, float(p.bound_value),
                     None if na(p.variant) else p.variant, None if na(p.r) else int(p.r),
                     None if na(p.eps) else float(p.eps), None if na(p.B) else float(p.B))


def ratio_stats(ratios: pd.DataFrame, regime: str, bound_ids: list[str]) -> pd.DataFrame:
    """Measured ÷ bound over the runs of one regime, per (algorithm, bound) of ``bound_ids`` (a ratio frame,
    :func:`attnio.reports.frames.ratio_frame`): ``configs``, ``median``, ``max``, ``min``; sorted by algorithm, bound."""
    r = ratios[(ratios["regime"] == regime).fillna(False) & ratios["bound"].isin(bound_ids)]
    return r.groupby(["algorithm", "bound"])["ratio"].agg(configs="size", median="median", max="max", min="min")


def regime_summaries(ctx: Context, bounds: list[Bound]) -> list[RegimeSummary]:
    """One :class:`RegimeSummary` per reader regime (the ``other`` group has no measured points and is left out),
    from :func:`point_frame`: configurations per regime (group size), wins (the tied algorithms counted per
    regime), the median of measured ÷ bound over the points with a bound, and the point with the largest N."""
    pts = point_frame(ctx.frames[0])
    tied = tied_frame(ctx.frames[0])
    configs = pts.groupby("regime").size()
    wins = tied.groupby(["regime", "algorithm"]).size()
    bounded = pts[pts["bound"].notna()]
    median = bounded.groupby("regime")["ratio"].median()
    last = bounded.sort_values(["N", "d", "M", "key"], kind="stable").groupby("regime").tail(1)
    largest = {p.regime: _point(p) for p in last.itertuples(index=False)}
    by_regime = bounds_by_regime(bounds)
    verd = None if ctx.verdicts is None else claims_by_bound(ctx.verdicts, [b.id for b in bounds])
    out = []
    for name in REGIME_NAMES:
        if name == OTHER:
            continue
        claims: dict[str, int] = defaultdict(int)
        if verd is not None:
            seen: set[str] = set()
            for b in by_regime[name]:
                for v in verd.get(b.id, []):
                    if v["id"] not in seen:
                        seen.add(v["id"])
                        claims[v["verdict"]] += 1
        w = {str(a): int(n) for (reg, a), n in wins.items() if reg == name}
        points = [_point(p) for p in bounded[bounded["regime"] == name].itertuples(index=False)]
        out.append(RegimeSummary(name, int(configs.get(name, 0)), w, points, dict(claims), verd is not None,
                                 None if name not in median.index else float(median[name]), largest.get(name)))
    return out
