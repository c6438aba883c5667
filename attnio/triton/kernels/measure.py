"""Count one of attnio's registered Triton kernels on a workload: counted words per tensor, attnio's exact
formula for the same schedule and blocks, the best proved lower bound (forward or backward), and the output's
error against the float64 reference (backward: the largest of dq, dk, dv's; needs Triton's interpreter:
``TRITON_INTERPRET=1``, torch, triton). Used by benchmarks/bench_triton_kernels.py,
benchmarks/bench_triton_bwd.py and the Triton tests. Imports neither Triton nor torch until it measures.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from attnio.algorithms.reference import attention4 as reference
from attnio.algorithms.run import random_inputs
from attnio.bounds.workloads import best_backward_lower_bound, best_lower_bound
from attnio.core.counts import IOCount
from attnio.core.workload import Workload
from attnio.triton.kernels.registry import KernelSpec, get

#: torch element type of each attnio dtype name the kernels take
TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


@dataclass(frozen=True)
class KernelMeasurement:
    """A kernel on one workload: counted words, attnio's exact count of the same schedule and blocks, the best
    lower bound, and the output's largest absolute error against the float64 reference."""

    kernel: str
    workload: Workload
    counted: IOCount  # words, every tensor
    reads_words: dict[str, int]
    writes_words: dict[str, int]
    formula: IOCount  # attnio's exact count of the same schedule and blocks
    bound_id: str
    bound_words: Fraction
    max_abs_error: float  # backward: the largest over dq, dk, dv

    @property
    def counted_over_formula(self) -> Fraction:
        return Fraction(self.counted.io_words, self.formula.io_words)

    @property
    def counted_over_bound(self) -> Fraction:
        return Fraction(self.counted.io_words) / self.bound_words


def inputs(w: Workload, seed: int = 0) -> tuple[Any, Any, Any]:
    """Random q, k, v (standard normal, :func:`attnio.algorithms.workloads.random_inputs`) as CPU torch
    tensors of the workload's element type, laid out (batch, heads, N, width)."""
    import torch

    dt = getattr(torch, TORCH_DTYPES[w.dtype])
    return tuple(torch.from_numpy(x).to(dt) for x in random_inputs(w, seed))  # type: ignore[return-value]


def backward_inputs(w: Workload, seed: int = 0) -> tuple[dict[str, Any], tuple[Any, Any, Any, Any]]:
    """A backward's inputs: q, k, v and do (``random_inputs(w, seed, grad=True)``: do from seed + 1), o and
    lse (attnio's float64 ``attention4_saved``: lse float32) as CPU torch tensors of the workload's element type;
    and the float64 Q, K, V, dO they were rounded from."""
    import torch

    from attnio.algorithms.reference import attention4_saved

    Q, K, V, dO = random_inputs(w, seed, grad=True)
    O, L = attention4_saved(Q, K, V, w.causal)
    dt = getattr(torch, TORCH_DTYPES[w.dtype])
    t = {n: torch.from_numpy(x).to(dt) for n, x in (("q", Q), ("k", K), ("v", V), ("o", O), ("do", dO))}
    t["lse"] = torch.from_numpy(L).to(torch.float32)
    return t, (Q, K, V, dO)


def measure(name: str | KernelSpec, w: Workload, *, seed: int = 0) -> KernelMeasurement:
    """Launch kernel ``name`` on random inputs of ``w`` under counting (Triton's interpreter) and compare."""
    from attnio.triton.count import count_traffic

    spec = get(name) if isinstance(name, str) else name
    backward = spec.direction == "backward"
    if backward:
        made, _ = backward_inputs(w, seed)
        ins = [made[n] for n in spec.inputs]
    else:
        ins = list(inputs(w, seed))
    outs = spec.buffers(w, ins[0])
    with count_traffic(**dict(zip(spec.inputs, ins, strict=True)), **outs) as t:
        spec.launcher()(*ins, causal=w.causal, M=w.M, **outs)
    x64 = {n: x.double().numpy() for n, x in zip(spec.inputs, ins, strict=True)}
    if backward:
        from attnio.algorithms.reference import attention4_backward

        refs = attention4_backward(x64["q"], x64["k"], x64["v"], x64["do"], w.causal)
        err = max(float(np.max(np.abs(outs[n].double().numpy() - r))) for n, r in zip(("dq", "dk", "dv"), refs, strict=True))
        bound_id, bound = best_backward_lower_bound(w)
    else:
        err = float(np.max(np.abs(outs["o"].double().numpy() - reference(x64["q"], x64["k"], x64["v"], w.causal))))
        bound_id, bound = best_lower_bound(w)
    return KernelMeasurement(
        spec.name, w, t.io_count(), {n: t.reads_words.get(n, 0) for n in t.names},
        {n: t.writes_words.get(n, 0) for n in t.names}, spec.expected(w), bound_id, bound, err,
    )
