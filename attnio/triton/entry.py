"""One gated Triton configuration, :class:`GateKernel`: a launcher, a workload and the kernel's exact formula in
bytes. attnio's own kernels describe theirs in ``attnio.triton.kernels.registry`` (``builtin_entries``); a user's
file makes them with ``attnio.triton.gate.register``. Imports neither Triton nor torch.

>>> e = GateKernel("k", print, {"N": 8, "d": 2, "M": 64})
>>> e.key
'k|b=1|H=1|Hkv=1|Nq=8|Nkv=8|d=2|dv=2|causal=0|fp32|M=64'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GateKernel:
    """One named configuration: a launcher (attnio.triton.check's convention), a workload (``Workload.build``
    keywords), and optionally the kernel's exact formula in bytes (a function of the Workload). ``sources``: the
    modules whose source text is the kernel (attnio's kernels name theirs; a user's kernel is its launcher's
    file), read by the count cache (``attnio.triton.cache``)."""

    name: str
    launch: Callable[..., Any]
    workload: dict[str, Any]
    formula: Callable[[Any], int] | None = None
    tags: tuple[str, ...] = field(default=())
    sources: tuple[str, ...] = field(default=())

    @property
    def key(self) -> str:
        w = self.build()
        return (f"{self.name}|b={w.batch}|H={w.heads}|Hkv={w.kv_heads}|Nq={w.Nq}|Nkv={w.Nkv}|d={w.d}|dv={w.dv}"
                f"|causal={int(w.causal)}|{w.dtype}|M={w.M}")

    def build(self) -> Any:
        from attnio.core.workload import Workload

        kw = dict(self.workload)
        if not any(k in kw for k in ("M", "smem", "gpu")):
            kw["gpu"] = "h100"
        return Workload.build(**kw)
