"""The registry of attnio's own Triton attention kernels, :data:`KERNELS`, and their gate configurations,
:func:`builtin_entries` (read by ``attnio.triton.gate``: nothing registers at import).

Each entry names the kernel's module and launcher (imported on first use, by name: importing this module imports
neither Triton nor torch, and no kernel module imports this one back), the workload features it supports, the
attnio schedule whose exact formula its counted global traffic equals (bounds/costs.py ``WORKLOAD_FORMULAS``,
backward ``WORKLOAD_BACKWARD_FORMULAS``), and ``gate_workloads``: the fp32 workloads the gate and the report
count it at, with that formula in bytes.

>>> sorted(KERNELS)
['flash2-bwd', 'flash2-grouped', 'flash2-per-head', 'square_tiling']
>>> k = KERNELS["flash2-grouped"]
>>> (k.algorithm, k.schedule, k.formula(causal=True).algorithm, k.tensors)
('flash2', 'grouped', 'flash2/grouped/causal', ('q', 'k', 'v', 'o', 'lse'))
>>> b = KERNELS["flash2-bwd"]
>>> (b.direction, b.formula(causal=True).algorithm, b.tensors)
('backward', 'flash2-bwd/grouped/causal', ('q', 'k', 'v', 'o', 'do', 'lse', 'dq', 'dk', 'dv'))
>>> [(e.name, e.build().M) for e in builtin_entries()][:2]
[('flash2-grouped', 512), ('flash2-grouped', 512)]
>>> len(builtin_entries())
7
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnio.bounds.costs import (
    CostFormula,
    workload_backward_cost,
    workload_backward_formula,
    workload_cost,
    workload_formula,
)
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter
from attnio.triton.entry import GateKernel

#: the helpers every kernel module imports (part of each kernel's source, for the count cache)
COMMON = "attnio.triton.kernels._common"


@dataclass(frozen=True)
class KernelSpec:
    """One registered kernel: ``module``.``function`` launches it on the torch tensors ``inputs`` (forward q, k,
    v (batch, heads, N, width); backward also o, do, lse) with ``causal``, ``M`` (its block rule) and its named
    outputs; ``module.buffers(w, like)`` makes those outputs. Its counted traffic equals
    ``workload_cost(algorithm, w, schedule)`` (backward: ``workload_backward_cost``). ``check_function``: the
    module's launcher in attnio.triton.check's convention, when it has its own (else :func:`gate_launcher`
    adapts the forward launcher). ``gate_workloads``: ``Workload.build`` keywords (fp32) of the configurations
    the gate and the report count (:func:`builtin_entries`)."""

    name: str
    module: str
    function: str
    algorithm: str
    schedule: str
    direction: str  # "forward" or "backward"
    outputs: tuple[str, ...]  # tensors it writes, in the launcher's return order
    block_rule: str
    features: tuple[str, ...] = ("causal", "gqa", "mqa", "nq!=nkv")
    dtypes: tuple[str, ...] = ("fp32", "fp16", "bf16")
    options: dict[str, Any] = field(default_factory=dict)  # fixed keyword arguments of the launcher
    inputs: tuple[str, ...] = ("q", "k", "v")  # tensors it reads, in the launcher's positional order
    check_function: str | None = None
    gate_workloads: tuple[dict[str, Any], ...] = ()

    @property
    def tensors(self) -> tuple[str, ...]:
        """Every tensor the kernel touches, as count_traffic names them (its own scratch aside)."""
        return (*self.inputs, *self.outputs)

    def _module(self) -> Any:
        return importlib.import_module(self.module)

    def launcher(self) -> Callable[..., Any]:
        """``launch(*inputs, causal, M, **outputs)`` → the outputs (imports Triton and torch)."""
        fn = getattr(self._module(), self.function)

        def launch(*tensors: Any, causal: bool, M: int, **outputs: Any) -> Any:
            if len(tensors) != len(self.inputs):
                raise InvalidParameter("tensors", len(tensors), f"{len(self.inputs)}: {', '.join(self.inputs)}")
            return fn(*tensors, causal=causal, M=M, **self.options, **outputs)

        launch.__name__ = self.name
        return launch

    def buffers(self, w: Any, like: Any) -> dict[str, Any]:
        """Empty outputs of the kernel for the workload ``w`` (element type of ``like``)."""
        return self._module().buffers(w, like)

    def formula(self, causal: bool) -> CostFormula:
        if self.direction == "backward":
            return workload_backward_formula(self.algorithm, self.schedule, causal)
        return workload_formula(self.algorithm, self.schedule, causal)

    def expected(self, w: Any) -> IOCount:
        """attnio's exact count (words) of the same schedule and blocks over the workload ``w``."""
        if self.direction == "backward":
            return workload_backward_cost(self.algorithm, w, self.schedule)
        return workload_cost(self.algorithm, w, self.schedule)

    def formula_bytes(self, w: Any) -> int:
        """:meth:`expected` in bytes for an fp32 workload (4 bytes a word: lse, s and D are fp32 too)."""
        if w.dtype != "fp32":
            raise InvalidParameter("dtype", w.dtype, "fp32 for a formula in bytes (lse, s and D are fp32 whatever q is)")
        return 4 * self.expected(w).io_words


