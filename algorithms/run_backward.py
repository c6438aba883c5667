"""Run a backward schedule on the machine, and a training step (forward, then its backward).

The backward's inputs start in slow memory: Q, K, V, O, dO and the statistics the forward saved. In a
standalone run (``run_backward``) O and the statistics come from the float64 reference
(``attnio.algorithms.reference.attention_forward_saved``): placing inputs costs nothing, as for Q, K, V. In a
training step (``train_step``) O is the forward schedule's own output and the statistics come from the same
reference (their values do not change a count); the forward's count includes writing them.

>>> r = train_step("flash2", N=64, d=8, M=400, count_only=True)
>>> r.as_dict()["total"]["io"] == r.forward.measurement.io_words + r.backward.measurement.io_words
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from attnio.algorithms import registry, registry_backward
from attnio.algorithms.backend import get_backend, namespace, to_numpy
from attnio.algorithms.machine import Machine, Measurement
from attnio.algorithms.reference import attention_backward, attention_forward_saved, default_scale
from attnio.algorithms.run import RunResult, _check_arrays, counts_dict, run

from attnio.errors import InvalidParameter, Unsupported
from attnio.validate import check_choice, check_int

STAT_SHAPES = {"L": "N", "ell": "N", "m": "N", "P": "NN", "S": "NN"}


@dataclass(frozen=True)
class BackwardResult:
    algorithm: str
    N: int
    d: int
    dv: int
    M: int
    tiling: Any
    measurement: Measurement
    outputs: tuple[Any, Any, Any] | None  # dQ, dK, dV in numeric mode
    rel_errors: dict[str, float] | None  # max|X − X_ref| / max(max|X_ref|, 10⁻³·μ_X) per output (see _rel)
    seconds: float
    backend: str

    def as_dict(self) -> dict[str, Any]:
        return {**counts_dict(self), "rel_errors": self.rel_errors, "count_only": self.measurement.count_only,
                "backend": self.backend, "seconds": self.seconds}


def needed_stats(algorithm: str, tiling: Any) -> tuple[str, ...]:
    """The saved statistics a backward run reads (``auto-bwd``: those of the schedule it chose)."""
    chosen = getattr(tiling, "algorithm", None)
    if chosen is not None and algorithm == "auto-bwd":
        return registry_backward.get(chosen).stats
    return registry_backward.get(algorithm).stats


def run_backward(
    algorithm: str,
    Q: Any = None,
    K: Any = None,
    V: Any = None,
    dO: Any = None,
    *,
    M: int,
    N: int | None = None,
    d: int | None = None,
    dv: int | None = None,
    O: Any = None,
    seed: int | None = None,
    count_only: bool = False,
    tiling: Any = None,
    scale: float | None = None,
    backend: str = "numpy",
    trace: bool = False,
    audit: bool | None = None,
    check: bool = True,
    stats: tuple[str, ...] | None = None,
) -> BackwardResult:
    """Run the backward schedule ``algorithm`` on given Q, K, V, dO (and optionally the forward's O) or on
    random ones of shape (N, d). ``stats`` restricts ``auto-bwd`` to schedules reading those statistics."""
    spec = registry_backward.get(algorithm)
    check_choice("backend", backend, ["numpy", "cupy"])
    M = check_int("M", M, min=1)
    t0 = time.perf_counter()
    given = [x is not None for x in (Q, K, V, dO)]
    if any(given):
        Q, K, V = _check_arrays(Q, K, V)
        if dO is None or getattr(dO, "shape", None) != V.shape:
            raise InvalidParameter("dO.shape", getattr(dO, "shape", None), f"equal to V.shape={tuple(V.shape)}")
        N, d = Q.shape
        dv = V.shape[1]
        xp = namespace(Q, K, V)
        backend = xp.__name__
    else:
        N = check_int("N", N, min=1)
        d = check_int("d", d, min=1)
        dv = d if dv is None else check_int("dv", dv, min=1)
        xp = get_backend(backend)
        if not count_only:
            rng = np.random.default_rng(seed)
            Q, K, V, dO = (xp.asarray(rng.standard_normal(s)) for s in ((N, d), (N, d), (N, dv), (N, dv)))
    if dv != d and not spec.supports_dv:
        raise Unsupported(f"{algorithm} needs d_v = d (got d={d}, dv={dv})")
    sc = default_scale(d, scale)
    if tiling is None:
        tiling = spec.tiling_cls.default(N, d, M, dv, stats) if algorithm == "auto-bwd" else spec.tiling_cls.default(N, d, M, dv)
    m = Machine(M, algorithm=algorithm, xp=xp, count_only=count_only, audit=spec.audit if audit is None else audit, trace=trace)
    names = needed_stats(algorithm, tiling)
    ins = {}
    if count_only:
        shapes = {"Q": (N, d), "K": (N, d), "V": (N, dv), "O": (N, dv), "dO": (N, dv)}
        shapes.update({s: (N,) if STAT_SHAPES[s] == "N" else (N, N) for s in names})
        ins = {k: m.input(k, v) for k, v in shapes.items()}
    else:
        saved = attention_forward_saved(Q, K, V, sc, need=names)
        arrays = {"Q": Q, "K": K, "V": V, "O": saved["O"] if O is None else O, "dO": dO}
        arrays.update({s: saved[s] for s in names})
        ins = {k: m.input(k, xp.asarray(v)) for k, v in arrays.items()}
    outs = spec.schedule(m, ins, tiling, sc)
    meas = m.finish()
    data = errs = None
    if not count_only:
        data = tuple(m.output_data(a) for a in outs)
        if check:
            q, k, v, do = (np.asarray(to_numpy(x), dtype=np.float64) for x in (Q, K, V, dO))
            refs = attention_backward(q, k, v, do, scale=sc)
            base = abs(sc) * _amax(do) * _amax(v)
            mus = (base * _amax(k), base * _amax(q), _amax(do))
            errs = {n: _rel(to_numpy(x), r, mu) for n, x, r, mu in zip(("dQ", "dK", "dV"), data, refs, mus, strict=True)}
    return BackwardResult(algorithm, N, d, dv, M, tiling, meas, data, errs, time.perf_counter() - t0, backend)


def count_backward(algorithm: str, *, N: int, d: int, M: int, dv: int | None = None, **kw: Any) -> Measurement:
    """Count-only backward run: exact counts without arithmetic, for any N."""
    return run_backward(algorithm, N=N, d=d, M=M, dv=dv, count_only=True, **kw).measurement


def _amax(x: np.ndarray) -> float:
    return float(np.max(np.abs(x))) if x.size else 0.0


def _rel(x: np.ndarray, ref: np.ndarray, mu: float) -> float:
    """max|x − ref| / max(max|ref|, 10⁻³·μ), μ the size of the products summed into x: the plain relative
    error, except where the exact gradient vanishes (N = 1 gives dQ = dK = 0 and rounding noise ~10⁻¹⁶·μ)."""
    if ref.size == 0:
        return 0.0
    return float(np.max(np.abs(x - ref)) / max(_amax(ref), 1e-3 * mu, 1e-300))


@dataclass(frozen=True)
class TrainStep:
    forward: RunResult
    backward: BackwardResult

    def as_dict(self) -> dict[str, Any]:
        f, b = self.forward.measurement, self.backward.measurement

        def part(m: Measurement) -> dict[str, int]:
            return {"reads": m.reads_words, "writes": m.writes_words, "io": m.io_words, "peak_fast_words": m.peak_fast_words}

        total = {
            "reads": f.reads_words + b.reads_words,
            "writes": f.writes_words + b.writes_words,
            "io": f.io_words + b.io_words,
            "peak_fast_words": max(f.peak_fast_words, b.peak_fast_words),
        }
        return {
            "forward": {**self.forward.as_dict(), **part(f)},
            "backward": {**self.backward.as_dict(), **part(b)},
            "total": total,
        }


def backward_for(forward: str, forward_tiling: Any = None) -> tuple[str, tuple[str, ...] | None]:
    """The backward schedule of a training step that starts with ``forward``, and the statistics ``auto-bwd``
    may use (those the chosen forward saved). ``auto`` pairs with the cheapest backward that reads what the
    forward it chose saved; ``split_v`` and ``kv_stationary`` (no backward of their own) likewise."""
    if forward == "auto":
        chosen = forward_tiling.algorithm
        return "auto-bwd", registry_backward.FORWARD_SAVES.get(chosen, ())
    try:
        return registry_backward.backward_of(forward), None
    except InvalidParameter:
        if forward in registry_backward.FORWARD_SAVES:
            return "auto-bwd", registry_backward.FORWARD_SAVES[forward]
        raise Unsupported(f"{forward} has no backward schedule (exact forward algorithms with a backward: "
                          + ", ".join(sorted(registry_backward.FORWARD_SAVES)) + ", auto)") from None


def train_step(
    forward: str,
    *,
    N: int,
    d: int,
    M: int,
    dv: int | None = None,
    seed: int | None = 0,
    count_only: bool = False,
    backend: str = "numpy",
    scale: float | None = None,
) -> TrainStep:
    """Forward ``forward`` then its backward on the same inputs (dO random, seed + 1)."""
    registry.get(forward)
    if forward not in registry_backward.FORWARD_SAVES and forward != "auto":
        raise Unsupported(f"{forward} has no backward schedule (exact forward algorithms with a backward: "
                          + ", ".join(sorted(registry_backward.FORWARD_SAVES)) + ", auto)")
    f = run(forward, N=N, d=d, dv=dv, M=M, seed=seed, count_only=count_only, backend=backend, scale=scale)
    name, stats = backward_for(forward, f.tiling)
    if count_only:
        b = run_backward(name, N=N, d=d, dv=f.dv, M=M, count_only=True, stats=stats, backend=backend)
    else:
        xp = get_backend(backend)
        rng = np.random.default_rng(seed)
        Q, K, V = (xp.asarray(rng.standard_normal(s)) for s in ((N, d), (N, d), (N, f.dv)))  # run()'s draw
        dO = xp.asarray(np.random.default_rng(None if seed is None else seed + 1).standard_normal((N, f.dv)))
        b = run_backward(name, Q, K, V, dO, M=M, O=f.output, scale=scale, stats=stats)
    return TrainStep(f, b)
