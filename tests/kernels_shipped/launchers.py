"""Launchers in the shapes shipped kernels take; each one's counts are derived in tests/test_triton_ship.py (split_kv's and
prefix's, fitted, in tests/test_triton_formula.py)."""

from __future__ import annotations

import torch
import triton

from ._blocks import BLOCK_M, BLOCK_N
from .kernels import (
    _attn,
    _attn_paged,
    _attn_prefix,
    _attn_token_pool,
    _attn_varlen,
    _combine,
    _combine_splits,
    _stage,
)


def _grid_launch(q, k, v, o, o2, lse, splits, sm_scale, skip_empty=False):
    B, H, Nq, d = q.shape
    Hkv, Nkv, dv = k.shape[1], k.shape[2], v.shape[3]
    chunk = triton.cdiv(triton.cdiv(Nkv, BLOCK_N), splits) * BLOCK_N
    _attn[(triton.cdiv(Nq, BLOCK_M), B * H, splits)](
        q, k, v, o, o2, lse, Nq, Nkv, B * H, H // Hkv, sm_scale, chunk, D=d, DV=dv, WRITE_LSE=lse is not o,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, SKIP_EMPTY=skip_empty)
    return chunk


def attention(query, key, value, out=None, softmax_scale=None):
    """A serving engine's names; allocates its output when none is given."""
    if out is None:
        out = torch.empty_like(query)
    scale = softmax_scale if softmax_scale is not None else query.shape[-1] ** -0.5
    _grid_launch(query, key, value, out, out, out, 1, scale)
    return out


def attention_declared(query, key, value, out=None, softmax_scale=None):
    """The same launcher, with its mapping declared by its author (``attnio_args``, below)."""
    return attention(query, key, value, out, softmax_scale)


attention_declared.attnio_args = {"query": "q", "key": "k", "value": "v", "out": "o"}


class FlashFn(torch.autograd.Function):
    """A training library's autograd Function: forward allocates o; backward is not written here."""

    @staticmethod
    def forward(ctx, q, k, v, sm_scale):
        o = torch.empty_like(q)
        _grid_launch(q, k, v, o, o, o, 1, sm_scale)
        return o

    @staticmethod
    def backward(ctx, do):
        raise NotImplementedError


def on_cuda(q, k, v, sm_scale):
    """Allocates with device="cuda" and asserts is_cuda, as GPU-only code does."""
    assert q.is_cuda and k.is_cuda, "inputs must be on the GPU"
    o = torch.empty(q.shape, dtype=q.dtype, device="cuda")
    scratch = torch.zeros(1, device=torch.device("cuda", 0)).cuda()
    assert o.is_cuda and scratch.is_cuda
    _grid_launch(q, k, v, o, o, o, 1, sm_scale)
    return o


def by_sm_count(q, k, v, o, sm_scale):
    """Split-KV in 2 when the grid would fill less than half the GPU's SMs (a short prefill), else one pass."""
    B, H, Nq, dv = o.shape
    programs = B * H * triton.cdiv(Nq, BLOCK_M)
    sms = torch.cuda.get_device_properties(q.device).multi_processor_count
    if 2 * programs > sms:
        _grid_launch(q, k, v, o, o, o, 1, sm_scale)
        return o
    o_part = torch.empty((2, B * H, Nq, dv), dtype=torch.float32, device="cuda")
    lse_part = torch.empty((2, B * H, Nq), dtype=torch.float32, device="cuda")
    _grid_launch(q, k, v, o_part, o_part, lse_part, 2, sm_scale)
    _combine[(triton.cdiv(Nq, BLOCK_M), B * H)](o_part, lse_part, o, Nq, B * H, DV=dv, BLOCK_M=BLOCK_M)
    return o


def staged(q, k, v, o, sm_scale):
    """Q and K first copied by one staging kernel into two buffers allocated here (as a quantization pass writes
    int8 copies), then the forward on the copies: two distinct tensors share the name ``_stage.Dst``."""
    B, H, Nq, d = q.shape
    Hkv, Nkv = k.shape[1], k.shape[2]
    qs, ks = torch.empty_like(q), torch.empty_like(k)
    _stage[(triton.cdiv(Nq, BLOCK_M), B * H)](q, qs, Nq, D=d, BLOCK_M=BLOCK_M)
    _stage[(triton.cdiv(Nkv, BLOCK_M), B * Hkv)](k, ks, Nkv, D=d, BLOCK_M=BLOCK_M)
    _grid_launch(qs, ks, v, o, o, o, 1, sm_scale)
    return o


def split_kv(q, k, v, o, sm_scale):
    """Split-KV in ``SPLITS`` chunks of whole key blocks, the empty chunks skipped (a short sequence fills fewer),
    then one combine over the ⌈N_kv / chunk⌉ non-empty ones."""
    B, H, Nq, dv = o.shape
    o_part = torch.empty((SPLITS, B * H, Nq, dv), dtype=torch.float32, device=q.device)
    lse_part = torch.empty((SPLITS, B * H, Nq), dtype=torch.float32, device=q.device)
    chunk = _grid_launch(q, k, v, o_part, o_part, lse_part, SPLITS, sm_scale, skip_empty=True)
    _combine_splits[(triton.cdiv(Nq, BLOCK_M), B * H)](o_part, lse_part, o, Nq, B * H, triton.cdiv(k.shape[2], chunk),
                                                      DV=dv, BLOCK_M=BLOCK_M)
    return o


SPLITS = 3
split_kv.attnio_splits = SPLITS  # the key splits S of the fitted length NE (attnio.triton.formula)


def two_pointers(q, k, v, o, sm_scale):
    """The output passed as two pointers (even query blocks store through one, odd through the other)."""
    _grid_launch(q, k, v, o, o, o, 1, sm_scale)


def varlen(q, k, v, o, cu_seqlens, max_seqlen, sm_scale):
    """Packed (tokens, heads, d) tensors with cumulative sequence lengths."""
    H, d, dv = q.shape[1], q.shape[2], v.shape[2]
    batch = cu_seqlens.numel() - 1
    _attn_varlen[(triton.cdiv(max_seqlen, BLOCK_M), batch, H)](
        q, k, v, o, cu_seqlens, H, H // k.shape[1], sm_scale, max_seqlen, D=d, DV=dv, BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N)
    return o


def paged(q, k_cache, v_cache, block_table, seq_lens, o, sm_scale):
    """K and V in a paged cache with a block table (pages of 16 rows: the key block is the page)."""
    B, H, Nq, d = q.shape
    page, hkv, dv = k_cache.shape[1], k_cache.shape[2], v_cache.shape[3]
    _attn_paged[(triton.cdiv(Nq, BLOCK_M), B * H)](
        q, k_cache, v_cache, block_table, seq_lens, o, Nq, H, H // hkv, sm_scale, block_table.shape[1], D=d, DV=dv,
        PAGE=page, BLOCK_M=BLOCK_M)
    return o


def prefix(q, k, v, o, k_cache, v_cache, block_table, seq_lens, sm_scale):
    """A prefix prefill (causal): the sequence's first N_kv − N_q keys read from the paged cache, the last N_q
    (the new tokens, whose queries these are) from k and v."""
    B, H, Nq, d = q.shape
    page, hkv, dv = k_cache.shape[1], k_cache.shape[2], v_cache.shape[3]
    _attn_prefix[(triton.cdiv(Nq, BLOCK_M), B * H)](
        q, k, v, k_cache, v_cache, block_table, seq_lens, o, Nq, H, H // hkv, sm_scale, block_table.shape[1], D=d,
        DV=dv, PAGE=page, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return o


def token_pool(q, k_pool, v_pool, kv_indices, kv_indptr, o, sm_scale):
    """K and V rows in a token pool, each sequence's slots listed by kv_indices between kv_indptr offsets."""
    B, H, Nq, d = q.shape
    k_pool, v_pool = k_pool.flatten(0, 1), v_pool.flatten(0, 1)  # (pages, 1, kv_heads, d): a page is one token
    lens = (kv_indptr[1:] - kv_indptr[:-1]).tolist()
    _attn_token_pool[(triton.cdiv(Nq, BLOCK_M), B * H)](
        q, k_pool, v_pool, kv_indices, kv_indptr, o, Nq, H, H // k_pool.shape[1], sm_scale, max(lens), D=d,
        DV=v_pool.shape[2], BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return o


token_pool.attnio_args = {"k_pool": "k_cache", "v_pool": "v_cache"}
