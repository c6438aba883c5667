"""Lazy access to the modules a report draws on, each behind one small function.

Each function imports its source when called. If that module is not there (yet), it raises
:class:`SourceUnavailable` naming the module, and the report prints "section unavailable: <module> not
built" instead of an empty section. Nothing else in ``reports`` imports these sources directly.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from fractions import Fraction
from typing import Any


class SourceUnavailable(Exception):
    def __init__(self, module: str, why: str = "not built") -> None:
        self.module = module
        self.why = why
        super().__init__(f"{module} {why}")


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            raise SourceUnavailable(module) from None
        raise


def _attr(module: str, name: str) -> Any:
    fn = getattr(_import(module), name, None)
    if fn is None:
        raise SourceUnavailable(module, f"has no {name}")
    return fn


# bounds catalog ---------------------------------------------------------------------------------------


def all_bounds() -> list[Any]:
    """Every :class:`bounds.types.Bound` of the catalog, sorted by id."""
    return sorted(_attr("attnio.bounds.catalog", "all_bounds")(), key=lambda b: b.id)


def applicable(bound: Any, algorithm: str, env: dict[str, Any], approximate: bool) -> bool:
    """Does ``bound`` speak about ``algorithm`` at ``env``: explicit, every symbol given, regime holds.

    Lower and upper bounds apply to every exact algorithm (approximate ones only where the bound's model says
    "approx"); ``exact`` bounds apply only to the algorithm their model names (``"algorithm flash2"``)."""
    from attnio.bounds.expr import free_symbols

    if not bound.explicit:
        return False
    if bound.kind == "exact" and bound.model != f"algorithm {algorithm}":
        return False
    if approximate != ("approx" in bound.model.lower()) and bound.kind != "exact":
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


def bound_value(bound: Any, env: dict[str, Any]) -> float | None:
    from attnio.bounds.expr import evaluate

    try:
        v = evaluate(bound.expr, env)
    except (ZeroDivisionError, ValueError, OverflowError):
        return None
    return float(v)


# verifier ----------------------------------------------------------------------------------------------


def verdicts() -> list[dict[str, Any]]:
    """The z3 verdicts of every catalog claim as plain dicts: ``{"id", "verdict", "constant", "claim",
    "solver"}`` (no timings: they are not deterministic and never enter the report body or the gate)."""
    return verify_ids(None)


def claim_ids() -> list[str]:
    """The ids of every claim the verifier knows, so that they can be verified in parallel."""
    return [c.id for c in _attr("attnio.solver.claims", "all_claims")()]


def verify_ids(ids: list[str] | None) -> list[dict[str, Any]]:
    """Verdicts (plain dicts, sorted by id) of the given claims (all when None). Runs in a worker too."""
    fn = _attr("attnio.solver.verify", "verify_all")
    vs = fn() if ids is None else fn(ids)
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


def bound_of_claim(claim_id: str, bound_ids: list[str]) -> str | None:
    """The bound a claim speaks about: the longest bound id that appears in the claim id as whole dotted
    parts (``consistency.sy.lemma3.4.explicit.flash1`` -> ``sy.lemma3.4.explicit``).

    >>> bound_of_claim("consistency.sy.lemma3.4.explicit.flash1", ["sy.lemma3.4", "sy.lemma3.4.explicit"])
    'sy.lemma3.4.explicit'
    """
    c = f".{claim_id}."
    hits = [b for b in bound_ids if f".{b}." in c]
    return max(hits, key=len) if hits else None


# constants, approximate attention, pebbling --------------------------------------------------------------


def constants_table() -> list[dict[str, Any]]:
    """Rows of the tight-constants table (issue 8) as plain dicts with sortable, printable values."""
    fn = _attr("attnio.bounds.constants", "constants_table")
    return [_plain(r) for r in fn()]


def asymptotic_constants() -> dict[str, str]:
    mod = _import("attnio.bounds.constants")
    return {str(k): str(v) for k, v in getattr(mod, "ASYMPTOTIC", {}).items()}


def crossover_B(N: int, d: int, M: int, eps: float) -> Any:
    return _attr("attnio.bounds.approx", "crossover_B")(N, d, M, eps)


PEBBLE_MAX_STATES = 100_000  # a deterministic stop (a time limit would make the table depend on the machine)
PEBBLE_INSTANCES = (("attention", (2, 1)), ("matmul", (2, 2, 2)))


def pebble_tasks() -> list[tuple[str, tuple[int, ...], int]]:
    """The sandwich instances, one (graph, sizes, M) per task: M from the least feasible to the trivial end."""
    graphs = _import("attnio.solver.pebble.graphs")
    _attr("attnio.solver.pebble.sandwich", "sandwich_rows")
    out = []
    for kind, sizes in PEBBLE_INSTANCES:
        g = getattr(graphs, kind)(*sizes)
        hi = 4 * sizes[0] * sizes[1] + sizes[0] ** 2 * sizes[1] if kind == "attention" else g.n
        out += [(kind, sizes, M) for M in range(g.min_M, hi + 1)]
    return out


def pebble_row(kind: str, sizes: tuple[int, ...], M: int) -> dict[str, Any]:
    """One sandwich row (plain data; the solver's timing dropped). Runs in a worker."""
    fn = _attr("attnio.solver.pebble.sandwich", "sandwich_rows")
    kw = {"attention_sizes": (sizes,), "matmul_sizes": ()} if kind == "attention" else {"attention_sizes": (), "matmul_sizes": (sizes,)}
    (row,) = fn(**kw, M_values=[M], time_limit_s=3600.0, max_states=PEBBLE_MAX_STATES)
    row = dict(row)
    row.pop("seconds", None)
    return row


def trim_pebble_rows(rows: list[dict[str, Any]], trivial: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """Per instance, keep M up to the first row where OPT reaches the trivial bound (as sandwich_rows does)."""
    graphs = _import("attnio.solver.pebble.graphs")
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
    elif hasattr(r, "__dataclass_fields__"):
        from dataclasses import asdict

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
    try:
        from attnio.bounds.expr import Expr, Rel, to_text

        if isinstance(v, Expr):
            return to_text(v)
        if isinstance(v, Rel):
            return str(v)
    except ImportError:
        pass
    if isinstance(v, list | tuple):
        return ", ".join(str(_cell(x)) for x in v)
    return str(v)


def verification_tasks() -> list[tuple[Callable[..., Any], tuple[Any, ...]]] | SourceUnavailable:
    """One side task per claim (``verify_ids([id])``), to run on the sweep's executor in parallel."""
    try:
        return [(verify_ids, ([cid],)) for cid in sorted(claim_ids())]
    except SourceUnavailable as e:
        return e


def merge_verdicts(results: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return sorted((v for r in results for v in r), key=lambda v: v["id"])
