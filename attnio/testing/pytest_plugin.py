"""Bring your own algorithm: a pytest plugin (registered as ``attnio`` in ``[project.entry-points.pytest11]``).

A user registers an algorithm (``attnio.algorithms.registry.register(AlgorithmSpec(...))``), then in a test::

    def test_my_algorithm(attnio_check):
        result = attnio_check("my_algo", claimed_upper=4 * N**2 * d**2 / M + 3 * N * d)
        assert result.rows  # one sweep row per configuration

``attnio_check(name, ...)`` runs the full treatment and fails the test with a readable list of problems:

1. correctness: real-arithmetic runs against the float64 reference (max abs error ≤ ``tol``);
2. exact-count stability: the same counts on a second run with other inputs (data-obliviousness), the same
   counts in count-only mode, peak fast memory ≤ M (unless the spec is audit-mode), and, when the spec names a
   cost formula of ``attnio.bounds.costs.FORMULAS``, formula = measured at every configuration;
3. bound checks: measured I/O ≥ every applicable explicit lower bound of the catalog (``attnio.bounds.catalog``),
   and ≤ the ``claimed_upper`` expression when one is given;
4. sweep and report rows: every configuration becomes a sweep row (``result.rows``); ``--attnio-store PATH``
   appends them to a sweep store at the end of the session, ``--attnio-report DIR`` writes a report of them.

See docs/byo-algorithm.md for an end-to-end example.

Bring your own Triton kernel: the ``attnio_kernel`` fixture counts a launcher on a workload in Triton's
interpreter and asserts ``counted == formula`` or ``counted ≤ c × bound`` (docs/triton.md)::

    def test_my_kernel(attnio_kernel):
        attnio_kernel(launch, N=128, d=32, causal=True).assert_within(1.1, of="best_schedule")
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("attnio", "attnio: bring your own algorithm")
    g.addoption("--attnio-store", default=None, metavar="PATH", help="append the rows of attnio_check to this sweep store")
    g.addoption("--attnio-report", default=None, metavar="DIR", help="write an attnio report of the rows of attnio_check into DIR")


@dataclass
class ByoResult:
    algorithm: str
    rows: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checks: int = 0  # individual comparisons made

    @property
    def ok(self) -> bool:
        return not self.problems


def default_configs(spec: Any) -> list[tuple[int, int, int]]:
    """Small (N, d, M) for real arithmetic: N with remainders, M from the least that fits to roomy."""
    from attnio.reports.grid import _min_M

    out = []
    for N in (1, 5, 16, 33):
        for d in (2, 8):
            lo = _min_M(spec.name, N, d, d)
            for M in sorted({lo, lo + d + 1, 4 * lo, 16 * d * d + lo}):
                out.append((N, d, M))
    return out


def check_algorithm(
    name: str,
    *,
    claimed_upper: Any = None,
    configs: list[tuple[int, int, int]] | None = None,
    large_N: tuple[int, ...] = (256, 4096),
    tol: float = 1e-9,
) -> ByoResult:
    """Run the checks above and return what they found (``attnio_check`` asserts ``result.ok``)."""
    from attnio.algorithms import registry
    from attnio.algorithms.run import run
    from attnio.bounds import costs
    from attnio.bounds.expr import evaluate
    from attnio.reports import sources
    from attnio.reports.grid import Config
    from attnio.reports.sweep import run_config

    spec = registry.get(name)
    res = ByoResult(name, [])
    cfgs = list(configs or default_configs(spec))
    bounds = sources.all_bounds()
    formula = costs.FORMULAS.get(spec.cost) if spec.cost else None
    if spec.cost and formula is None:
        res.problems.append(f"spec.cost={spec.cost!r} names no formula in bounds.costs.FORMULAS")
    big = [(N, d, M) for (_, d, M) in cfgs[-1:] for N in large_N]
    for N, d, M in cfgs + big:
        numeric = (N, d, M) not in big
        where = f"{name} N={N} d={d} M={M}"
        c = run(name, N=N, d=d, M=M, seed=1, count_only=True).measurement
        if numeric:
            a = run(name, N=N, d=d, M=M, seed=1)
            b = run(name, N=N, d=d, M=M, seed=2)
            res.checks += 3
            if a.max_abs_error is None or not a.max_abs_error <= tol:
                res.problems.append(f"{where}: max |O - O_ref| = {a.max_abs_error} > {tol}")
            if (a.measurement.io, a.measurement.peak_fast_words) != (b.measurement.io, b.measurement.peak_fast_words):
                res.problems.append(f"{where}: counts depend on the input data: {a.measurement.io} vs {b.measurement.io}")
            if (a.measurement.io, a.measurement.peak_fast_words) != (c.io, c.peak_fast_words):
                res.problems.append(f"{where}: count-only mode counts {c.io}, peak {c.peak_fast_words}; real run {a.measurement.io}, peak {a.measurement.peak_fast_words}")
        io = c.io_words
        env = {"N": N, "d": d, "M": M, "dv": d}
        if not spec.audit:
            res.checks += 1
            if c.peak_fast_words > M:
                res.problems.append(f"{where}: peak fast memory {c.peak_fast_words} > M")
        if formula is not None:
            res.checks += 1
            try:
                f = costs.cost(spec.cost, N=N, d=d, M=M)
            except ValueError as e:
                res.problems.append(f"{where}: cost formula not valid here: {e}")
            else:
                if f != c.io:
                    res.problems.append(f"{where}: formula {f} != measured {c.io}")
        if claimed_upper is not None:
            res.checks += 1
            v = evaluate(claimed_upper, env)
            if io > v:
                res.problems.append(f"{where}: measured {io} words > claimed upper bound {claimed_upper} = {float(v):.6g}")
        for bnd in bounds:
            if bnd.kind == "lower" and sources.applicable(bnd, name, env, False):
                v = sources.bound_value(bnd, env)
                if v is not None:
                    res.checks += 1
                    if io < v * (1 - 1e-12):
                        res.problems.append(f"{where}: measured {io} words < lower bound {bnd.id} = {v:.6g} (the algorithm or the bound is wrong)")
        res.rows.append(run_config(Config(name, N, d, M, d, seed=0, count_only=not numeric).as_dict()))
    return res


@pytest.fixture
def attnio_check(request: pytest.FixtureRequest) -> Any:
    """``attnio_check(name, claimed_upper=None, configs=None, ...) -> ByoResult``; fails the test on a problem."""

    def check(name: str, **kw: Any) -> ByoResult:
        res = check_algorithm(name, **kw)
        request.config.stash.setdefault(_STASH, []).extend(res.rows)
        if res.problems:
            head = f"attnio_check({name!r}): {len(res.problems)} problem(s) in {res.checks} checks"
            pytest.fail(head + ":\n  - " + "\n  - ".join(res.problems[:30]), pytrace=False)
        return res

    return check


_STASH: pytest.StashKey[list[dict[str, Any]]] = pytest.StashKey()


def pytest_sessionfinish(session: pytest.Session) -> None:
    rows = session.config.stash.get(_STASH, [])
    if not rows:
        return
    store_path = session.config.getoption("attnio_store")
    report_dir = session.config.getoption("attnio_report")
    if store_path:
        from attnio.reports.store import Store

        with Store(store_path) as st:
            st.append(rows)
    if report_dir:
        from attnio.reports.report import make_report

        uniq = {r["key"]: r for r in rows}
        make_report(list(uniq.values()), report_dir, verify=False, note="Rows from attnio_check (bring your own algorithm).")


# ------------------------------------------------------------------------------------------- Triton kernels
class KernelCounted:
    """What the ``attnio_kernel`` fixture returns: the :class:`attnio.triton.check.KernelCheck` (``.check``), the
    counted traffic (``.traffic``), and two assertions whose failure message says what to change."""

    def __init__(self, check: Any, name: str) -> None:
        self.check = check
        self.traffic = check.traffic
        self.name = name

    @property
    def counted_bytes(self) -> int:
        return int(self.traffic.total_bytes)

    def _table(self) -> str:
        return "\n".join(self.check.lines())

    def assert_equals(self, expected: int | dict[str, int], *, unit: str = "bytes") -> None:
        """counted == expected: a total (int) or per tensor ({"k": reads+writes, ...}), in ``bytes`` or ``words``."""
        t = self.traffic
        if unit not in ("bytes", "words"):
            raise ValueError(f"unit={unit!r}: 'bytes' or 'words'")
        per = {n: (t.reads_bytes.get(n, 0) + t.writes_bytes.get(n, 0)) if unit == "bytes"
               else (t.reads_words.get(n, 0) + t.writes_words.get(n, 0)) for n in t.names}
        if isinstance(expected, dict):
            wrong = {n: (per.get(n, 0), e) for n, e in expected.items() if per.get(n, 0) != e}
            if wrong:
                lines = [f"  {n}: counted {c:,d} {unit}, formula {e:,d} ({c - e:+,d})" for n, (c, e) in wrong.items()]
                pytest.fail(f"{self.name}: counted != formula for {len(wrong)} tensor(s):\n" + "\n".join(lines)
                            + f"\n{self._table()}", pytrace=False)
            return
        total = sum(per.values())
        if total != expected:
            pytest.fail(f"{self.name}: counted {total:,d} {unit} != formula {expected:,d} ({total - expected:+,d}); "
                        f"per tensor: {per}\n{self._table()}", pytrace=False)

    def assert_within(self, factor: float, *, of: str = "lower_bound") -> None:
        """counted bytes ≤ factor × the best lower bound (``of="lower_bound"``) or attnio's best schedule
        (``of="best_schedule"``)."""
        c = self.check
        ref, what = {"lower_bound": (c.lower_bound_bytes, f"best lower bound ({c.lower_bound_id})"),
                     "best_schedule": (c.best_bytes, f"attnio's best schedule ({c.best_schedule})")}[of]
        if self.counted_bytes > factor * ref:
            pytest.fail(f"{self.name}: counted {self.counted_bytes:,d} bytes > {factor:g} × {what} {ref:,d} bytes "
                        f"(ratio {self.counted_bytes / ref:.3f}); {c.dominates}\n{self._table()}", pytrace=False)


@pytest.fixture
def attnio_kernel() -> Any:
    """Count a Triton launcher on a workload (``attnio.triton.check``); skips without triton and torch::

        def test_my_kernel(attnio_kernel):
            r = attnio_kernel(my_launch, N=128, d=32, causal=True)
            r.assert_within(1.1, of="best_schedule")
            r.assert_equals({"q": 128 * 32 * 4, "o": 128 * 32 * 4})

    Keyword arguments are :meth:`attnio.core.workload.Workload.build`'s (default ``gpu="h100"`` when none of M,
    smem, gpu is given), plus ``seed``, ``roles`` (``attnio.triton.check``'s: a kernel's own tensors -> attnio's
    arrays, for the "what dominates" line), ``args`` (launcher parameter -> attnio input), ``cu_seqlens`` and
    ``page_size`` (``attnio.triton.check``'s). The outputs must match the float64 reference (else the test fails).
    ``TRITON_INTERPRET=1`` must be set before the kernels' module is imported (e.g. in ``conftest.py``)."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from attnio.core.workload import Workload
    from attnio.triton.check import check

    def run(launch: Any, *, seed: int = 0, check_outputs: bool = True, roles: dict[str, str] | None = None,
            args: dict[str, str] | None = None, cu_seqlens: Any = None, page_size: int | None = None,
            **workload: Any) -> KernelCounted:
        if not any(k in workload for k in ("M", "smem", "gpu")):
            workload["gpu"] = "h100"
        if cu_seqlens is not None:
            workload.setdefault("N", 1)  # a packed batch takes its lengths from cu_seqlens
        c = check(launch, Workload.build(**workload), seed=seed, roles=roles, args=args, cu_seqlens=cu_seqlens,
                  page_size=page_size)
        name = getattr(launch, "__name__", str(launch))
        if check_outputs and not c.outputs_ok:
            pytest.fail(f"{name}: outputs differ from the float64 reference beyond {c.tolerance:g}: "
                        f"{c.max_abs_error}\n" + "\n".join(c.lines()), pytrace=False)
        return KernelCounted(c, name)

    return run
