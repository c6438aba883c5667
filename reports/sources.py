"""The data a report draws on from the lower layers (bounds catalog, verifier, constants, approximate attention,
pebbling), each behind one small function that turns it into plain, sortable, printable data.

Imports are static: a missing module is an import error, never a silently shorter report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, is_dataclass
from fractions import Fraction
from typing import Any

from attnio.bounds import approx, backward, catalog, constants
from attnio.bounds.costs import BACKWARD_FORMULAS, FORMULAS, cheapest, costs_at
from attnio.bounds.expr import Expr, Rel, evaluate, free_symbols, to_text
from attnio.bounds.types import APPROXIMATE, Bound
from attnio.solver import claims, verify
from attnio.solver.pebble import graphs, sandwich

# bounds catalog ---------------------------------------------------------------------------------------


def all_bounds() -> list[Bound]:
    """Every :class:`~attnio.bounds.types.Bound` of the catalog, sorted by id."""
    return sorted(catalog.all_bounds(), key=lambda b: b.id)


def applicable(bound: Any, algorithm: str, env: dict[str, Any], approximate: bool, schedule: str | None = None) -> bool:
    """Does ``bound`` speak about ``algorithm`` at ``env``: explicit, every symbol given, regime holds, and, for an
    approximate lower bound, ``schedule`` (the poly schedule the run used) in the bound's class (:func:`in_class`).

    Lower and upper bounds apply to every exact algorithm (approximate ones only where the bound's ``cdag`` is
    ``"approximate-algorithms"``); ``exact`` bounds apply only to the algorithm their model names (``"algorithm flash2"``)."""
    if not bound.explicit or bound.computation != "forward":  # the sweep runs forward passes
        return False
    if bound.kind == "exact" and bound.model != f"algorithm {algorithm}":
        return False
    if approximate != (bound.cdag == APPROXIMATE) and bound.kind != "exact":
        return False
    if approximate and not in_class(bound, schedule):
        return False
    syms = {s.name for s in free_symbols(bound.expr)}
    for r in bound.regime:
        syms |= {s.name for s in free_symbols(r)}
    if not syms <= set(env):
        return False
    try:
        return all(r.holds(env) for r in bound.regime)
    except (ZeroDivisionError, ValueError):
        return False


def in_class(bound: Any, schedule: str | None) -> bool:
    """Is a run of the poly schedule ``schedule`` in the class of schedules ``bound`` is proved for
    (:data:`attnio.bounds.approx.CLASS_SCHEDULES`, docs/approx.md §5)? A bound outside that table has no class
    (True); a run that does not say which schedule it used (``None``) is in a class only if the class holds
    every schedule.

    >>> from attnio.bounds.catalog import by_id
    >>> [in_class(by_id("approx.lower.matmul"), s) for s in ("tiled", "chunked", None)]
    [True, False, False]
    >>> [in_class(by_id("approx.lower.trivial"), s) for s in ("chunked", None)]
    [True, True]
    """
    cls = approx.CLASS_SCHEDULES.get(bound.id)
    if cls is None:
        return True
    return set(approx.SCHEDULES) <= set(cls) if schedule is None else schedule in cls


def bound_env(N: int, d: int, M: int, dv: int, eps: float | None = None, B: float | None = None, r: int | None = None) -> dict[str, Any]:
    """The symbols a bound is evaluated at for one run: N, d, M, dv; ε and B (as fractions) for an approximate
    run, and r, the rank of the polynomial it used, where the run records it."""
    env: dict[str, Any] = {"N": N, "d": d, "M": M, "dv": dv}
    for name, v in (("eps", eps), ("B", B)):
        if v is not None:
            env[name] = Fraction(v).limit_denominator(10**9)
    if r is not None:
        env["r"] = r
    return env


def bound_value(bound: Any, env: dict[str, Any]) -> float | None:
    try:
        v = evaluate(bound.expr, env)
    except (ZeroDivisionError, ValueError, OverflowError):
        return None
    return float(v)


APPROXIMATE_REGIME = "approximate"  # the reader's regime of every approximate run (reports.compute.REGIME_NAMES)


def cache_regime(N: int, d: int, M: int) -> str:
    """The cache regime (``small cache``, ``large cache``, ``beyond``) of one configuration with d ≤ N; for
    d > N the first that holds."""
    env = {"N": N, "d": d, "M": M}
    for name, _, rels in catalog.CACHE_REGIMES:
        if all(r.holds(env) for r in rels):
            return name
    raise AssertionError(f"no cache regime holds at {env}")  # the partition is proved (coverage.saha-ye)


def proved_lower_bounds(bounds: list[Bound]) -> list[Bound]:
    """Explicit lower bounds a measured count can be divided by: not under review, about attention I/O."""
    return [b for b in bounds if b.kind == "lower" and b.explicit and b.status != "under review" and b.id not in catalog.NOT_IO]


# verifier ----------------------------------------------------------------------------------------------


def verdicts() -> list[dict[str, Any]]:
    """The z3 verdicts of every catalog claim as plain dicts: ``{"id", "verdict", "constant", "claim",
    "solver"}`` (no timings: they are not deterministic and never enter the report body or the gate)."""
    return verify_ids(None)


def claim_ids() -> list[str]:
    """The ids of every claim the verifier knows, so that they can be verified in parallel."""
    return list(claims.index())  # builds the per-process index before the sweep's workers fork


def verify_ids(ids: list[str] | None) -> list[dict[str, Any]]:
    """Verdicts (plain dicts, sorted by id) of the given claims (all when None). Runs in a worker too."""
    vs = verify.verify_all(ids)
    out = []
    for v in vs:
        out.append(
            {
                "id": v.id,
                "verdict": v.status,
                "constant": _fraction_text(v.constant),
                "claim": v.description,
                "kind": v.kind,
                "solver": v.solver,
                "solvers": dict(v.solvers),  # each solver's answer (z3; cvc5 with solver="both")
                "about": sorted(v.about),  # the bounds the claim is about
                "seconds": float(v.seconds),  # for meta files only
            }
        )
    return sorted(out, key=lambda r: r["id"])


CROSSCHECK = "reports/crosscheck.json"  # written by `attnio verify --solver both --record reports/crosscheck.json`


def crosscheck_summary(path: str = CROSSCHECK) -> dict[str, Any] | None:
    """What the committed proof record (:mod:`attnio.solver.record`) says about the claims as they are now:
    ``{"claims", "cvc5_proved", "z3_proved", "stale", "not_reproved", "header_matches"}``; a claim counts only
    while its entry is current: its fingerprint matches, and the record's encoding digest and the versions of the
    solvers installed here are this installation's (otherwise every claim is ``stale``: not re-checked). A solver not
    installed here (the report's own install has z3 only) cannot disagree: its recorded verdicts are read as
    recorded. None when there is no record (or it is not the expected JSON)."""
    from attnio.solver import record

    rec = record.load(path)
    if rec is None:
        return None
    rows = rec["claims"]
    current = {cid: verify.fingerprint(c) for cid, c in claims.index().items()}
    here = record.header()
    installed = {k: v for k, v in here["versions"].items() if v != "missing"}
    ok = record.header_matches(rec, {**here, "versions": {**(rec.get("versions") or {}), **installed}})
    stale = sorted(current) if not ok else sorted(
        i for i, fp in current.items() if not isinstance(rows.get(i), dict) or rows[i].get("fingerprint") != fp)
    fresh = [rows[i] for i in current if i not in set(stale)]
    solvers = [r.get("solvers") or {} for r in fresh]
    return {
        "claims": len(current),
        "z3_proved": sum(s.get("z3") == "proved" for s in solvers),
        "cvc5_proved": sum(s.get("cvc5") == "proved" for s in solvers),
        "stale": stale,
        "header_matches": ok,
        "not_reproved": sorted(i for i in current if i not in set(stale) and (rows[i].get("solvers") or {}).get("cvc5") != "proved"),
    }


# constants, approximate attention, pebbling --------------------------------------------------------------


@dataclass(frozen=True)
class ConstantsRow:
    regime: str
    N: int
    d: int
    M: int
    best_schedule: str
    best_schedule_words: int
    best_schedule_constant: float  # words / unit
    best_proved_bound: str
    best_proved_bound_words: float
    best_proved_constant: float  # bound / unit
    ratio: float  # best schedule / best proved bound (the headline: B3 where it applies, BSPV in the small cache)
    b3_words: float | None
    ratio_if_b3: float | None  # best schedule / B3, where B3's regime holds (kept under its old name)
    statuses: dict[str, str]
    unit: str = "N²d²/M"  # "N²d/√M" for small-cache rows (M < d²)

    def as_dict(self) -> dict[str, object]:
        return dict(vars(self))


def _statuses(verdicts: Mapping[str, str] | None) -> dict[str, str]:
    from attnio.bounds.proofs import proof_status

    out = {}
    for b in (constants.B1, constants.B2, constants.B3, *constants.SMALL_CACHE, constants.BSPV_CAP):
        out[b.id] = f"{b.status} ({proof_status(b.id, verdicts)})"
    return out


def _cheapest_at(n: int, dd: int, mm: int, costs: dict[str, int], unit: Fraction | float) -> dict[str, Any]:
    """The first fields of a constants row: the point (N, d, M) = (n, dd, mm), and the cheapest schedule of
    ``costs`` (:func:`attnio.bounds.costs.cheapest`) with its words, and its words in ``unit``."""
    best = cheapest(costs)
    return {"N": n, "d": dd, "M": mm, "best_schedule": best, "best_schedule_words": costs[best],
            "best_schedule_constant": float(costs[best] / unit)}


def constants_rows(
    points: tuple[tuple[int, int, int], ...] | None = None, verdicts: Mapping[str, str] | None = None
) -> list[ConstantsRow]:
    """One row per point (default: :data:`attnio.bounds.constants.TABLE_POINTS` then ``SMALL_TABLE_POINTS``): the
    cheapest exact schedule (from :data:`bounds.costs.FORMULAS`, d_v = d) against the best lower bound of
    :func:`attnio.bounds.constants.proved_lower_bounds` (B1, B2, B3 refereed, BS, BSPV, BSPV-near) and the trivial
    4Nd, whichever regime holds; the
    catalog's other explicit bounds are smaller here. Constants are in units of N²d²/M (M ≥ d²) or N²d/√M
    (M < d²) at that point.

    >>> row = constants_rows(((65536, 64, 65536),))[0]
    >>> row.best_proved_bound, round(row.ratio, 2)
    ('constants.b3', 1.12)
    >>> row = constants_rows(((4096, 128, 1024),))[0]
    >>> row.best_schedule, row.best_proved_bound, row.unit, round(row.ratio, 2)
    ('square_tiling-io', 'constants.bspv', 'N²d/√M', 1.72)
    """
    if points is None:
        points = constants.TABLE_POINTS + constants.SMALL_TABLE_POINTS
    rows = []
    for n, dd, mm in points:
        env = {"N": n, "d": dd, "M": mm, "dv": dd}
        small = mm < dd * dd
        unit = n * n * dd / mm**0.5 if small else Fraction(n * n * dd * dd, mm)
        head = _cheapest_at(n, dd, mm, costs_at(FORMULAS, n, dd, mm), unit)
        words = head["best_schedule_words"]
        proved = {
            b.id: evaluate(b.expr, env) for b in constants.proved_lower_bounds() if all(rel.holds(env) for rel in b.regime)
        }
        proved["trivial.4Nd"] = Fraction(4 * n * dd)
        lb_id = max(proved, key=lambda i: proved[i])
        lb = proved[lb_id]
        b3 = evaluate(constants.B3.expr, env) if not small and all(rel.holds(env) for rel in constants.B3.regime) else None
        regime = "small cache, d_v = d" if small else "large cache, d_v = d" + (" (B3 regime)" if b3 is not None else "")
        rows.append(
            ConstantsRow(
                regime=regime,
                **head,
                best_proved_bound=lb_id,
                best_proved_bound_words=float(lb),
                best_proved_constant=float(lb / unit),
                ratio=float(words / lb),
                b3_words=None if b3 is None else float(b3),
                ratio_if_b3=None if b3 is None else float(words / b3),
                statuses=_statuses(verdicts),
                unit="N²d/√M" if small else "N²d²/M",
            )
        )
    return rows


@dataclass(frozen=True)
class BackwardRow:
    N: int
    d: int
    M: int
    best_schedule: str
    best_schedule_words: int
    best_schedule_constant: float  # words / (N²d²/M)
    flash2_bwd_words: int
    flash2_bwd_constant: float
    best_bound: str
    best_bound_words: float
    best_bound_constant: float
    ratio_flash2_bwd: float  # flash2-bwd ÷ best backward lower bound (covering flash2-bwd)
    ratio_best: float  # best schedule ÷ best backward lower bound covering it

    def as_dict(self) -> dict[str, object]:
        return dict(vars(self))


def backward_constants_table(points: tuple[tuple[int, int, int], ...] | None = None) -> list[BackwardRow]:
    """One row per point (default: the forward's constants-table points, d_v = d): the cheapest backward
    schedule that fits M (:data:`attnio.bounds.backward.OVERFLOWS` left out) and flash2-bwd against the best
    backward lower bound that covers them (:func:`attnio.bounds.backward.best_lower_bound`).

    >>> row = backward_constants_table(((65536, 128, 1048576),))[0]
    >>> row.best_schedule, row.best_bound, round(row.ratio_flash2_bwd, 2)
    ('flash2-2pass-bwd', 'backward.bwd-slots-dv', 1.69)
    >>> backward_constants_table(((16384, 128, 131072),))[0].best_bound  # M = 8d² < 10d²
    'backward.bwd-slots-dv-x'
    """
    rows = []
    for n, dd, mm in points or constants.TABLE_POINTS:
        unit = Fraction(n * n * dd * dd, mm)
        costs = costs_at(BACKWARD_FORMULAS, n, dd, mm, skip=backward.OVERFLOWS)
        head = _cheapest_at(n, dd, mm, costs, unit)
        best = head["best_schedule"]
        lb_id, lb = backward.best_lower_bound(n, dd, mm, "flash2-bwd")
        blb_id, blb = backward.best_lower_bound(n, dd, mm, best)
        f2 = costs["flash2-bwd"]
        rows.append(
            BackwardRow(
                **head,
                flash2_bwd_words=f2,
                flash2_bwd_constant=float(f2 / unit),
                best_bound=lb_id,
                best_bound_words=float(lb),
                best_bound_constant=float(lb / unit),
                ratio_flash2_bwd=float(f2 / lb),
                ratio_best=float(costs[best] / blb),
            )
        )
    return rows


def constants_table() -> list[dict[str, Any]]:
    """Rows of the tight-constants table (:func:`constants_rows`) as plain dicts with sortable, printable values."""
    return [_plain(r) for r in constants_rows()]


def asymptotic_constants() -> dict[str, str]:
    return {str(k): str(v) for k, v in constants.ASYMPTOTIC.items()}


def crossover_B(N: int, d: int, M: int, eps: float) -> Any:
    return approx.crossover_B(N, d, M, eps)


PEBBLE_MAX_STATES = 100_000  # a deterministic stop (a time limit would make the table depend on the machine)
PEBBLE_INSTANCES = (("attention", (2, 1)), ("matmul", (2, 2, 2)))


def pebble_tasks() -> list[tuple[str, tuple[int, ...], int]]:
    """The sandwich instances, one (graph, sizes, M) per task: M from the least feasible to the trivial end."""
    out = []
    for kind, sizes in PEBBLE_INSTANCES:
        g = getattr(graphs, kind)(*sizes)
        hi = 4 * sizes[0] * sizes[1] + sizes[0] ** 2 * sizes[1] if kind == "attention" else g.n
        out += [(kind, sizes, M) for M in range(g.min_M, hi + 1)]
    return out


def pebble_row(kind: str, sizes: tuple[int, ...], M: int) -> dict[str, Any]:
    """One sandwich row (plain data; the solver's timing dropped). Runs in a worker."""
    kw = {"attention_sizes": (sizes,), "matmul_sizes": ()} if kind == "attention" else {"attention_sizes": (), "matmul_sizes": (sizes,)}
    (row,) = sandwich.sandwich_rows(**kw, M_values=[M], time_limit_s=3600.0, max_states=PEBBLE_MAX_STATES)
    row = dict(row)
    row.pop("seconds", None)
    return row


def trim_pebble_rows(rows: list[dict[str, Any]], trivial: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """Per instance, keep M up to the first row where OPT reaches the trivial bound (as sandwich_rows does)."""
    out, done = [], set()
    for r in rows:
        inst = r["instance"]
        key = tuple(sorted((k, v) for k, v in inst.items() if k != "M"))
        if key in done:
            continue
        out.append(r)
        sizes = (inst["N"], inst["d"]) if inst.get("graph") == "attention" else (inst.get("m"), inst.get("k"), inst.get("n"))
        g = getattr(graphs, inst.get("graph", "attention"))(*sizes)
        if r["opt_upper"] <= g.trivial_io:
            done.add(key)
    return out


# helpers -------------------------------------------------------------------------------------------------


def _fraction_text(x: Any) -> str | None:
    if x is None:
        return None
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _plain(r: Any) -> dict[str, Any]:
    if isinstance(r, dict):
        d = dict(r)
    elif hasattr(r, "_asdict"):
        d = r._asdict()
    elif is_dataclass(r):
        d = asdict(r)
    else:
        d = dict(vars(r))
    return {k: _cell(v) for k, v in d.items()}


def _cell(v: Any) -> Any:
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, float):
        return float(f"{v:.6g}")
    if isinstance(v, int | str | bool) or v is None:
        return v
    if isinstance(v, Expr):
        return to_text(v)
    if isinstance(v, Rel):
        return str(v)
    if isinstance(v, list | tuple):
        return ", ".join(str(_cell(x)) for x in v)
    if isinstance(v, dict):  # e.g. the status of each constant: "constants.b1: derived here (…); …"
        return "; ".join(f"{k}: {_cell(x)}" for k, x in v.items())
    return str(v)


def verification_tasks() -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
    """One side task per claim (``verify_ids([id])``), to run on the sweep's executor in parallel."""
    return [(verify_ids, ([cid],)) for cid in sorted(claim_ids())]


def pebbling_tasks() -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
    """One side task per pebbling instance (:func:`pebble_row`)."""
    return [(pebble_row, t) for t in pebble_tasks()]


def merge_verdicts(results: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return sorted((v for r in results for v in r), key=lambda v: v["id"])
