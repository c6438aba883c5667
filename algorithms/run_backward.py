"""The plain (one-head) backward on the machine, called by the one runner (:func:`attnio.algorithms.run.run`).

The backward's inputs start in slow memory: Q, K, V, O, dO and the statistics the forward saved (the spec's
``stats``). In a standalone backward O and the statistics come from the float64 reference
(:func:`attnio.algorithms.reference.attention_forward_saved`): placing inputs costs nothing, as for Q, K, V. In
a training step O is the forward schedule's own output and the statistics come from the same reference (their
values do not change a count); the forward's count includes writing them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnio.algorithms import registry
from attnio.algorithms.backend import get_backend, namespace, to_numpy
from attnio.algorithms.machine import Machine
from attnio.algorithms.reference import attention_backward, attention_forward_saved, default_scale
from attnio.core.workload import Workload

#: the shape of each saved statistic: one value per query row, or one per (query, key) pair.
STAT_SHAPES = {"L": "row", "ell": "row", "m": "row", "P": "pair", "S": "pair"}


def needed_stats(algorithm: str, tiling: Any) -> tuple[str, ...]:
    """The saved statistics a backward run reads (``auto-bwd``: those of the schedule it chose)."""
    chosen = getattr(tiling, "algorithm", None)
    return registry.get(chosen if chosen is not None and algorithm == "auto-bwd" else algorithm).stats


def backward_plain(spec: registry.AlgorithmSpec, w: Workload, arrays: tuple[Any, ...] | None, r: Any) -> tuple[Any, ...]:
    """The plain backward ``spec`` on (Q, K, V, dO) ``arrays`` (None: count-only): (tiling, measurement,
    outputs, errors, backend). ``r``: the runner's request (tiling, stats, O, scale, audit, trace, check)."""
    N, d, dv, M = w.Nq, w.d, w.dv, w.M
    xp = get_backend(r.backend) if arrays is None else namespace(*arrays)
    sc = default_scale(d, r.scale)
    tiling = r.tiling
    if tiling is None:
        tiling = spec.tiling_cls.default(N, d, M, dv, r.stats) if spec.name == "auto-bwd" else spec.tiling_cls.default(N, d, M, dv)
    m = Machine(M, algorithm=spec.name, xp=xp, count_only=arrays is None, audit=spec.audit if r.audit is None else r.audit, trace=r.trace)
    names = needed_stats(spec.name, tiling)
    if arrays is None:
        shapes = {"Q": (N, d), "K": (N, d), "V": (N, dv), "O": (N, dv), "dO": (N, dv)}
        shapes.update({s: (N,) if STAT_SHAPES[s] == "row" else (N, N) for s in names})
        ins = {k: m.input(k, v) for k, v in shapes.items()}
    else:
        Q, K, V, dO = arrays
        saved = attention_forward_saved(Q, K, V, sc, need=names)
        given = {"Q": Q, "K": K, "V": V, "O": saved["O"] if r.O is None else r.O, "dO": dO}
        given.update({s: saved[s] for s in names})
        ins = {k: m.input(k, xp.asarray(v)) for k, v in given.items()}
    outs = spec.schedule(m, ins, tiling, sc)
    meas = m.finish()
    data = errs = None
    if arrays is not None:
        data = tuple(m.output_data(a) for a in outs)
        if r.check:
            q, k, v, do = (np.asarray(to_numpy(x), dtype=np.float64) for x in arrays)
            refs = attention_backward(q, k, v, do, scale=sc)
            base = abs(sc) * _amax(do) * _amax(v)
            mus = (base * _amax(k), base * _amax(q), _amax(do))
            errs = {n: _rel(to_numpy(x), ref, mu) for n, x, ref, mu in zip(("dQ", "dK", "dV"), data, refs, mus, strict=True)}
    return tiling, meas, data, errs, xp.__name__


def _amax(x: np.ndarray) -> float:
    return float(np.max(np.abs(x))) if x.size else 0.0


def _rel(x: np.ndarray, ref: np.ndarray, mu: float) -> float:
    """max|x − ref| / max(max|ref|, 10⁻³·μ), μ the size of the products summed into x: the plain relative
    error, except where the exact gradient vanishes (N = 1 gives dQ = dK = 0 and rounding noise ~10⁻¹⁶·μ)."""
    if ref.size == 0:
        return 0.0
    return float(np.max(np.abs(x - ref)) / max(_amax(ref), 1e-3 * mu, 1e-300))