_FA2 = "B_r, B_c of attnio's flash2 rule: a = ⌊(M − max(d, d_v))/(d + d_v + 4)⌋ rows"
_PREFILL = {"heads": 4, "kv_heads": 2, "N": 32, "d": 16, "causal": True, "M": 512}  # GQA, causal
_DECODE = {"heads": 8, "kv_heads": 1, "Nq": 4, "Nkv": 64, "d": 16, "causal": True, "M": 512}  # MQA, N_q < N_kv
_SMALL = {"N": 32, "d": 32, "M": 256}  # small cache, M < d²
KERNELS: dict[str, KernelSpec] = {
    "flash2-grouped": KernelSpec(
        "flash2-grouped", "attnio.triton.kernels.fa2_fwd", "fa2_forward", "flash2", "grouped", "forward",
        ("o", "lse"), _FA2 + ", ⌊a/g⌋ positions of each of the g query heads of a K/V head per block",
        options={"schedule": "grouped"}, gate_workloads=(_PREFILL, _DECODE, _SMALL),
    ),
    "flash2-per-head": KernelSpec(
        "flash2-per-head", "attnio.triton.kernels.fa2_fwd", "fa2_forward", "flash2", "per-head", "forward",
        ("o", "lse"), _FA2 + " of one query head per block", options={"schedule": "per-head"},
        gate_workloads=(_PREFILL,),
    ),
    "square_tiling": KernelSpec(
        "square_tiling", "attnio.triton.kernels.square_tiling", "square_tiling_forward", "square_tiling",
        "per-head", "forward", ("o", "lse", "s"), "B × B tiles, B = ⌊√(M/4)⌋ (for M < d²)",
        gate_workloads=(_SMALL,),
    ),
    "flash2-bwd": KernelSpec(
        "flash2-bwd", "attnio.triton.kernels.fa2_bwd", "fa2_backward", "flash2-bwd", "grouped", "backward",
        ("dq", "dk", "dv"), "B_c, B_r of attnio's flash2-bwd rule (workloads_bwd.bwd_tiling): c = ⌊(M − 2d − d_v − 2)"
        "/(2d + 2d_v + 2)⌋ K/V rows, T_c = ⌈N_kv/c⌉, B_c = ⌈N_kv/T_c⌉; the g query heads of a K/V head in turn",
        features=("causal", "gqa", "mqa", "nq!=nkv", "dv!=d"), inputs=("q", "k", "v", "o", "do", "lse"),
        check_function="check_launch",
        gate_workloads=({"heads": 2, "N": 64, "d": 16, "causal": True, "M": 1024},  # multi-head, causal
                        {"heads": 4, "kv_heads": 2, "Nq": 32, "Nkv": 64, "d": 16, "M": 1024}),  # GQA, N_q ≠ N_kv
    ),
}


def get(name: str) -> KernelSpec:
    if name not in KERNELS:
        raise InvalidParameter("kernel", name, "one of " + ", ".join(sorted(KERNELS)))
    return KERNELS[name]


def gate_launcher(spec: KernelSpec) -> Callable[..., Any]:
    """``spec``'s launcher in attnio.triton.check's convention (tensors and ``causal``, ``workload`` by name);
    its statistics and scratch are counted as the kernel's own arguments."""
    if spec.check_function is not None:
        return getattr(spec._module(), spec.check_function)

    def launch(q: Any, k: Any, v: Any, o: Any, causal: bool, workload: Any) -> Any:
        return spec.launcher()(q, k, v, causal=causal, M=workload.M, o=o)

    launch.__name__ = spec.name
    return launch


def _lazy_launcher(spec: KernelSpec) -> Callable[..., Any]:
    """:func:`gate_launcher` resolved at the first call (building an entry imports no kernel module)."""
    if spec.check_function is None:
        return gate_launcher(spec)

    def launch(q: Any, k: Any, v: Any, o: Any, do: Any, lse: Any, dq: Any, dk: Any, dv: Any, causal: bool,
               workload: Any) -> Any:
        return gate_launcher(spec)(q, k, v, o, do, lse, dq, dk, dv, causal, workload)

    launch.__name__ = spec.name
    return launch


def builtin_entries() -> list[GateKernel]:
    """attnio's kernels at their ``gate_workloads`` (fp32), each with its exact formula in bytes, as the gate and
    the report count them (``attnio.triton.gate.configurations``)."""
    out = []
    for spec in KERNELS.values():
        tags = ("attnio", "backward") if spec.direction == "backward" else ("attnio",)
        for kw in spec.gate_workloads:
            out.append(GateKernel(spec.name, _lazy_launcher(spec), {"dtype": "fp32", **kw}, spec.formula_bytes, tags,
                                  (spec.module, COMMON)))
    return out
