"""The kernels: a FlashAttention-2 forward (Dao 2023, arXiv 2307.08691, Algorithm 1: online softmax over key
blocks) over a range of key blocks, written here; combine kernels for split-KV partial outputs; a staging copy
(Q and K copied into buffers the launcher allocates before the forward, as an int8 quantization pass does); a
packed variable-length forward; forwards over a paged cache, a token pool, and a cached prefix (a prefix prefill).

``_attn`` (q, k, v, o contiguous (batch, heads, N, d)): program (i, bh, s) owns query block i of query head bh
and the key chunk s of ``CHUNK`` keys; it reads its Q block, the K and V rows of its chunk (masked beyond N_kv)
and writes its normalized output through ``O`` (even query blocks) or ``O2`` (odd ones: the same tensor passed
twice, or a partial-output buffer), plus ``m + log l`` into ``LSE`` when ``WRITE_LSE``. With ``SKIP_EMPTY`` a
chunk that starts past N_kv returns before it reads anything (a decode engine's split-K stage 1), and
``_combine_splits`` merges the ``NS`` non-empty chunks' partial outputs.
"""

from __future__ import annotations

import triton
import triton.language as tl

from ._blocks import empty_state, kv_head, online_softmax_step, query_block, tile


@triton.jit
def _attn(Q, K, V, O, O2, LSE, Nq, Nkv, BH, groups, sm_scale, CHUNK, D: tl.constexpr, DV: tl.constexpr,
          WRITE_LSE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SKIP_EMPTY: tl.constexpr = False):
    i = tl.program_id(0)
    bh = tl.program_id(1)
    s = tl.program_id(2)
    if SKIP_EMPTY:
        if s * CHUNK >= Nkv:
            return
    bkv = bh // groups
    rows, dq, dvv = query_block(i, BLOCK_M, D, DV)
    q = tl.load(tile(Q + bh * Nq * D, rows, dq, D), mask=rows[:, None] < Nq, other=0.0)
    m, l, acc = empty_state(BLOCK_M, DV)
    for j in range(0, CHUNK, BLOCK_N):
        cols = s * CHUNK + j + tl.arange(0, BLOCK_N)
        k = tl.load(tile(K + bkv * Nkv * D, cols, dq, D), mask=cols[:, None] < Nkv, other=0.0)
        v = tl.load(tile(V + bkv * Nkv * DV, cols, dvv, DV), mask=cols[:, None] < Nkv, other=0.0)
        m, l, acc = online_softmax_step(q, k, v, cols[None, :] < Nkv, sm_scale, m, l, acc)
    out = acc / l[:, None]
    base = tile((s * BH + bh) * Nq * DV, rows, dvv, DV)
    if i % 2 == 0:
        tl.store(O + base, out, mask=rows[:, None] < Nq)
    else:
        tl.store(O2 + base, out, mask=rows[:, None] < Nq)
    if WRITE_LSE:
        tl.store(LSE + (s * BH + bh) * Nq + rows, m + tl.log(l), mask=rows < Nq)


@triton.jit
def _stage(Src, Dst, N, D: tl.constexpr, BLOCK_M: tl.constexpr):
    """Program (i, bh) copies row block i of head bh from ``Src`` into ``Dst`` (a quantization's staging pass:
    one read and one write per element)."""
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows, cols, _ = query_block(i, BLOCK_M, D, D)
    x = tl.load(tile(Src + bh * N * D, rows, cols, D), mask=rows[:, None] < N, other=0.0)
    tl.store(tile(Dst + bh * N * D, rows, cols, D), x, mask=rows[:, None] < N)


@triton.jit
def _combine(OP, LSEP, O, Nq, BH, DV: tl.constexpr, BLOCK_M: tl.constexpr):
    """Two partial outputs per row, weighted by exp(lse_s − lse): reads 2·(DV + 1) words, writes DV per row."""
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows = i * BLOCK_M + tl.arange(0, BLOCK_M)
    dvv = tl.arange(0, DV)
    rm = rows < Nq
    l0 = tl.load(LSEP + bh * Nq + rows, mask=rm, other=0.0)
    l1 = tl.load(LSEP + (BH + bh) * Nq + rows, mask=rm, other=0.0)
    o0 = tl.load(tile(OP + bh * Nq * DV, rows, dvv, DV), mask=rm[:, None], other=0.0)
    o1 = tl.load(tile(OP + (BH + bh) * Nq * DV, rows, dvv, DV), mask=rm[:, None], other=0.0)
    mx = tl.maximum(l0, l1)
    w0 = tl.exp(l0 - mx)
    w1 = tl.exp(l1 - mx)
    out = (o0 * w0[:, None] + o1 * w1[:, None]) / (w0 + w1)[:, None]
    tl.store(tile(O + bh * Nq * DV, rows, dvv, DV), out, mask=rm[:, None])


