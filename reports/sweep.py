"""Resumable sweeps: run a grid of configurations into a :class:`~reports.store.Store`.

One code path for three executors (all ``concurrent.futures.Executor``):

- ``workers=0``: in this process, one batch after another (tests, debugging);
- ``workers=K`` (default: the CPU count): a process pool of K spawned workers, one BLAS/OpenMP thread each;
- ``scheduler="tcp://host:8786"``: a Dask distributed cluster through ``Client(address).get_executor()``
  (``pip install -e '.[dist]'``; the workers need attnio installed, one thread each: ``dask worker ADDRESS
  --nthreads 1``).

Tasks are batches of plain dicts; each returns plain row dicts (:func:`run_config`). The driver appends each
finished batch to the store in one transaction, so a sweep killed at any point and re-run loses no row and
duplicates none (the store's key is UNIQUE and finished keys are skipped before anything is submitted).

>>> from attnio.reports.grid import grid_from_dict
>>> from attnio.reports.store import Store
>>> g = grid_from_dict({"blocks": [{"algorithms": ["flash2"], "N": [4, 1024], "d": [2], "M": [14]}]})
>>> s = Store(":memory:")
>>> run_sweep(g, s, workers=0, progress=False).ran
2
>>> [(r["N"], r["count_only"], r["io"] == r["formula_io"]) for r in s.rows()]
[(1024, True, True), (4, False, True)]
>>> [(r["reads"], r["writes"]) for r in s.rows() if r["N"] == 4]  # flash2's worked count, N=4 d=2 M=14
[(72, 12)]
>>> run_sweep(g, s, workers=0, progress=False).ran  # re-run: nothing left to do
0
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from attnio.reports.grid import Config, Grid, import_modules, is_approximate
from attnio.reports.store import Store

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass(frozen=True)
class SweepSummary:
    total: int  # configurations in the grid
    done_before: int  # already in the store
    ran: int  # run now
    errors: int  # rows (of the whole grid) whose run raised a documented error (bad or unsupported config)
    skipped: int  # dropped at expansion: M below the algorithm's minimum
    seconds: float
    side: list[Any] = field(default_factory=list)  # results of the side tasks, in the order given


def run_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """Run one configuration and return its row (plain data). Documented errors (InvalidParameter,
    Unsupported, CapacityExceeded, ...) become rows with ``status="error"``; anything else is a bug and
    propagates."""
    from attnio import __version__
    from attnio.algorithms.run import run
    from attnio.core.errors import AttnioError

    c = Config(**cfg)
    row: dict[str, Any] = {"key": c.key(), **c.as_dict(), "attnio_version": __version__, "backend": "numpy"}
    extra = {} if c.eps is None else {"eps": c.eps, "B": c.B}
    t0 = time.perf_counter()
    try:
        r = run(c.algorithm, N=c.N, d=c.d, dv=c.dv, M=c.M, seed=c.seed, count_only=c.count_only, **extra)
    except AttnioError as e:
        row.update(status="error", error=f"{type(e).__name__}: {e}", seconds=time.perf_counter() - t0)
        return row
    m = r.measurement
    row.update(
        status="ok",
        error=None,
        reads=m.reads_words,
        writes=m.writes_words,
        io=m.io_words,
        peak_fast_words=m.peak_fast_words,
        overflowed=m.overflowed,
        max_abs_error=r.max_abs_error,
        backend=r.backend,
        seconds=r.seconds,
    )
    if is_approximate(c.algorithm):  # the schedule it ran, its degree g and rank r (poly's tiling): its bounds' class and r
        row.update({k: getattr(r.tiling, k, None) for k in ("schedule", "g", "r")})
    row["formula_io"] = _formula_io(c)
    row["bounds"], row["ratios"] = _bounds(c, m.io_words, row.get("schedule"), row.get("r"))
    return row


def _formula_io(c: Config) -> int | None:
    from attnio.algorithms import registry
    from attnio.bounds import costs

    spec = registry.get(c.algorithm)
    if spec.approximate:  # poly, the one approximate algorithm with formulas: they need the rank r (bounds.approx)
        from attnio.bounds.approx import poly_io

        if c.algorithm != "poly" or c.eps is None:
            return None
        try:
            return int(poly_io(N=c.N, d=c.d, M=c.M, eps=c.eps, B=c.B)[0])
        except (ValueError, ZeroDivisionError):
            return None
    if not spec.cost or spec.cost not in costs.FORMULAS:
        return None
    try:
        return costs.cost(spec.cost, N=c.N, d=c.d, M=c.M, dv=c.dv).io_words
    except (ValueError, ZeroDivisionError):
        return None


def _bounds(c: Config, io_words: int, schedule: str | None = None, r: int | None = None) -> tuple[dict[str, float], dict[str, float]]:
    """Value of each applicable catalog bound at this configuration (an approximate run's: at its rank ``r``, the
    bounds whose class holds its ``schedule``; reports.sources.applicable), and measured ÷ bound."""
    from attnio.reports import sources

    bounds = sources.all_bounds()
    env = sources.bound_env(c.N, c.d, c.M, c.dv, c.eps, c.B, r)
    values, ratios = {}, {}
    approx = is_approximate(c.algorithm)
    for b in bounds:
        if not sources.applicable(b, c.algorithm, env, approx, schedule):
            continue
        v = sources.bound_value(b, env)
        if v is None:
            continue
        values[b.id] = v
        if v > 0:
            ratios[b.id] = io_words / v
    return values, ratios


def _run_batch(cfgs: list[dict[str, Any]], imports: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    import_modules(imports)
    return [_run_pebble(c) if c.get("kind") == "pebble" else run_config(c) for c in cfgs]


def _run_pebble(cfg: dict[str, Any]) -> dict[str, Any]:
    """The row kind ``"pebble"``: one case of the pebbling benchmark (solver.pebble.benchmark.Case)."""
    from attnio.solver.pebble.benchmark import run_case

    return run_case(cfg)


def _init_worker(imports: tuple[str, ...]) -> None:
    for v in _THREAD_VARS:  # before numpy is imported in this (spawned) worker: one thread per worker
        os.environ[v] = "1"
    _exit_with_parent()
    import_modules(imports)


PARENT_POLL_S = 0.2


def _exit_with_parent() -> None:
    """Exit this pool worker as soon as the sweep driver that spawned it dies (``kill -9`` included).

    A worker blocks on the pool's call queue, whose pipe it holds both ends of, so it would never see the
    driver go. A daemon thread polls :func:`os.getppid`: when the driver dies the worker is re-parented and
    the thread ends the process at once (``os._exit``: nothing of the driver's is left to flush). Every row
    already committed stays in the store; a batch in flight is simply redone by the next run. With the
    workers gone, multiprocessing's resource tracker (kept alive only by their copies of its pipe) exits
    too."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent:
                os._exit(70)

    threading.Thread(target=watch, name="attnio-parent-watch", daemon=True).start()


class _Serial(Executor):
    """Runs each task at submit time, in this process."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
        f: Future = Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except BaseException as e:
            f.set_exception(e)
        return f


@contextmanager
def executor(workers: int | None, scheduler: str | None, imports: tuple[str, ...]) -> Iterator[Executor]:
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            from attnio.core.errors import Unsupported

            raise Unsupported("--scheduler needs Dask distributed: pip install -e '.[dist]'") from None
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as e:
            from attnio.core.errors import InvalidParameter

            raise InvalidParameter("scheduler", scheduler, f"the address of a running Dask scheduler ({type(e).__name__}: {e})") from None
        try:
            yield client.get_executor()
        finally:
            client.close()
    elif workers == 0:
        yield _Serial()
    else:
        import multiprocessing

        n = workers or os.cpu_count() or 1
        with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker, initargs=(imports,)) as ex:
            yield ex


def run_sweep(
    grid: Grid,
    store: Store,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    batch_size: int | None = None,
    progress: bool = True,
    side: list[tuple[Callable[..., Any], tuple[Any, ...]]] | None = None,
) -> SweepSummary:
    """Run every configuration of ``grid`` not yet in ``store``; append rows batch by batch.

    ``side``: other tasks ``(fn, args)`` to run on the same executor, submitted first (the report's z3
    verification, claim by claim); their results come back in ``SweepSummary.side``, in the order given."""
    t0 = time.perf_counter()
    done = store.keys()
    todo = [c for c in grid.configs if c.key() not in done]
    done_before = len(grid.configs) - len(todo)
    # Expensive (numeric) configurations first and spread over batches: better load balance.
    todo.sort(key=lambda c: (c.count_only, -c.N, c.key()))
    n_workers = 1 if workers == 0 else (workers or os.cpu_count() or 1)
    if batch_size is None:
        batch_size = max(1, min(32, math.ceil(len(todo) / (4 * n_workers)))) if todo else 1
    batches = [todo[i::max(1, math.ceil(len(todo) / batch_size))] for i in range(max(1, math.ceil(len(todo) / batch_size)))] if todo else []
    side = side or []
    bar = _bar(len(grid.configs) + len(side), done_before, progress)
    ran = 0
    side_out: list[Any] = [None] * len(side)
    try:
        if batches or side:
            with executor(workers, scheduler, grid.imports) as ex:
                side_futs = {ex.submit(fn, *args): i for i, (fn, args) in enumerate(side)}
                futs = [ex.submit(_run_batch, [c.as_dict() for c in b], grid.imports) for b in batches]
                for f in as_completed(list(side_futs) + futs):
                    if f in side_futs:
                        side_out[side_futs[f]] = f.result()
                        bar.update(1)
                        continue
                    rows = f.result()
                    store.append(rows)
                    ran += len(rows)
                    bar.update(len(rows))
    finally:
        bar.close()
    keys = {c.key() for c in grid.configs}
    errors = sum(1 for r in store.rows() if r["key"] in keys and r.get("status") != "ok")
    return SweepSummary(len(grid.configs), done_before, ran, errors, len(grid.skipped), time.perf_counter() - t0, side_out)


def _bar(total: int, initial: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="task", desc="sweep", disable=None if enabled else True, file=sys.stderr, dynamic_ncols=True)
