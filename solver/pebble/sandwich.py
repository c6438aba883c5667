"""The sandwich on tiny instances: every explicit catalog lower bound ≤ OPT ≤ the exact cost of every algorithm.

OPT is the exact optimum of the red-blue pebble game on the Saha–Ye attention graph (recomputation allowed,
the game the lower bounds speak about). Each row says what was proved about OPT (``status``): ``optimal``
(OPT known), or ``bounds`` (OPT ∈ [opt_lower, opt_upper], the search was stopped). A check is made only where
it can fail:

- lower bound L vs OPT: ``L ≤ OPT`` when OPT is known; with bounds only, ``L ≤ opt_upper`` (weaker: it says so);
- OPT vs algorithm cost C: ``OPT ≤ C`` when OPT is known; with bounds only, ``opt_lower ≤ C``.

Like with like. The graph holds what the lower bounds assume (every Q_iℓ·K_jℓ product by the standard
algorithm, every input read, every output O written) and nothing more: no logsumexp L, no max statistics. An
algorithm of attnio may store extra scratch (flash2 writes L), so its cost is an upper bound for a larger
task; OPT ≤ C is still a fair check. The one real model difference goes the other way: the machine's M
counts array words and leaves scalars (loop indices, one running product) free, while a red pebble is any
one value, so a schedule of the machine with M words may need a few more than M red pebbles. A failure of
OPT ≤ C is reported as a finding with this caveat, never hidden.

Matrix multiplication rows compare OPT with the Hong–Kung and Smith et al. entries of the catalog where
their preconditions hold (those entries are asymptotic, ``explicit=False``: a value above OPT is reported,
not failed).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from attnio.bounds.catalog import all_bounds
from attnio.bounds.expr import free_symbols
from attnio.bounds.types import APPROXIMATE
from attnio.core.errors import InvalidParameter
from attnio.solver.pebble.graphs import attention, matmul
from attnio.solver.pebble.solve import PebbleResult, solve

if TYPE_CHECKING:
    from attnio.bounds.costs import CostFormula
    from attnio.core.counts import IOCount

ATTENTION_SYMBOLS = frozenset({"N", "d", "M"})
MATMUL_SYMBOLS = frozenset({"m", "k", "n", "M"})


@dataclass
class Row:
    instance: dict
    vertices: int
    status: str
    opt: int | None
    opt_lower: int
    opt_upper: int
    lower_bounds: dict[str, float] = field(default_factory=dict)  # id -> value (explicit, regime holds)
    shape_bounds: dict[str, float] = field(default_factory=dict)  # asymptotic-only entries, for information
    costs: dict[str, int] = field(default_factory=dict)  # algorithm -> exact reads + writes
    ratios: dict[str, float] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0
    states: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _lower_entries(symbols: frozenset[str]):
    out = []
    for b in all_bounds():
        if b.kind != "lower" or b.computation != "forward":  # the pebbled graphs are forward passes
            continue
        names = {s.name for s in free_symbols(b.expr)} | {s.name for r in b.regime for s in free_symbols(r)}
        # an explicit bound stated for every d_v (or at d_v = d) is evaluated at d_v = d: the graphs' V has width d
        if b.explicit and symbols == ATTENTION_SYMBOLS:
            names -= {"dv"}
        if not names <= symbols or b.cdag == APPROXIMATE:
            continue
        out.append(b)
    return out


def _eval_bounds(entries, env: dict) -> tuple[dict[str, float], dict[str, float]]:
    from attnio.bounds.expr import evaluate

    explicit: dict[str, float] = {}
    shape: dict[str, float] = {}
    for b in entries:
        env_b = {"dv": env["d"], **env} if "d" in env else env  # the graphs' V has width d
        if not all(r.holds(env_b) for r in b.regime):
            continue
        val = float(evaluate(b.expr, env_b))
        (explicit if b.explicit else shape)[b.id] = val
    return explicit, shape


def valid_costs(formulas: Iterable[tuple[str, CostFormula]], count: Callable[..., IOCount], N: int, d: int, M: int, *,
                skip: Collection[str] = ()) -> dict[str, int]:
    """Each schedule's exact count ``count(name, N=N, d=d, M=M).io_words``, in the order of ``formulas`` (name,
    formula) pairs, where its formula is valid at (N, d, M) with d_v = d (the graphs' V has width d) and ``skip``
    does not name it; a count that rejects the point (:class:`InvalidParameter`) is left out too."""
    env = {"N": N, "d": d, "M": M, "dv": d}
    out = {}
    for name, f in formulas:
        if name in skip or not all(r.holds(env) for r in f.valid):
            continue
        try:
            out[name] = count(name, N=N, d=d, M=M).io_words
        except InvalidParameter:
            continue
    return out


def _costs(N: int, d: int, M: int) -> dict[str, int]:
    """Every forward schedule's exact count (:func:`attnio.bounds.costs.cost`) where its formula is valid."""
    from attnio.bounds import costs

    return valid_costs(costs.FORMULAS.items(), costs.cost, N, d, M)


def _row(instance: dict, r: PebbleResult, explicit: dict, shape: dict, costs: dict) -> Row:
    lo, hi = r.lower, r.upper
    assert lo is not None and hi is not None
    row = Row(instance, r.n, r.status, r.opt, lo, hi, explicit, shape, costs, seconds=round(r.seconds, 3), states=r.states)
    for bid, L in explicit.items():
        if L > hi:
            row.violations.append(f"lower bound {bid} = {float(L):.4g} > OPT{'' if r.opt is not None else ' upper bound'} {hi} at {instance}")
        if r.opt is not None and L > 0:
            row.ratios[f"OPT/{bid}"] = round(r.opt / float(L), 4)
    for name, C in costs.items():
        if lo > C:
            row.violations.append(
                f"algorithm {name} moves {C} words < OPT{'' if r.opt is not None else ' lower bound'} {lo} at {instance} "
                "(machine M counts array words, scalars free; a red pebble is any value: see docs/pebbling.md)"
            )
        if r.opt:
            row.ratios[f"{name}/OPT"] = round(C / r.opt, 4)
    return row


def attention_row(N: int, d: int, M: int, *, tree: str = "balanced", time_limit_s: float = 60.0, max_states: int = 2_000_000) -> Row:
    g = attention(N, d, tree=tree)
    r = solve(g, M, recompute=True, time_limit_s=time_limit_s, max_states=max_states)
    inst = {"graph": "attention", "N": N, "d": d, "M": M, "tree": tree}
    env = {"N": N, "d": d, "M": M}
    explicit, shape = _eval_bounds(_lower_entries(ATTENTION_SYMBOLS), env)
    return _row(inst, r, explicit, shape, _costs(N, d, M))


def matmul_row(m: int, k: int, n: int, M: int, *, tree: str = "balanced", time_limit_s: float = 60.0, max_states: int = 2_000_000) -> Row:
    g = matmul(m, k, n, tree=tree)
    r = solve(g, M, recompute=True, time_limit_s=time_limit_s, max_states=max_states)
    inst = {"graph": "matmul", "m": m, "k": k, "n": n, "M": M, "tree": tree}
    entries = _lower_entries(MATMUL_SYMBOLS)
    explicit, shape = _eval_bounds(entries, {"m": m, "k": k, "n": n, "M": M})
    explicit = {"trivial.io": m * k + k * n + m * n, **explicit}
    return _row(inst, r, explicit, shape, {})


def sandwich_rows(
    attention_sizes=((2, 1),), matmul_sizes=((2, 2, 2),), *, M_values=None, time_limit_s: float = 60.0, max_states: int = 2_000_000
) -> list[dict]:
    """The sandwich table as plain data, one dict per instance (see :class:`Row`).

    Defaults: attention N=2, d=1 and matmul 2×2·2×2, M from the least feasible value until OPT reaches the
    trivial bound. Bigger instances come back with ``status == "bounds"`` when the search is stopped.
    """
    rows: list[Row] = []
    for N, d in attention_sizes:
        g = attention(N, d)
        Ms = M_values or range(g.min_M, 4 * N * d + N * N * d + 1)
        for M in Ms:
            row = attention_row(N, d, M, time_limit_s=time_limit_s, max_states=max_states)
            rows.append(row)
            if M_values is None and row.opt_upper <= g.trivial_io:
                break
    for m, k, n in matmul_sizes:
        g = matmul(m, k, n)
        Ms = M_values or range(g.min_M, g.n + 1)
        for M in Ms:
            row = matmul_row(m, k, n, M, time_limit_s=time_limit_s, max_states=max_states)
            rows.append(row)
            if M_values is None and row.opt_upper <= g.trivial_io:
                break
    return [r.as_dict() for r in rows]