@triton.jit
def _combine_splits(OP, LSEP, O, Nq, BH, NS, DV: tl.constexpr, BLOCK_M: tl.constexpr):
    """The ``NS`` partial outputs of a row merged by their log-sum-exps (the online softmax over splits): reads
    NS·(DV + 1) words, writes DV per row."""
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows, _, dvv = query_block(i, BLOCK_M, DV, DV)
    rm = rows < Nq
    m, l, acc = empty_state(BLOCK_M, DV)
    for s in range(0, NS):
        ls = tl.load(LSEP + (s * BH + bh) * Nq + rows, mask=rm, other=0.0)
        o = tl.load(tile(OP + (s * BH + bh) * Nq * DV, rows, dvv, DV), mask=rm[:, None], other=0.0)
        m_new = tl.maximum(m, ls)
        alpha = tl.exp(m - m_new)
        w = tl.exp(ls - m_new)
        l = l * alpha + w
        acc = acc * alpha[:, None] + o * w[:, None]
        m = m_new
    tl.store(tile(O + bh * Nq * DV, rows, dvv, DV), acc / l[:, None], mask=rm[:, None])


@triton.jit
def _attn_varlen(Q, K, V, O, CU, H, groups, sm_scale, MAX_SEQLEN, D: tl.constexpr, DV: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Program (i, seq, h): query block i of sequence seq, head h, over packed (tokens, heads, d) tensors; a
    block past the sequence's end is masked off entirely (it still reads the two offsets)."""
    i = tl.program_id(0)
    seq = tl.program_id(1)
    h = tl.program_id(2)
    start = tl.load(CU + seq)
    L = tl.load(CU + seq + 1) - start
    kend = tl.where(i * BLOCK_M < L, L, 0)  # the keys a live block reads; none for a block past the end
    HKV = H // groups
    rows, dq, dvv = query_block(i, BLOCK_M, D, DV)
    rmask = (rows < L)[:, None]
    q = tl.load(Q + (start + rows[:, None]) * H * D + h * D + dq[None, :], mask=rmask, other=0.0)
    m, l, acc = empty_state(BLOCK_M, DV)
    for j in range(0, MAX_SEQLEN, BLOCK_N):
        cols = j + tl.arange(0, BLOCK_N)
        cmask = cols[:, None] < kend
        kv = h // groups
        k = tl.load(K + (start + cols[:, None]) * HKV * D + kv * D + dq[None, :], mask=cmask, other=0.0)
        v = tl.load(V + (start + cols[:, None]) * HKV * DV + kv * DV + dvv[None, :], mask=cmask, other=0.0)
        m, l, acc = online_softmax_step(q, k, v, (cols < L)[None, :], sm_scale, m, l, acc)
    out = acc / l[:, None]
    tl.store(O + (start + rows[:, None]) * H * DV + h * DV + dvv[None, :], out, mask=rmask)


@triton.jit
def _attn_paged(Q, KC, VC, BT, SL, O, Nq, H, groups, sm_scale, MAX_PAGES, D: tl.constexpr, DV: tl.constexpr,
                PAGE: tl.constexpr, BLOCK_M: tl.constexpr):
    """Program (i, bh): query block i of query head bh = b·H + h over a paged K/V cache (pages, PAGE, kv_heads,
    d); key block j is page BT[b, j] (one block-table word per key block), the sequence's length SL[b] (one word
    per program) masks the rows past its end."""
    i = tl.program_id(0)
    bh = tl.program_id(1)
    b, HKV, kvh = kv_head(bh, H, groups)
    n = tl.load(SL + b)
    rows, dq, dvv = query_block(i, BLOCK_M, D, DV)
    q = tl.load(tile(Q + bh * Nq * D, rows, dq, D), mask=rows[:, None] < Nq, other=0.0)
    m, l, acc = empty_state(BLOCK_M, DV)
    for j in range(0, MAX_PAGES):
        page = tl.load(BT + b * MAX_PAGES + j)
        slot = tl.arange(0, PAGE)
        cols = j * PAGE + slot
        cm = cols[:, None] < n
        k = tl.load(KC + ((page * PAGE + slot[:, None]) * HKV + kvh) * D + dq[None, :], mask=cm, other=0.0)
        v = tl.load(VC + ((page * PAGE + slot[:, None]) * HKV + kvh) * DV + dvv[None, :], mask=cm, other=0.0)
        m, l, acc = online_softmax_step(q, k, v, cols[None, :] < n, sm_scale, m, l, acc)
    out = acc / l[:, None]
    tl.store(tile(O + bh * Nq * DV, rows, dvv, DV), out, mask=rows[:, None] < Nq)


@triton.jit
def _attn_token_pool(Q, KP, VP, IDX, PTR, O, Nq, H, groups, sm_scale, MAX_N, D: tl.constexpr, DV: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Program (i, bh) over a token pool (slots, kv_heads, d): sequence b's keys are the slots
    IDX[PTR[b] .. PTR[b+1]) (two PTR words per program, one IDX word per key row read)."""
    i = tl.program_id(0)
    bh = tl.program_id(1)
    b, HKV, kvh = kv_head(bh, H, groups)
    start = tl.load(PTR + b)
    n = tl.load(PTR + b + 1) - start
    rows, dq, dvv = query_block(i, BLOCK_M, D, DV)
    q = tl.load(tile(Q + bh * Nq * D, rows, dq, D), mask=rows[:, None] < Nq, other=0.0)
    m, l, acc = empty_state(BLOCK_M, DV)
    for j in range(0, MAX_N, BLOCK_N):
        cols = j + tl.arange(0, BLOCK_N)
        slot = tl.load(IDX + start + cols, mask=cols < n, other=0)
        cm = cols[:, None] < n
        k = tl.load(KP + (slot[:, None] * HKV + kvh) * D + dq[None, :], mask=cm, other=0.0)
        v = tl.load(VP + (slot[:, None] * HKV + kvh) * DV + dvv[None, :], mask=cm, other=0.0)
        m, l, acc = online_softmax_step(q, k, v, cols[None, :] < n, sm_scale, m, l, acc)
    out = acc / l[:, None]
    tl.store(tile(O + bh * Nq * DV, rows, dvv, DV), out, mask=rows[:, None] < Nq)


@triton.jit
def _attn_prefix(Q, K, V, KC, VC, BT, SL, O, Nq, H, groups, sm_scale, MAX_PAGES, D: tl.constexpr, DV: tl.constexpr,
                 PAGE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """A prefix prefill, causal (bottom-right): program (i, bh) owns query block i of query head bh = b·H + h; the
    first C = SL[b] − Nq keys of sequence b are a cached prefix in the paged cache (pages, PAGE, kv_heads, d), gathered
    through one block-table word per key row, and every row sees all of them; the last Nq keys are K and V's
    (batch, kv_heads, N_kv, d) rows C.., of which block i reads [0, min(Nq, (i+1)·BLOCK_M)) (its diagonal whole)."""
    i = tl.program_id(0)
    bh = tl.program_id(1)
    b, HKV, kvh = kv_head(bh, H, groups)
    n = tl.load(SL + b)
    C = n - Nq
    rows, dq, dvv = query_block(i, BLOCK_M, D, DV)
    q = tl.load(tile(Q + bh * Nq * D, rows, dq, D), mask=rows[:, None] < Nq, other=0.0)
    m, l, acc = empty_state(BLOCK_M, DV)
    for j in range(0, C, BLOCK_N):
        cols = j + tl.arange(0, BLOCK_N)
        cm = cols < C
        slot = tl.load(BT + b * MAX_PAGES + cols // PAGE, mask=cm, other=0) * PAGE + cols % PAGE
        k = tl.load(KC + (slot[:, None] * HKV + kvh) * D + dq[None, :], mask=cm[:, None], other=0.0)
        v = tl.load(VC + (slot[:, None] * HKV + kvh) * DV + dvv[None, :], mask=cm[:, None], other=0.0)
        m, l, acc = online_softmax_step(q, k, v, cm[None, :], sm_scale, m, l, acc)
    kend = tl.minimum(Nq, (i + 1) * BLOCK_M)
    for j in range(0, kend, BLOCK_N):
        cols = j + tl.arange(0, BLOCK_N)
        cm = cols[:, None] < kend
        k = tl.load(tile(K + (b * HKV + kvh) * n * D, C + cols, dq, D), mask=cm, other=0.0)
        v = tl.load(tile(V + (b * HKV + kvh) * n * DV, C + cols, dvv, DV), mask=cm, other=0.0)
        m, l, acc = online_softmax_step(q, k, v, (cols[None, :] <= rows[:, None]) & (cols[None, :] < kend), sm_scale,
                                        m, l, acc)
    out = acc / l[:, None]
    tl.store(tile(O + bh * Nq * DV, rows, dvv, DV), out, mask=rows[:, None] < Nq)
