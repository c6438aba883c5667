"""The functions of attnio's public API that are more than a re-export (see :mod:`attnio` for the whole list).

Each imports the layer it needs when called, so that ``import attnio`` (and so ``import attnio.core.errors``) stays
cheap: the bounds catalog, the solver (z3) and the machine are loaded on first use only.

>>> count("flash2", N=256, d=16, M=1024) == cost("flash2", N=256, d=16, M=1024)   # measured == formula
True
>>> count("flash2-bwd", N=256, d=16, M=1024) == cost("flash2-bwd", N=256, d=16, M=1024)
True
>>> bound("sy.thm3.5").kind
'upper'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_int

if TYPE_CHECKING:
    import pandas as pd

    from attnio.algorithms.l2 import L2Result
    from attnio.bounds.types import Bound
    from attnio.core.workload import Workload
    from attnio.solver.claims.types import Claim
    from attnio.solver.verify import Verdict


def count(algorithm: str, workload: Workload | None = None, *, N: int | None = None, d: int | None = None,
          M: int | None = None, dv: int | None = None, pass_: str | None = None, schedule: str | None = None) -> IOCount:
    """Words ``algorithm`` moves at (N, d, M[, d_v]) or over ``workload``, measured on the two-level machine
    without arithmetic. A backward name (``"flash2-bwd"``) counts its backward; ``pass_="step"`` a training
    step (the forward, then its backward); ``schedule`` a workload schedule (``per-head``, ``grouped``, ``best``).

    Any N (count-only mode runs one representative block per block shape). The same type as :func:`cost`, so
    ``count(...) == cost(...)`` reads "measured equals formula". Bad input raises
    :class:`~attnio.core.errors.InvalidParameter`.
    """
    from attnio.algorithms.run import run

    return run(algorithm, workload, N=N, d=d, M=M, dv=dv, pass_=pass_, schedule=schedule, count_only=True).measurement.io


def cost(algorithm: str, workload: Workload | None = None, *, N: int | None = None, d: int | None = None,
         M: int | None = None, dv: int | None = None, schedule: str = "per-head") -> IOCount:
    """Words ``algorithm`` moves at (N, d, M[, d_v]) by its exact cost formula (``attnio bounds`` lists them
    as ``exact.<algorithm>``; backward names such as ``"flash2-bwd"`` by the backward formulas), or over
    ``workload`` by the workload formulas (``schedule``: ``per-head`` or ``grouped``). An algorithm with no
    workload formula of its own runs its one-head schedule per query head on a workload with N_q = N_kv and no
    mask (a backward: also kv_heads = heads), as :func:`count` does: batch·H × its one-head formula."""
    from attnio.bounds import costs
    from attnio.core.workload import Workload

    if workload is not None:
        if any(x is not None for x in (N, d, M, dv)):
            raise InvalidParameter("N", N, "not given with a workload (the workload carries N, d, d_v and M)")
        if not isinstance(workload, Workload):
            raise InvalidParameter("workload", workload, "an attnio.core.workload.Workload (Workload.build(...))")
        w = workload
        backward = algorithm in costs.BACKWARD_FORMULAS or any(a == algorithm for a, _, _ in costs.WORKLOAD_BACKWARD_FORMULAS)
        table = costs.WORKLOAD_BACKWARD_FORMULAS if backward else costs.WORKLOAD_FORMULAS
        own = any(a == algorithm and s == schedule for a, s, _ in table)
        if not own and schedule == "per-head" and w.Nq == w.Nkv and not w.causal and (w.kv_heads == w.heads or not backward):
            one = cost(algorithm, N=w.Nq, d=w.d, M=w.M, dv=w.dv)
            H = w.query_heads_total
            return IOCount(H * one.reads_words, H * one.writes_words)
        return (costs.workload_backward_cost if backward else costs.workload_cost)(algorithm, w, schedule)
    N, d, M = (check_int(k, v, min=1) for k, v in (("N", N), ("d", d), ("M", M)))
    dv = None if dv is None else check_int("dv", dv, min=1)
    if algorithm in costs.BACKWARD_FORMULAS:
        return costs.backward_cost(algorithm, N=N, d=d, M=M, dv=dv)
    return costs.cost(algorithm, N=N, d=d, M=M, dv=dv)


def catalog() -> list[Bound]:
    """Every bound of the catalog (lower and upper bounds of the papers, derived explicit bounds, exact costs),
    sorted by id. Each :class:`~attnio.bounds.types.Bound` carries its statement, regime, expression,
    provenance, the algorithms that attain it (``attained_by``) and the claims about it (see :func:`claims`)."""
    from attnio.bounds.catalog import all_bounds

    return sorted(all_bounds(), key=lambda b: b.id)


def bound(bound_id: str) -> Bound:
    """The catalog bound with this id (e.g. ``"sy.thm3.5"``); an unknown id raises InvalidParameter."""
    from attnio.bounds.catalog import by_id

    return by_id(bound_id)


def claims(about: str | None = None) -> list[Claim]:
    """Every claim the solver checks (plain data), or only those about the bound with id ``about``."""
    from attnio.solver.claims import all_claims

    out = all_claims()
    if about is not None:
        bound(about)  # an unknown bound id is an error, not an empty list
        out = [c for c in out if about in c.about]
    return out


def verify(claim_ids: Iterable[str] | str | None = None, *, solver: str = "z3") -> list[Verdict]:
    """Prove claims with z3 (``solver="cvc5"``, or ``"both"`` for a cvc5 re-check) and return their verdicts.

    ``claim_ids``: one id, several, or None for every claim (minutes). A verdict's ``status`` is ``proved``
    only when the negation is unsat for every parameter of the claim's regime; unknown is never a pass.
    """
    from attnio.solver.verify import SOLVERS, verify_all

    if solver not in SOLVERS:
        raise InvalidParameter("solver", solver, "one of " + ", ".join(SOLVERS))
    ids = [claim_ids] if isinstance(claim_ids, str) else claim_ids
    return verify_all(ids, solver=solver)



def results(store: Any = None, *, where: dict[str, Any] | None = None, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """The rows of a sweep as a pandas DataFrame, sorted by key, one typed column per field
    (:data:`attnio.reports.frames.SWEEP_COLUMNS`: algorithm, pass, N, d, dv, M, ε, B, reads, writes, io, peak,
    error, the best proved lower bound and its value, ratio = io ÷ that value, regime, ...).

    ``store``: the path of a store written by ``attnio sweep --store PATH`` (or a
    :class:`~attnio.reports.store.Store`); None runs the embedded default grid, count-only, in this process
    (a minute or so). ``where={"algorithm": "flash2", "d": [16, 64]}`` keeps the rows whose column equals the
    value (or one of the values of a list); ``columns`` keeps those columns, in that order. An unknown column,
    or a path that is not an attnio store, raises :class:`~attnio.core.errors.InvalidParameter`."""
    from pathlib import Path

    from attnio.reports import frames
    from attnio.reports.grid import default_grid_dict, grid_from_dict
    from attnio.reports.store import Store
    from attnio.reports.sweep import run_sweep

    if isinstance(store, Store):
        return frames.sweep_frame(store, where, columns)
    frames.check_arguments(where, columns)  # before a minute of sweeping
    if store is None:
        with Store(":memory:") as s:
            run_sweep(grid_from_dict({**default_grid_dict(), "numeric_max_N": 0}), s, workers=0, progress=False)
            return frames.sweep_frame(s, where, columns)
    if not isinstance(store, str | Path) or not Path(store).is_file():  # reading never creates a store
        raise InvalidParameter("store", str(store), "an existing attnio sweep store (run `attnio sweep --store PATH` first), a Store, or None for the default sweep")
    with Store(store) as s:  # InvalidStore (an InvalidParameter) when the file is not attnio's
        return frames.sweep_frame(s, where, columns)


def verdicts(claim_ids: Iterable[str] | str | None = None, *, source: str = "record", solver: str = "z3") -> pd.DataFrame:
    """The claims with their verdicts as a DataFrame (id, kind, claim, about, verdict, z3, cvc5, source).

    ``source="record"`` (default) reads the committed proof record reports/crosscheck.json without running a
    solver (a claim changed since it was recorded says ``stale``); ``source="verify"`` proves them now with
    ``solver`` (as :func:`verify`: minutes for every claim). The ``source`` column says which."""
    from attnio.reports.catalog_frames import verdict_frame

    return verdict_frame(source, claim_ids, solver=solver)


def catalog_frame(what: str = "bounds") -> pd.DataFrame:
    """The catalog as a DataFrame: one row per bound (``what="bounds"``: kind, model, formula, regime, constant,
    provenance, status, attained_by, the report's regimes, the number of claims about it) or per claim
    (``what="claims"``)."""
    from attnio.reports.catalog_frames import catalog_frame as frame

    return frame(what)


def l2(workload: Workload, gpu: str, **options: Any) -> L2Result:
    """Replay the FlashAttention-2 forward of ``workload`` through the L2 of preset ``gpu`` (a100, h100, h200,
    b200, mi300x, mi355x, l4) and return requested, sector and predicted DRAM bytes per tensor and the hit rate
    (:func:`attnio.algorithms.l2.replay`; ``options``: B_r, B_c, order, section_heads, q_reverse, sawtooth,
    occupancy, sms, l2_bytes). docs/dram.md.

    >>> import attnio
    >>> from attnio.core.workload import Workload
    >>> r = attnio.l2(Workload.build(heads=4, N=1024, d=64, dtype="bf16", M=10**6), "h100")
    >>> r.dram_bytes < r.requested_bytes, r.exact
    (True, True)
    """
    from attnio.algorithms.l2 import replay

    return replay(workload, gpu, **options)
