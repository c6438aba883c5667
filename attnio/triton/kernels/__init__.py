"""attnio's own Triton attention kernels (docs/triton-kernels.md): FA-2 forward per-head and grouped
(:mod:`.fa2_fwd`), square tiling for the small cache (:mod:`.square_tiling`), FA-2 backward (:mod:`.fa2_bwd`),
each counted equal to one of attnio's exact schedules, and their registry (:mod:`.registry`: :data:`KERNELS`,
the gate's configurations :func:`~.registry.builtin_entries`).

Importing this package (or its registry) imports neither Triton nor torch and registers nothing; the kernel
modules import Triton (``pip install -e '.[triton]'``) and define their ``@triton.jit`` kernels at import, so
``TRITON_INTERPRET=1`` must be set before one of them is imported to count it on the CPU.
"""

from __future__ import annotations

from attnio.triton.kernels.registry import KERNELS, KernelSpec, builtin_entries, gate_launcher, get

__all__ = ["KERNELS", "KernelSpec", "builtin_entries", "gate_launcher", "get"]
