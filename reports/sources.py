"""The data a report draws on from the lower layers (bounds catalog, verifier, constants, approximate attention,
pebbling), each behind one small function that turns it into plain, sortable, printable data.

Imports are static: a missing module is an import error, never a silently shorter report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from fractions import Fraction
from typing import Any

from attnio.bounds import approx, catalog, constants
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


def constants_table() -> list[dict[str, Any]]:
    """Rows of the tight-constants table as plain dicts with sortable, printable values."""
    return [_plain(r) for r in constants.constants_table()]


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
