"""Decoding against a KV cache on the two-level machine: Flash-Decoding's split-KV with GQA packing, an optional
paged cache (block table), fp8 K/V with scales, and MLA's shared K/V row (docs/serving.md).

Loop nest, per unit (one sequence × one K/V head; R = g·s_q packed query rows taken B_q at a time,
T_q = ⌈R/B_q⌉; n = N_kv cached tokens, s splits of C tokens, B_c tokens per step; P tokens per page when
paged, then B_c = min(P, n))::

    for σ in 1..s, for each block of B_q rows:      # split σ: KV tokens [σC, min((σ+1)C, n))
        load Q (B_q×d); O_σ ← 0, ℓ ← 0, m ← −∞        # Q and the accumulators stay in fast memory
        for j over the split's steps of B_c tokens:
            [paged] load BT[page j] (1 int32)           # the block table gives the page's physical slot
            load K_j (B_c×d) [fp8: and its scales]; S = scale·Q K_jᵀ (R×B_c); free K_j
            m_new = max(m, rowmax S); P̃ = exp(S − m_new); α = exp(m − m_new); ℓ = αℓ + rowsum P̃
            load V_j (B_c×d_v) [fp8: scales; MLA absorbed: V_j is K_j's first d_v channels, kept, not reloaded]
            O_σ = α·O_σ + P̃ V_j; free V_j
        s = 1: write O = O_σ/ℓ (R×d_v)
        s > 1: write O_part[σ] = O_σ/ℓ and LSE_part[σ] = m + log ℓ (fp32)
    combine (s > 1): load LSE_part (s·R); for σ: load O_part[σ], O += exp(LSE_σ − LSE)·O_part[σ]; write O

Fast memory: Q, O_σ (B_q(d + d_v)), S (B_q·B_c), m, ℓ, m_new (3B_q), one K/V buffer B_c·max(d, d_v) (MLA:
B_c·d, K_j kept for V_j), its scales, one table entry: ``B_q(d + d_v + 3) + B_q·B_c + B_c·w + …  ≤ M``.
Block rule (``attnio.bounds.serving.blocks``): B_q = R when the packed rows fit beside one step (GQA packing:
K/V read once per split), else the fewest row blocks, each streaming K/V again (MLA with 128 query heads
of 576 + 512 channels does not fit one SM's shared memory: the registers that real kernels also use are not
part of the two-level model); B_c as many tokens as fit (the count does not depend on it).

Exact count: ``attnio.bounds.serving.decode_count`` (derived in docs/serving.md); a test checks
measured == formula per tensor.

Worked count: b = 1, H = 2, H_kv = 1, s_q = 1, N_kv = 6, d = d_v = 2, 2 splits: R = 2, Q read twice (8
words), K and V once (12 + 12), partial O and LSE written and read back (8 + 4 each way), O written (4).

>>> from attnio.core.workload import Workload
>>> from attnio.bounds.serving import Decode
>>> r = run_decode(Workload.build(heads=2, kv_heads=1, Nq=1, Nkv=6, d=2, M=64), Decode(splits=2), seed=0)
>>> {t: (c.reads_words, c.writes_words) for t, c in sorted(r.measurement.per_array.items())}
{'K': (12, 0), 'LSE_part': (4, 4), 'O': (0, 4), 'O_part': (8, 8), 'Q': (8, 0), 'V': (12, 0)}
>>> r.max_abs_error < 1e-12
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnio.algorithms.backend import to_numpy
from attnio.algorithms.machine import Machine, Measurement, SlowArray
from attnio.algorithms.reference import attention4 as reference
from attnio.algorithms.reference import default_scale
from attnio.bounds.serving import SCALE_GROUP, Decode, blocks, resolve, written_splits
from attnio.core.validate import check_run_sizes, check_seed
from attnio.core.workload import Workload


@dataclass(frozen=True)
class DecodeTiling:
    """s splits of ``chunk`` KV tokens, B_c tokens per inner step, R packed query rows per unit taken B_q at a
    time (T_q = ⌈R/B_q⌉ row blocks, each streaming the split's K/V once)."""

    splits: int
    chunk: int
    B_c: int
    R: int
    B_q: int
    written: int = 0  # splits that write partials (the fa2 rule: every requested split, the empty ones too)
    lse_out: bool = False  # the final log-sum-exp of each row written (the fa2 rule)

    @property
    def T_q(self) -> int:
        return -(-self.R // self.B_q)

    @classmethod
    def default(cls, w: Workload, dec: Decode) -> DecodeTiling:
        """The block rule of ``attnio.bounds.serving.blocks`` (written once, shared with the formula)."""
        dec = resolve(w, dec)
        b = blocks(w, dec)
        return cls(*b, written_splits(dec, b[0]), dec.split_rule == "fa2")


@dataclass(frozen=True)
class DecodeResult:
    workload: Workload
    decode: Decode
    tiling: DecodeTiling
    measurement: Measurement
    output: np.ndarray | None
    max_abs_error: float | None


def _quantised(x: np.ndarray, rng: np.random.Generator, layout: str = "group128") -> tuple[np.ndarray, np.ndarray]:
    """(values, scales): ``x`` (b, H_kv, n, c) split into stored values and positive fp32 scales: one per 128
    channels of a row (``group128``, ``flashmla``: shape (b, H_kv, n, ⌈c/128⌉)), one per (sequence, K/V head)
    (``head``: (b·H_kv, 1)) or one in all (``tensor``: (1, 1))."""
    if layout in ("head", "tensor"):
        scales = rng.uniform(0.5, 2.0, size=(x.shape[0] * x.shape[1] if layout == "head" else 1, 1))
        per = scales.reshape(-1, 1, 1, 1) if layout == "tensor" else scales.reshape(x.shape[0], x.shape[1], 1, 1)
        return x / per, scales
    groups = math.ceil(x.shape[-1] / SCALE_GROUP)
    scales = rng.uniform(0.5, 2.0, size=x.shape[:-1] + (groups,))
    return x / np.repeat(scales, SCALE_GROUP, axis=-1)[..., : x.shape[-1]], scales


def run_decode(w: Workload, dec: Decode, *, seed: int | None = 0, count_only: bool = False,
               scale: float | None = None) -> DecodeResult:
    """Run the decode schedule over the whole call; per-tensor counts in ``measurement.per_array`` (words of
    each tensor's type: ``attnio.bounds.serving.dtypes``). Numeric runs check the output against the float64
    reference (``max_abs_error``); a fully cached causal call is bottom-right aligned as in docs/workloads.md."""
    dec = resolve(w, dec)
    seed = check_seed(seed)
    t = DecodeTiling.default(w, dec)
    # numeric runs hold every head's rows and the float64 reference's scores of every head
    check_run_sizes(w.Nq, w.d, w.dv, count_only=count_only, Nkv=w.Nkv, heads=w.batch * w.heads)
    fp8 = (dec.kv_dtype or w.dtype) == "fp8"
    paged = dec.page is not None
    U, R, n, d, dv = w.batch * w.kv_heads, t.R, w.Nkv, w.d, w.dv
    m = Machine(w.M, algorithm="decode", count_only=count_only)
    pages = -(-n // dec.page) if paged else 0
    rope = d - dv if dec.scales == "flashmla" else 0  # FlashMLA: K's last d − d_v channels in Q's type, unscaled
    dk = d - rope  # K's fp8 channels
    per_prog = fp8 and dec.scales in ("head", "tensor")  # one K (V) scale per program, read with its Q block
    sg_k, sg_v = math.ceil(dk / SCALE_GROUP), math.ceil(dv / SCALE_GROUP)
    n_prog_scales = (U if dec.scales == "head" else 1) if per_prog else 0
    rng = np.random.default_rng(seed)
    Q4 = K4 = V4 = None
    arrays: dict[str, SlowArray] = {}
    if count_only:
        arrays["Q"] = m.input("Q", (U * R, d))
        arrays["K"] = m.input("K", (U * n, dk))
        if rope:
            arrays["K_rope"] = m.input("K_rope", (U * n, rope))
        if not dec.shared_kv:
            arrays["V"] = m.input("V", (U * n, dv))
        if fp8:
            arrays["K_scale"] = m.input("K_scale", (n_prog_scales, 1) if per_prog else (U * n, sg_k))
            if not dec.shared_kv:
                arrays["V_scale"] = m.input("V_scale", (n_prog_scales, 1) if per_prog else (U * n, sg_v))
        if paged:
            arrays["BT"] = m.input("BT", (w.batch * pages,))
        slot = None
    else:
        Q4 = rng.standard_normal((w.batch, w.heads, w.Nq, d))
        K4 = rng.standard_normal((w.batch, w.kv_heads, n, d))
        V4 = K4[..., :dv].copy() if dec.shared_kv else rng.standard_normal((w.batch, w.kv_heads, n, dv))
        # packed rows: unit (b, h_kv) holds its g query heads × s_q tokens
        arrays["Q"] = m.input("Q", Q4.reshape(U * R, d))
        # physical cache: each sequence's pages in a random order, the block table maps logical -> physical
        slot = rng.permutation(w.batch * pages).reshape(w.batch, pages) if paged else None
        Ks, Vs = K4[..., :dk], V4
        if fp8:
            Ks, ks = _quantised(K4[..., :dk], rng, dec.scales)
            arrays["K_scale"] = m.input("K_scale", ks if per_prog else _physical(ks, slot, dec.page))
            if not dec.shared_kv:
                Vs, vs = _quantised(V4, rng, dec.scales)
                arrays["V_scale"] = m.input("V_scale", vs if per_prog else _physical(vs, slot, dec.page))
        arrays["K"] = m.input("K", _physical(Ks, slot, dec.page))
        if rope:
            arrays["K_rope"] = m.input("K_rope", _physical(K4[..., dk:], slot, dec.page))
        if not dec.shared_kv:
            arrays["V"] = m.input("V", _physical(Vs, slot, dec.page))
        if paged:
            arrays["BT"] = m.input("BT", slot.reshape(-1).astype(np.float64))
    sc = default_scale(d, scale)
    O = m.slow("O", (U * R, dv), role="output")
    LSE = m.slow("LSE", (U * R,), role="output") if t.lse_out else None
    if t.written > 1:
        O_part = m.slow("O_part", (t.written * U * R, dv))
        LSE_part = m.slow("LSE_part", (t.written * U * R,))
    for us in m.tiles(U, 1):
        u = us.start
        for sp, qb in ((sp, qb) for sp in m.tiles(n, t.chunk) for qb in m.tiles(R, t.B_q)):
            sigma = sp.start // t.chunk
            rq = qb.stop - qb.start
            qrows = slice(u * R + qb.start, u * R + qb.stop)
            Qb = m.load(arrays["Q"], qrows, what="Q")  # resident for the whole split
            Ob = m.alloc((rq, dv), what="O_sigma")
            mi = m.alloc((rq,), what="m", fill=-np.inf)
            li = m.alloc((rq,), what="ℓ")
            prog = []  # per-head or per-tensor scales: K's (and V's), read once per program and kept
            if per_prog:
                at = slice(u, u + 1) if dec.scales == "head" else slice(0, 1)
                prog = [m.load(arrays[t], at, what="scale") for t in ("K_scale", "V_scale") if t in arrays]
            for st in m.tiles(sp.stop - sp.start, t.B_c):
                toks = slice(sp.start + st.start, sp.start + st.stop)
                bc = toks.stop - toks.start
                e = None
                if paged:
                    b = u // w.kv_heads
                    e = m.load(arrays["BT"], slice(b * pages + toks.start // dec.page, b * pages + toks.start // dec.page + 1), what="BT entry")
                phys = _rows(u, toks, w, e, dec.page, pages, m.numeric)
                Kb = m.load(arrays["K"], phys, what="K_j")
                if per_prog:
                    Kd = Kb.data * prog[0].data[0, 0] if m.numeric else None
                else:
                    Kd = _dequant(m, arrays.get("K_scale"), Kb, phys, dk) if fp8 else (Kb.data if m.numeric else None)
                if rope:  # FlashMLA's row: the RoPE channels beside the fp8 ones, in Q's type
                    Kr = m.load(arrays["K_rope"], phys, what="K_rope_j")
                    Kd = np.concatenate([Kd, Kr.data], axis=1) if m.numeric else None
                    m.free(Kr)
                S = m.alloc((rq, bc), what="S", fill=None)
                if m.numeric:
                    S.data[...] = (Qb.data @ Kd.T) * sc
                    _causal(S.data, w, toks, qb)
                m.work("qk", rq * bc * d)
                if dec.shared_kv:  # MLA absorbed: V_j is K_j's first d_v channels, already resident
                    Vd = Kd[:, :dv] if m.numeric else None
                else:
                    m.free(Kb)
                    Kb = m.load(arrays["V"], phys, what="V_j")
                    if per_prog:
                        Vd = Kb.data * prog[1].data[0, 0] if m.numeric else None
                    else:
                        Vd = _dequant(m, arrays.get("V_scale"), Kb, phys, dv) if fp8 else (Kb.data if m.numeric else None)
                mnew = m.alloc((rq,), what="m_new", fill=None)
                if m.numeric:
                    mnew.data[...] = np.maximum(mi.data, S.data.max(axis=1))
                    fin = np.isfinite(mnew.data)  # a row that has seen no key yet keeps its zeros
                    S.data[...] = np.exp(S.data - np.where(fin, mnew.data, 0.0)[:, None])
                    alpha = np.where(fin, np.exp(mi.data - np.where(fin, mnew.data, 0.0)), 1.0)
                    li.data[...] = alpha * li.data + S.data.sum(axis=1)
                    Ob.data[...] = alpha[:, None] * Ob.data + S.data @ Vd
                    mi.data[...] = mnew.data
                m.work("pv", rq * bc * dv)
                m.free(Kb, S, mnew, *((e,) if e is not None else ()))
            if m.numeric:  # a row whose keys in this split are all masked keeps O_σ = 0 and LSE_σ = −∞
                seen = li.data > 0
                Ob.data[seen] /= li.data[seen, None]
                mi.data[...] = np.where(seen, mi.data + np.log(np.where(seen, li.data, 1.0)), -np.inf)
            if t.written == 1:
                m.store(Ob, O, qrows)
                if LSE is not None:
                    m.store(mi, LSE, qrows)
            else:
                prow = slice((sigma * U + u) * R + qb.start, (sigma * U + u) * R + qb.stop)
                m.store(Ob, O_part, prow)
                m.store(mi, LSE_part, prow)
            m.free(Qb, Ob, mi, li, *prog)
        for sigma in range(t.splits, t.written):  # the fa2 rule's empty splits: zeros and −∞, read by the combine
            for qb in m.tiles(R, t.B_q):
                prow = slice((sigma * U + u) * R + qb.start, (sigma * U + u) * R + qb.stop)
                Ob = m.alloc((qb.stop - qb.start, dv), what="O_sigma")
                mi = m.alloc((qb.stop - qb.start,), what="m", fill=-np.inf)
                m.store(Ob, O_part, prow)
                m.store(mi, LSE_part, prow)
                m.free(Ob, mi)
        if t.written > 1:
            for qb in m.tiles(R, t.B_q):
                _combine(m, O_part, LSE_part, O, u, U, R, qb, dv, t.written, LSE)
    meas = m.finish()
    out = err = None
    if not count_only:
        packed = to_numpy(m.output_data(O)).reshape(w.batch, w.kv_heads, w.groups, w.Nq, dv)
        out = packed.reshape(w.batch, w.heads, w.Nq, dv)
        err = float(np.max(np.abs(out - reference(Q4, K4, V4, w.causal, scale))))
    return DecodeResult(w, dec, t, meas, out, err)


def _physical(x: np.ndarray, slot: np.ndarray | None, page: int | None) -> np.ndarray:
    """A (b, H_kv, n, c) cache as the machine's 2-D slow array: rows of unit u = (b, h) at [u·n, (u+1)·n),
    or, paged, physical pages: page p of sequence b of head h at slot[b, p] of head h's pool, each page
    min(P, n) rows long (a page longer than the cache holds its n rows: no padding beyond them)."""
    b, h, n, c = x.shape
    if slot is None:
        return x.reshape(b * h * n, c)
    P, S = page, min(page, n)  # type: ignore[type-var]
    pages = slot.shape[1]
    pool = np.zeros((h, b * pages * S, c))
    for bi in range(b):
        for p in range(pages):
            seg = x[bi, :, p * P : min(n, (p + 1) * P)]
            pool[:, slot[bi, p] * S : slot[bi, p] * S + seg.shape[1]] = seg
    return pool.reshape(h * b * pages * S, c)


def _rows(u: int, toks: slice, w: Workload, entry: Any, page: int | None, pages: int, numeric: bool) -> slice:
    """The slow rows of tokens ``toks`` (inside one page when paged) of unit u = (b, h): contiguous at u·n, or
    at physical page slot·min(P, n) of head h's pool of batch·pages pages (:func:`_physical`), the slot read from
    the block table (count-only runs have no table values: the logical page stands in, the same word count)."""
    if page is None:
        return slice(u * w.Nkv + toks.start, u * w.Nkv + toks.stop)
    b, h = divmod(u, w.kv_heads)
    logical = toks.start // page
    slot = int(entry.data[0]) if numeric else b * pages + logical
    start = (h * w.batch * pages + slot) * min(page, w.Nkv) + toks.start - logical * page
    return slice(start, start + toks.stop - toks.start)


def _dequant(m: Machine, scales: SlowArray, block: Any, rows: slice, width: int) -> Any:
    """Load the fp32 scales of ``rows`` (one per 128 channels) and return the block's dequantised values."""
    sb = m.load(scales, rows, what="scales")
    out = None
    if m.numeric:
        out = block.data * np.repeat(sb.data, SCALE_GROUP, axis=1)[:, :width]
    m.free(sb)
    return out


def _causal(S: np.ndarray, w: Workload, toks: slice, qb: slice) -> None:
    """Bottom-right causal mask on packed rows (row r is token r mod s_q of its head): token t sees keys
    j ≤ t + N_kv − s_q. Every key is needed by the last token, so the mask removes no load."""
    if not w.causal:
        return
    t = np.arange(qb.start, qb.stop) % w.Nq
    keys = np.arange(toks.start, toks.stop)
    S[keys[None, :] > (t + w.Nkv - w.Nq)[:, None]] = -np.inf


def _combine(m: Machine, O_part: SlowArray, LSE_part: SlowArray, O: SlowArray, u: int, U: int, R: int, qb: slice,
             dv: int, s: int, LSE: SlowArray | None = None) -> None:
    """Merge the s partial outputs of unit u's rows ``qb``: LSE = log Σ_σ exp(LSE_σ), O = Σ_σ exp(LSE_σ − LSE)·O_σ
    (an empty split's LSE_σ = −∞ weighs 0); ``LSE``: where to write the final LSE (the fa2 rule)."""
    at = [slice((sg * U + u) * R + qb.start, (sg * U + u) * R + qb.stop) for sg in range(s)]
    lse = [m.load(LSE_part, r, what="LSE_σ") for r in at]
    total = m.alloc((qb.stop - qb.start,), what="LSE", fill=None)
    acc = m.alloc((qb.stop - qb.start, dv), what="O")
    if m.numeric:
        stack = np.stack([x.data for x in lse])
        top = stack.max(axis=0)
        total.data[...] = top + np.log(np.exp(stack - top).sum(axis=0))
    for sg in range(s):
        part = m.load(O_part, at[sg], what="O_σ")
        if m.numeric:
            acc.data += np.exp(lse[sg].data - total.data)[:, None] * part.data
        m.free(part)
    m.store(acc, O, slice(u * R + qb.start, u * R + qb.stop))
    if LSE is not None:
        m.store(total, LSE, slice(u * R + qb.start, u * R + qb.stop))
    m.free(acc, total, *lse)
