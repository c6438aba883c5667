"""Run an algorithm on the machine: validate the input, pick the tiling, count, and check the output."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from attnio.algorithms import registry
from attnio.algorithms.backend import get_backend, namespace, to_numpy
from attnio.algorithms.machine import Machine, Measurement
from attnio.algorithms.reference import attention, default_scale

from attnio.errors import InvalidParameter, Unsupported
from attnio.validate import check_choice, check_int, check_run_sizes, check_seed


@dataclass(frozen=True)
class RunResult:
    algorithm: str
    N: int
    d: int
    dv: int
    M: int
    tiling: Any
    measurement: Measurement
    output: Any  # the O array (NumPy or CuPy) in numeric mode, else None
    max_abs_error: float | None  # against the float64 reference, numeric mode only
    seconds: float
    backend: str

    def as_dict(self) -> dict[str, Any]:
        return {**counts_dict(self), "max_abs_error": self.max_abs_error, "count_only": self.measurement.count_only,
                "backend": self.backend, "seconds": self.seconds}


def counts_dict(r: Any) -> dict[str, Any]:
    """The configuration and exact counts of a run (forward or backward result) as plain data, in one order."""
    m = r.measurement
    return {
        "algorithm": r.algorithm,
        "N": r.N,
        "d": r.d,
        "dv": r.dv,
        "M": r.M,
        "reads": m.reads_words,
        "writes": m.writes_words,
        "io": m.io_words,
        "peak_fast_words": m.peak_fast_words,
        "overflowed": m.overflowed,
        "blocks": dict(vars(r.tiling)) if hasattr(r.tiling, "__dict__") else str(r.tiling),
        "per_array": {k: {"reads": v.reads_words, "writes": v.writes_words} for k, v in m.per_array.items()},
    }


def run(
    algorithm: str,
    Q: Any = None,
    K: Any = None,
    V: Any = None,
    *,
    M: int,
    N: int | None = None,
    d: int | None = None,
    dv: int | None = None,
    seed: int | None = None,
    count_only: bool = False,
    tiling: Any = None,
    scale: float | None = None,
    backend: str = "numpy",
    trace: bool = False,
    audit: bool | None = None,
    check: bool = True,
    eps: float | None = None,
    B: float | None = None,
    beta: float | None = None,
) -> RunResult:
    """Run ``algorithm`` on given inputs (``Q``, ``K``, ``V``) or on random ones of shape (``N``, ``d``).

    Bad input raises :class:`~attnio.errors.InvalidParameter`. ``count_only`` needs only the shapes.
    ``eps``, ``B``, ``beta``: error target and input bounds of approximate algorithms (docs/approx.md); their
    spec has ``approximate=True`` and their tiling class ``prepare_inputs`` (bounded random inputs, or a check of
    given ones).
    """
    spec = registry.get(algorithm)
    params = {k: v for k, v in (("eps", eps), ("B", B), ("beta", beta)) if v is not None}
    approx = spec.approximate
    if params and not approx:
        k = next(iter(params))
        raise InvalidParameter(k, params[k], f"not given: {algorithm} is exact (eps/B/beta are for approximate algorithms)")
    check_choice("backend", backend, ["numpy", "cupy"])
    M = check_int("M", M, min=1)
    seed = check_seed(seed)
    t0 = time.perf_counter()
    if Q is not None or K is not None or V is not None:
        Q, K, V = _check_arrays(Q, K, V)
        N, d = Q.shape
        dv = V.shape[1]
        xp = namespace(Q, K, V)
        backend = xp.__name__
    else:
        N = check_int("N", N, min=1)
        d = check_int("d", d, min=1)
        dv = d if dv is None else check_int("dv", dv, min=1)
        if dv != d and not spec.supports_dv:  # before anything is drawn
            raise Unsupported(f"{algorithm} needs d_v = d (got d={d}, dv={dv})")
        check_run_sizes(N, d, dv, count_only=count_only)
        xp = get_backend(backend)
        if not count_only and not approx:  # approximate algorithms draw bounded inputs (prepare_inputs below)
            rng = np.random.default_rng(seed)
            Q, K, V = (xp.asarray(rng.standard_normal(shape)) for shape in ((N, d), (N, d), (N, dv)))
    if dv != d and not spec.supports_dv:
        raise Unsupported(f"{algorithm} needs d_v = d (got d={d}, dv={dv})")
    if tiling is None:
        tiling = spec.tiling_cls.default(N, d, M, dv, params=params) if approx else spec.tiling_cls.default(N, d, M, dv)
    if approx and not count_only:
        Q, K, V = tiling.prepare_inputs(Q, K, V, seed, N, d, xp)
    m = Machine(M, algorithm=algorithm, xp=xp, count_only=count_only, audit=spec.audit if audit is None else audit, trace=trace)
    if count_only:
        Qs, Ks, Vs = m.input("Q", (N, d)), m.input("K", (N, d)), m.input("V", (N, dv))
    else:
        Qs, Ks, Vs = m.input("Q", Q), m.input("K", K), m.input("V", V)
    # overflow in float64 arithmetic is reported once, as an error naming its cause (_check_finite), not as
    # NumPy warnings
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        O = spec.schedule(m, Qs, Ks, Vs, tiling, default_scale(d, scale))
    meas = m.finish()
    out = err = None
    if not count_only:
        out = m.output_data(O)
        _check_finite(out, Q, K, default_scale(d, scale))
        if check:
            ref = attention(Q, K, V, scale=default_scale(d, scale))
            err = float(np.max(np.abs(to_numpy(out) - ref))) if ref.size else 0.0
    return RunResult(algorithm, N, d, dv, M, tiling, meas, out, err, time.perf_counter() - t0, backend)


def count(algorithm: str, *, N: int, d: int, M: int, dv: int | None = None, **kw: Any) -> Measurement:
    """Count-only run: the exact counts without arithmetic, for any N."""
    return run(algorithm, N=N, d=d, M=M, dv=dv, count_only=True, **kw).measurement


def _check_finite(out: Any, Q: Any, K: Any, scale: float) -> None:
    """Finite inputs can still give a NaN/Inf output: logits scale·q_i·k_j beyond float64's range (about
    1.8e308) overflow, and the softmax of two infinite logits is NaN. Raise naming that cause."""
    xp = namespace(out)
    finite = xp.isfinite(out)
    if bool(xp.all(finite)):
        return
    bad = int(out.size - int(finite.sum()))
    with np.errstate(over="ignore"):
        nq = float(np.max(np.linalg.norm(to_numpy(Q), axis=1)))
        nk = float(np.max(np.linalg.norm(to_numpy(K), axis=1)))
        bound = abs(scale) * nq * nk  # Cauchy–Schwarz: |scale·q_i·k_j| <= this
    raise InvalidParameter(
        "Q, K",
        f"<inputs with max |q_i|·|k_j|·scale = {bound:.3g}: {bad} output entries are NaN/Inf>",
        "inputs whose logits scale·q_i·k_j stay within float64's range (|logit| < 1.8e308; the logits overflowed)"
        if not np.isfinite(bound) or bound > 1e300
        else "inputs for which the schedule's float64 arithmetic stays finite",
    )


def _check_arrays(Q: Any, K: Any, V: Any) -> tuple[Any, Any, Any]:
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        if x is None:
            raise InvalidParameter(name, None, "an N×d array (Q, K and V must all be given)")
        if getattr(x, "ndim", None) != 2:
            raise InvalidParameter(f"{name}.shape", getattr(x, "shape", None), "a 2-D array of shape (N, d)")
        if 0 in x.shape:
            raise InvalidParameter(f"{name}.shape", tuple(x.shape), "N >= 1 and d >= 1")
        xp = namespace(x)
        if not bool(xp.all(xp.isfinite(x))):
            bad = int(x.size - int(xp.isfinite(x).sum()))
            raise InvalidParameter(name, f"<array with {bad} NaN/Inf entries>", "finite values only")
    if K.shape != Q.shape:
        raise InvalidParameter("K.shape", tuple(K.shape), f"equal to Q.shape={tuple(Q.shape)}")
    if V.shape[0] != Q.shape[0]:
        raise InvalidParameter("V.shape", tuple(V.shape), f"({Q.shape[0]}, dv): as many rows as Q")
    return Q, K, V


