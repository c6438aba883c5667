"""Count one of attnio's registered Triton kernels on a workload: counted words per tensor, attnio's exact
formula for the same schedule and blocks, the best proved lower bound, and the output's error against the
float64 reference (needs Triton's interpreter: ``TRITON_INTERPRET=1``, torch, triton). Used by
benchmarks/bench_triton_kernels.py and tests/test_triton_fwd.py.

"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from attnio.algorithms.reference import attention4 as reference
from attnio.algorithms.run import random_inputs
from attnio.bounds.workloads import best_lower_bound
from attnio.counts import IOCount
from attnio.triton.kernels import KernelSpec, get
from attnio.triton.kernels._measured import TORCH_DTYPES, Ratios
from attnio.workload import Workload


@dataclass(frozen=True)
class KernelMeasurement(Ratios):
    kernel: str
    workload: Workload
    counted: IOCount  # words, every tensor
    reads_words: dict[str, int]
    writes_words: dict[str, int]
    formula: IOCount  # attnio's exact count of the same schedule and blocks
    bound_id: str
    bound_words: Fraction
    max_abs_error: float


def inputs(w: Workload, seed: int = 0) -> tuple[Any, Any, Any]:
    """Random q, k, v (standard normal, :func:`attnio.algorithms.workloads.random_inputs`) as CPU torch
    tensors of the workload's element type, laid out (batch, heads, N, width)."""
    import torch

    dt = getattr(torch, TORCH_DTYPES[w.dtype])
    return tuple(torch.from_numpy(x).to(dt) for x in random_inputs(w, seed))  # type: ignore[return-value]


def measure(name: str | KernelSpec, w: Workload, *, seed: int = 0) -> KernelMeasurement:
    """Launch kernel ``name`` on random inputs of ``w`` under counting (Triton's interpreter) and compare."""
    from attnio.triton.count import count_traffic

    spec = get(name) if isinstance(name, str) else name
    q, k, v = inputs(w, seed)
    outs = spec.buffers(w, q)
    with count_traffic(q=q, k=k, v=v, **outs) as t:
        spec.launcher()(q, k, v, causal=w.causal, M=w.M, **outs)
    ref = reference(*(x.double().numpy() for x in (q, k, v)), w.causal)
    err = float(np.max(np.abs(outs["o"].double().numpy() - ref)))
    bound_id, bound = best_lower_bound(w)
    return KernelMeasurement(
        spec.name, w, t.io_count(), {n: t.reads_words.get(n, 0) for n in spec.tensors},
        {n: t.writes_words.get(n, 0) for n in spec.tensors}, spec.expected(w), bound_id, bound, err,
    )
