"""attnio's Triton kernels as launchers with pinned blocks, in attnio.triton.check's convention, for
:func:`attnio.triton.formula.fit` and ``attnio kernel attnio.triton.kernels.pinned:FN --formula``.

Each takes its blocks as a ``block=(B_r, B_c)`` keyword whose default is the pinned config (``fit`` reads it,
and passes another ``block=`` through); the kernel modules are imported on the first call.

- ``fa2_grouped``, ``fa2_per_head``: the FA-2 forward (fa2_fwd.fa2_forward) at ``block=(B_r, B_c)``;
- ``square_tiling``: square tiling at tile side B = B_r (B_c must equal B_r); its ``attnio_widths`` adds
  T_v = ⌈d_v/B⌉ to the width basis (phase 2 reads S once per value-column tile);
- ``fa2_bwd``: the FA-2 backward (fa2_bwd.fa2_backward) at B_r, B_c.
"""

from __future__ import annotations

from typing import Any

from attnio.core.errors import InvalidParameter


def fa2_grouped(q: Any, k: Any, v: Any, o: Any, causal: bool, block: tuple[int, int] = (64, 32)) -> Any:
    from attnio.triton.kernels.fa2_fwd import fa2_forward

    return fa2_forward(q, k, v, causal=causal, block=tuple(block), schedule="grouped", o=o)[0]


def fa2_per_head(q: Any, k: Any, v: Any, o: Any, causal: bool, block: tuple[int, int] = (64, 32)) -> Any:
    from attnio.triton.kernels.fa2_fwd import fa2_forward

    return fa2_forward(q, k, v, causal=causal, block=tuple(block), schedule="per-head", o=o)[0]


def square_tiling(q: Any, k: Any, v: Any, o: Any, causal: bool, block: tuple[int, int] = (32, 32)) -> Any:
    from attnio.triton.kernels.square_tiling import square_tiling_forward

    if block[0] != block[1]:
        raise InvalidParameter("block", block, "(B, B): square tiles")
    return square_tiling_forward(q, k, v, causal=causal, B=block[0], o=o)[0]


square_tiling.attnio_widths = ("1", "d", "d_v", "T_v")  # S is read once per value-column tile: ⌈d_v/B⌉ times


def fa2_bwd(q: Any, k: Any, v: Any, o: Any, do: Any, lse: Any, dq: Any, dk: Any, dv: Any, causal: bool,
            block: tuple[int, int] = (32, 64)) -> None:
    from attnio.triton.kernels.fa2_bwd import fa2_backward

    fa2_backward(q, k, v, o, do, lse, causal=causal, B_r=block[0], B_c=block[1], dq=dq, dk=dk, dv=dv)
