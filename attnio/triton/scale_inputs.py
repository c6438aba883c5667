"""The inputs a fast count (:mod:`attnio.triton.scale`) passes a launcher: zero tensors of the workload's shapes
(a kernel's addresses do not depend on the values of q, k, v, o, ...), and the index tensors exact.

By the names the launcher takes (:mod:`attnio.triton.launcher`), for a workload ``w``:

- dense: q (batch, heads, N_q, d), k (batch, kv_heads, N_kv, d), v (…, d_v), o (batch, heads, N_q, d_v) of the
  workload's dtype; backward: do like o, lse (batch, heads, N_q) float32, dq, dk, dv like q, k, v;
- varlen (``cu_seqlens`` or ``max_seqlen`` taken): ``batch`` sequences of N_q = N_kv tokens each, packed:
  q (tokens, heads, d), k, v (tokens, kv_heads, d/d_v), o (tokens, heads, d_v), cu_seqlens (0, N, 2N, …) int32,
  max_seqlen N;
- paged (any of k_cache, v_cache, block_table, seq_lens, kv_indices, kv_indptr taken; ``page_size`` P):
  k_cache (pages, P, kv_heads, d), v_cache (pages, P, kv_heads, d_v), pages = batch·⌈N_kv/P⌉ in sequence order
  (sequence b's page j is page b·⌈N_kv/P⌉ + j: the block table is the identity, so that the sequences' programs
  differ by a base offset, which :func:`attnio.triton.scale.count` checks), seq_lens (batch,) = N_kv,
  kv_indices the block table's rows one after another, kv_indptr (batch + 1,) int32. A layout with the pages
  permuted (``attnio.triton.check.paged_kv``) moves the same words through a kernel that reads pages through the
  table; tests/test_triton_scale.py compares the two on the shipped kernels.

Imports torch only when called.
"""

from __future__ import annotations

from typing import Any

from attnio.core.errors import InvalidParameter
from attnio.triton.launcher import PAGED, VARLEN

_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def inputs(w: Any, names: tuple[str, ...], page_size: int | None = None) -> dict[str, Any]:
    """The inputs named ``names`` (attnio inputs a launcher takes) for workload ``w`` (module docstring)."""
    import torch

    if w.dtype not in _DTYPES:
        raise InvalidParameter("dtype", w.dtype, f"one of {', '.join(_DTYPES)} (the interpreter's CPU types)")
    dt = getattr(torch, _DTYPES[w.dtype])
    paged = any(n in names for n in PAGED)
    varlen = any(n in names for n in VARLEN)
    if paged != (page_size is not None):
        raise InvalidParameter("page_size", page_size, "a page size exactly when the launcher takes a paged K/V "
                               f"cache ({', '.join(PAGED)}); it takes {', '.join(names)}")
    z = torch.zeros
    if varlen:
        if paged or w.Nq != w.Nkv:
            raise InvalidParameter("workload", f"Nq={w.Nq} Nkv={w.Nkv}", "Nq = Nkv and no paged cache for a packed "
                                   "variable-length launcher (sequences of N tokens each)")
        T = w.batch * w.Nq
        t = {"q": z((T, w.heads, w.d), dtype=dt), "k": z((T, w.kv_heads, w.d), dtype=dt),
             "v": z((T, w.kv_heads, w.dv), dtype=dt), "o": z((T, w.heads, w.dv), dtype=dt),
             "cu_seqlens": torch.arange(0, T + 1, w.Nq, dtype=torch.int32), "max_seqlen": w.Nq}
        return {n: t[n] for n in names if n in t}
    t = {"q": z((w.batch, w.heads, w.Nq, w.d), dtype=dt), "k": z((w.batch, w.kv_heads, w.Nkv, w.d), dtype=dt),
         "v": z((w.batch, w.kv_heads, w.Nkv, w.dv), dtype=dt), "o": z((w.batch, w.heads, w.Nq, w.dv), dtype=dt)}
    if any(n in names for n in ("do", "lse", "dq", "dk", "dv")):
        t["do"] = z((w.batch, w.heads, w.Nq, w.dv), dtype=dt)
        t["lse"] = z((w.batch, w.heads, w.Nq), dtype=torch.float32)
        t["dq"], t["dk"], t["dv"] = (torch.zeros_like(t[x]) for x in ("q", "k", "v"))
    if paged:
        P = page_size
        per = -(-w.Nkv // P)
        pages = w.batch * per
        table = torch.arange(pages, dtype=torch.int32).reshape(w.batch, per)
        t |= {"k_cache": z((pages, P, w.kv_heads, w.d), dtype=dt), "v_cache": z((pages, P, w.kv_heads, w.dv), dtype=dt),
              "block_table": table, "seq_lens": torch.full((w.batch,), w.Nkv, dtype=torch.int32),
              "kv_indices": table.reshape(-1).clone(),
              "kv_indptr": torch.arange(0, pages + 1, per, dtype=torch.int32)}
    return {n: t[n] for n in names if n in t}
