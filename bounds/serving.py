"""Decoding against a KV cache: split-KV (Flash-Decoding), paged KV, GQA packing, MLA and per-tensor dtypes.

Exact counts of the decode schedule of ``attnio.algorithms.decode`` (derived here, docs/serving.md), the
compulsory traffic and the decode lower bound. Everything is per tensor, in words of that tensor's own type,
so bytes are exact when Q/O, K/V, the fp32 partials and the int32 block table have different widths.

A decode call is a :class:`attnio.core.workload.Workload` (batch b, query heads H, K/V heads H_kv, N_q = s_q new
tokens, N_kv cached tokens, widths d, d_v, fast memory M) plus a :class:`Decode`: KV splits, page size, the
K/V element type and whether V is a slice of K's row (MLA's absorbed form).

One *unit* is one (sequence, K/V head): its g = H/H_kv query heads × s_q tokens, R = g·s_q rows, are packed
into one Q block, so each K/V word is read once per split, not once per query head (GQA packing). With s
splits (page-aligned when paged), per unit:

- reads: Q s·R·d; K n·d; V n·d_v (none when V is a slice of K's row); the block table ⌈n/P⌉ int32 entries
  (paged); fp8 scales n·(⌈d/128⌉ + ⌈d_v/128⌉) fp32 (one per 128 channels of a row; the other layouts of
  :data:`SCALE_LAYOUTS`: one per program, or FlashMLA's row with K_rope); with s > 1 the combine
  reads back s·R·d_v partial outputs and s·R log-sum-exps (fp32);
- writes: O R·d_v; with s > 1 also the s·R·d_v partial outputs and s·R log-sum-exps (fp32).

>>> from attnio.core.workload import Workload
>>> w = Workload.build(batch=2, heads=8, kv_heads=2, Nq=1, Nkv=100, d=4, dtype="bf16", M=4096)
>>> c = decode_count(w, Decode(splits=3, page=16))
>>> c.splits, c.chunk, c.words["Q"], c.words["K"], c.words["BT"], c.words["O_part"]
(3, 48, (192, 0), (1600, 0), (28, 0), (192, 192))

(4 units of R = 4 rows; 7 pages of 16 tokens, 3 pages per split; Q 4·3·4·4, K 4·100·4, BT 4·7, O_part 4·3·4·4.)
>>> c.bytes_total == sum(r * c.bpw[t] + wr * c.bpw[t] for t, (r, wr) in c.words.items())
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from attnio.bounds.expr import Expr, Sym, add, ceil, const, evaluate_int
from attnio.bounds.symbols import Nkv, d, dv, sym
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int
from attnio.core.workload import DTYPES, GPUS, Workload

#: bytes of the types that only serving tensors use: fp32 partials and statistics, int32 block-table entries.
PARTIAL_DTYPE, TABLE_DTYPE, SCALE_DTYPE = "fp32", "int32", "fp32"
TYPE_BYTES: dict[str, int] = {**DTYPES, "int32": 4}
#: channels per fp8 scale (one fp32 scale per 128 channels of a K or V row, the layout of docs/serving.md).
SCALE_GROUP = 128
#: fp8 scale layouts (docs/serving.md#fp8-scale-layouts): ``group128`` one fp32 per 128 channels of each K and V
#: row (the default, every published figure); ``head`` one per (sequence, K/V head) for K and for V
#: (FlashAttention-3's k_descale/v_descale, shape (batch, num_heads_k)); ``tensor`` one for K and one for V per
#: call (per-tensor scales); ``flashmla`` FlashMLA's fp8 MLA cache row: the d_v latent channels in fp8 with one
#: fp32 per 128 of them, the d − d_v RoPE channels in the query's 16-bit type (656 bytes per token at 576/512).
SCALE_LAYOUTS = ("group128", "head", "tensor", "flashmla")
#: decode split rules (docs/serving.md#split-and-row-block-rules): ``tokens`` attnio's own (⌈N_kv/s⌉ tokens per
#: split, no empty split, no final LSE); ``fa2`` FlashAttention-2's split-KV kernel (csrc/flash_attn/src/
#: flash_fwd_kernel.h): ⌈⌈N_kv/B_N⌉/s⌉ K/V blocks of B_N tokens per split, every one of the s splits writes its
#: partial output and LSE (an empty split zeros and −∞), the combine reads all s and writes O and the LSE; row
#: blocks of kBlockM = 64 packed rows.
SPLIT_RULES = ("tokens", "fa2")
#: FlashAttention-2's split-KV row block (kBlockM) and FlashMLA's BLOCK_SIZE_M
KERNEL_ROW_BLOCK = 64
#: Flash-Decoding's largest split count (the split heuristic never exceeds it).
MAX_SPLITS = 128


@dataclass(frozen=True)
class Decode:
    """How a decode call is run: ``splits`` KV splits per unit (``None``: the heuristic for ``gpu``), ``page``
    tokens per KV page (``None``: a contiguous cache, no block table), ``kv_dtype`` (``None``: the workload's
    dtype; ``"fp8"`` adds fp32 scales), ``shared_kv`` (V is the first d_v channels of K's row: MLA absorbed),
    ``gpu`` (a preset, for the split heuristic), ``scales`` the fp8 scale layout (:data:`SCALE_LAYOUTS`)."""

    splits: int | None = None
    page: int | None = None
    kv_dtype: str | None = None
    shared_kv: bool = False
    gpu: str | None = None
    scales: str = "group128"
    split_rule: str = "tokens"
    row_block: int | None = None  # packed rows per row block (None: as many as fit; the fa2 rule: 64)

    def __post_init__(self) -> None:
        for name in ("splits", "page"):  # stored as int (check_int accepts 3.0 as 3)
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_int(name, getattr(self, name), min=1))
        if self.kv_dtype is not None:
            check_choice("kv_dtype", self.kv_dtype, list(DTYPES))
        if self.gpu is not None:
            check_choice("gpu", self.gpu, list(GPUS))
        check_choice("scales", self.scales, list(SCALE_LAYOUTS))
        check_choice("split_rule", self.split_rule, list(SPLIT_RULES))
        if self.row_block is not None:
            object.__setattr__(self, "row_block", check_int("row_block", self.row_block, min=1))
        if self.split_rule == "fa2" and self.page is not None:
            raise InvalidParameter("page", self.page, "none with split_rule='fa2' (modelled for a contiguous cache only)")
        if self.scales == "flashmla" and not self.shared_kv:
            raise InvalidParameter("scales", self.scales, "flashmla only with MLA's shared K/V row (shared_kv=True)")
        if not isinstance(self.shared_kv, bool):
            raise InvalidParameter("shared_kv", self.shared_kv, "True or False (V is the first d_v channels of K's row)")
        if self.splits is None and self.gpu is None:
            raise InvalidParameter("splits", None, "a split count >= 1, or a gpu preset for the split heuristic")


@dataclass(frozen=True)
class DecodeCount:
    """Per tensor: (reads, writes) in words of that tensor's type; ``bpw`` its bytes per word."""

    splits: int
    chunk: int  # KV tokens per split (the last split may hold fewer)
    T_q: int  # row blocks per unit (1 when the g·s_q packed rows fit beside one step)
    words: dict[str, tuple[int, int]]
    bpw: dict[str, int] = field(repr=False)

    @property
    def io(self) -> IOCount:
        return IOCount(sum(r for r, _ in self.words.values()), sum(w for _, w in self.words.values()))

    @property
    def reads_bytes(self) -> int:
        return sum(r * self.bpw[t] for t, (r, _) in self.words.items())

    @property
    def writes_bytes(self) -> int:
        return sum(w * self.bpw[t] for t, (_, w) in self.words.items())

    @property
    def bytes_total(self) -> int:
        return self.reads_bytes + self.writes_bytes


def split_heuristic(w: Workload, gpu: str, page: int | None = None) -> int:
    """Enough splits that (sequences × K/V heads) × splits ≈ the preset's SM count (a simplification of
    flash-attention's wave-efficiency rule, docs/serving.md), s = min(⌈SMs / (b·H_kv)⌉, KV chunks, 128), KV
    chunks = pages (paged) or tokens; 1 when the units alone fill the GPU.

    >>> split_heuristic(Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=32768, d=128, M=10**6), "h200")
    17
    """
    units = w.batch * w.kv_heads
    sms = GPUS[gpu].sm_count
    chunks = w.Nkv if page is None else -(-w.Nkv // page)
    return max(1, min(-(-sms // units), chunks, MAX_SPLITS))


def fa2_block_n(d: int) -> int:
    """kBlockN of FlashAttention-2's split-KV kernel: 256 for d ≤ 64, 128 for d ≤ 128, else 64
    (csrc/flash_attn/src/flash_fwd_launch_template.h, ``run_mha_fwd_splitkv_dispatch``)."""
    return 256 if d <= 64 else 128 if d <= 128 else 64


def chunking(w: Workload, splits: int, page: int | None, rule: str = "tokens") -> tuple[int, int]:
    """(effective splits, KV tokens per split): page-aligned chunks of ⌈pages/s⌉ pages when paged, else
    ⌈N_kv/s⌉ tokens; a split count above the chunks available gives fewer, never empty, splits. ``rule="fa2"``:
    ⌈⌈N_kv/B_N⌉/s⌉ blocks of B_N = :func:`fa2_block_n` tokens per split; the splits past the last non-empty one
    are empty (not counted here: :func:`written_splits`)."""
    if rule == "fa2":
        bn = fa2_block_n(w.d)
        blocks_n = -(-w.Nkv // bn)
        chunk = -(-blocks_n // splits) * bn
    elif page is None:
        chunk = -(-w.Nkv // splits)
    else:
        pages = -(-w.Nkv // page)
        chunk = -(-pages // splits) * page
    return -(-w.Nkv // chunk), chunk


def fast_words(rows: int, B_c: int, w: Workload, dec: Decode) -> int:
    """Fast-memory words of one decode step: Q, O_σ and three statistics per row, the R×B_c scores, one K/V
    buffer of B_c rows (MLA's shared row: K_j kept as V_j), its fp8 scales, one block-table entry."""
    width = w.d if dec.shared_kv else max(w.d, w.dv)
    fp8 = (dec.kv_dtype or w.dtype) == "fp8"
    per_row = {"group128": math.ceil(width / SCALE_GROUP), "flashmla": math.ceil(w.dv / SCALE_GROUP)}
    scales = (B_c * per_row[dec.scales] if dec.scales in per_row else 2) if fp8 else 0  # head, tensor: K's and V's
    return rows * (w.d + w.dv + 3) + rows * B_c + B_c * width + scales + (dec.page is not None)


def _largest(hi: int, fits: object) -> int:
    """The largest b in [1, hi] with fits(b), for a monotone ``fits`` that holds at 1."""
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)  # type: ignore[operator]
    return lo


def blocks(w: Workload, dec: Decode) -> tuple[int, int, int, int, int]:
    """The block rule: (s, chunk, B_c, R, B_q). B_q = all R = g·s_q packed rows when they fit beside one step
    and, with s > 1, in the combine (s LSEs, the total, O and one O_σ per row) (K/V read once per split), else the fewest row blocks T_q = ⌈R/B_q⌉ (each streams the split's K/V), rows
    shared evenly; B_c = the page (paged; N_kv when the page is longer: no step holds more tokens than the cache)
    or as many tokens as fit (the count does not depend on it)."""
    s, chunk = chunking(w, dec.splits, dec.page, dec.split_rule)  # type: ignore[arg-type]
    R, step = w.groups * w.Nq, min(dec.page, w.Nkv) if dec.page else 1
    sw = written_splits(dec, s)

    def fits(b: int) -> bool:  # a split's step, and the combine's s LSEs, LSE, O and one O_σ of b rows
        return fast_words(b, step, w, dec) <= w.M and (sw == 1 or b * (sw + 1 + 2 * w.dv) <= w.M)

    if not fits(1):
        lo = max(fast_words(1, step, w, dec), 0 if sw == 1 else sw + 1 + 2 * w.dv)
        raise InvalidParameter("M", w.M, f"M >= {lo} for decode with {sw} split(s) (one row's Q, O and statistics "
                               f"beside one step of {step} tokens, and the combine's {sw} LSEs)")
    rb = dec.row_block or (KERNEL_ROW_BLOCK if dec.split_rule == "fa2" else None)
    if rb is not None:  # the kernel's row block: ⌈R/rb⌉ blocks of rb rows, the last one partial
        B_q = min(rb, R)
        if not fits(B_q):
            raise InvalidParameter("row_block", rb, f"a row block whose step fits M={w.M} words beside one token")
    else:
        B_q = _largest(R, fits)
        B_q = -(-R // -(-R // B_q))
    B_c = step if dec.page else _largest(min(chunk, w.Nkv), lambda b: fast_words(B_q, b, w, dec) <= w.M)
    return s, chunk, B_c, R, B_q


def written_splits(dec: Decode, s: int) -> int:
    """The splits that write partials and that the combine reads: the effective ``s`` (attnio's rule, no empty
    split), or every requested split (``fa2``: an empty split writes zeros and −∞)."""
    return dec.splits if dec.split_rule == "fa2" else s  # type: ignore[return-value]


def dtypes(w: Workload, dec: Decode) -> dict[str, str]:
    """Each tensor's element type: Q and O the workload's, K and V ``kv_dtype``, partials fp32, table int32."""
    kv = dec.kv_dtype or w.dtype
    return {"Q": w.dtype, "K": kv, "K_rope": w.dtype, "V": kv, "K_scale": SCALE_DTYPE, "V_scale": SCALE_DTYPE, "BT": TABLE_DTYPE,
            "O_part": PARTIAL_DTYPE, "LSE_part": PARTIAL_DTYPE, "O": w.dtype, "LSE": PARTIAL_DTYPE}


def _check_shared(w: Workload, dec: Decode) -> None:
    """A Workload and a Decode (InvalidParameter otherwise), and V a slice of K's row only when d_v <= d."""
    if not isinstance(w, Workload):
        raise InvalidParameter("workload", w, "an attnio.core.workload.Workload (Workload.build(...))")
    if not isinstance(dec, Decode):
        raise InvalidParameter("decode", dec, "an attnio.bounds.serving.Decode (Decode(splits=..., page=...))")
    if dec.shared_kv and w.dv > w.d:
        raise InvalidParameter("dv", w.dv, f"dv <= d={w.d} when V is a slice of K's row (shared_kv)")
    if dec.scales != "group128" and (dec.kv_dtype or w.dtype) != "fp8":
        raise InvalidParameter("scales", dec.scales, "group128 (the default) unless K/V are fp8: only fp8 K/V have scales")


def resolve(w: Workload, dec: Decode) -> Decode:
    """``dec`` with its split count decided (the heuristic when not given)."""
    _check_shared(w, dec)
    if dec.splits is not None:
        return dec
    return replace(dec, splits=split_heuristic(w, dec.gpu, dec.page))  # type: ignore[arg-type]


# -- the count as expressions ----------------------------------------------------------------------------------
# The per-unit count of the module docstring, one expression per tensor, in the schedule's block parameters; the
# choices of a call enter as 0/1 symbols. decode_count evaluates these; attnio.solver.claims.serving proves from
# them that bytes do not depend on the page size apart from the block table.


def _flag(name: str, doc: str) -> Sym:
    """A choice of a call as a symbol: 1 or 0 (its domain is ≥ 0; the claims that use it add ≤ 1)."""
    return sym(name, lo=0, doc=doc)


SPLITS = sym("dec_s", doc="effective KV splits per unit (decode)")
ROW_BLOCKS = sym("dec_Tq", doc="row blocks per unit, each streaming the split's K/V (decode)")
ROWS = sym("dec_R", doc="packed query rows per unit, g·s_q (decode)")
PAGE = sym("dec_page", doc="tokens per KV page (decode; 1 stands in for a contiguous cache, whose table is absent)")
UNITS = sym("dec_units", doc="units of a decode call: sequences × K/V heads")
FP8 = _flag("dec_fp8", "1 when K/V are fp8 (with fp32 scales), else 0")
OWN_V = _flag("dec_own_v", "1 when V is a tensor of its own, 0 when it is a slice of K's row (MLA absorbed)")
SPLIT = _flag("dec_split", "1 when s > 1 (the partials and the combine), else 0")
PAGED = _flag("dec_paged", "1 with a paged cache (a block table), else 0")
Q_BYTES = sym("dec_bytes_q", doc="bytes per word of Q and O")
KV_BYTES = sym("dec_bytes_kv", doc="bytes per word of K and V")
ROPE = sym("dec_rope", lo=0, doc="channels of each K row stored in the query's type beside fp8 ones (FlashMLA's RoPE part: d − d_v), else 0")
WRITTEN = sym("dec_s_written", doc="splits that write partials and that the combine reads (decode; fa2 rule: every requested split)")
LSE_OUT = _flag("dec_lse_out", "1 when the call writes each row's final log-sum-exp (FlashAttention-2's softmax_lse), else 0")
PROG_SCALE = _flag("dec_prog_scale", "1 when fp8 K/V have one scale per tensor or per K/V head, read once per program (split × row block), else 0")
_n, _zero = Nkv, const(0)
#: per unit, per tensor: (reads, writes) in words of the tensor's type
DECODE_WORDS: dict[str, tuple[Expr, Expr]] = {  # K/V, their scales and the table: once per row block of each split
    "Q": (SPLITS * ROWS * d, _zero),
    "K": (ROW_BLOCKS * _n * (d - ROPE), _zero),
    "K_rope": (ROW_BLOCKS * _n * ROPE, _zero),
    "V": (OWN_V * ROW_BLOCKS * _n * dv, _zero),
    "K_scale": (FP8 * ROW_BLOCKS * _n * ceil((d - ROPE) / SCALE_GROUP) + PROG_SCALE * SPLITS * ROW_BLOCKS, _zero),
    "V_scale": (FP8 * OWN_V * ROW_BLOCKS * _n * ceil(dv / SCALE_GROUP) + PROG_SCALE * OWN_V * SPLITS * ROW_BLOCKS, _zero),
    "BT": (PAGED * ROW_BLOCKS * ceil(_n / PAGE), _zero),  # ⌈N_kv/P⌉ pages, the last one partial
    "O_part": (SPLIT * WRITTEN * ROWS * dv, SPLIT * WRITTEN * ROWS * dv),
    "LSE_part": (SPLIT * WRITTEN * ROWS, SPLIT * WRITTEN * ROWS),
    "O": (_zero, ROWS * dv),
    "LSE": (_zero, LSE_OUT * ROWS),
}
#: bytes per word of each tensor: Q and O the workload's type, K and V the cache's, the rest fp32 or int32
DECODE_BPW: dict[str, Expr] = {
    "Q": Q_BYTES, "O": Q_BYTES, "K": KV_BYTES, "K_rope": Q_BYTES, "V": KV_BYTES, "K_scale": const(TYPE_BYTES[SCALE_DTYPE]),
    "V_scale": const(TYPE_BYTES[SCALE_DTYPE]), "BT": const(TYPE_BYTES[TABLE_DTYPE]),
    "O_part": const(TYPE_BYTES[PARTIAL_DTYPE]), "LSE_part": const(TYPE_BYTES[PARTIAL_DTYPE]),
    "LSE": const(TYPE_BYTES[PARTIAL_DTYPE]),
}


def tensor_bytes(t: str) -> Expr:
    """Bytes of tensor ``t`` over the call: units × (reads + writes) × bytes per word."""
    r, wr = DECODE_WORDS[t]
    return UNITS * (r + wr) * DECODE_BPW[t]


#: bytes of the whole call
DECODE_BYTES: Expr = add(*(tensor_bytes(t) for t in DECODE_WORDS))


def decode_env(w: Workload, dec: Decode) -> dict[str, int]:
    """The values of :data:`DECODE_WORDS`' symbols for a call (``dec`` resolved)."""
    s, _, _, R, B_q = blocks(w, dec)
    types = dtypes(w, dec)
    sw = written_splits(dec, s)
    return {"dec_s": s, "dec_s_written": sw, "dec_lse_out": int(dec.split_rule == "fa2"), "dec_Tq": -(-R // B_q), "dec_R": R, "dec_page": dec.page or 1, "Nkv": w.Nkv, "d": w.d,
            "dv": w.dv, "dec_units": w.batch * w.kv_heads,
            "dec_fp8": int(types["K"] == "fp8" and dec.scales in ("group128", "flashmla")),
            "dec_prog_scale": int(types["K"] == "fp8" and dec.scales in ("head", "tensor")),
            "dec_rope": w.d - w.dv if dec.scales == "flashmla" else 0,
            "dec_own_v": int(not dec.shared_kv), "dec_split": int(sw > 1), "dec_paged": int(dec.page is not None),
            "dec_bytes_q": TYPE_BYTES[types["Q"]], "dec_bytes_kv": TYPE_BYTES[types["K"]]}


def decode_count(w: Workload, dec: Decode) -> DecodeCount:
    """The exact per-tensor count of the decode schedule (module docstring, :data:`DECODE_WORDS`), summed over
    b·H_kv units."""
    dec = resolve(w, dec)
    s, chunk, *_ = blocks(w, dec)
    env = decode_env(w, dec)
    units = env["dec_units"]
    per_unit = {t: (evaluate_int(r, env), evaluate_int(wr, env)) for t, (r, wr) in DECODE_WORDS.items()}
    types = dtypes(w, dec)
    words = {t: (units * r, units * wr) for t, (r, wr) in per_unit.items() if r or wr}
    return DecodeCount(s, chunk, env["dec_Tq"], words, {t: TYPE_BYTES[types[t]] for t in words})


def compulsory_bytes(w: Workload, dec: Decode) -> int:
    """Q + K + V + O, each moved once in its own type: the figure published decode bandwidths divide by
    (V not counted apart when it is a slice of K's row)."""
    _check_shared(w, dec)
    types = dtypes(w, dec)
    q = w.batch * w.heads * w.Nq
    kv = w.batch * w.kv_heads * w.Nkv
    v = 0 if dec.shared_kv else kv * w.dv * TYPE_BYTES[types["V"]]
    rope = w.d - w.dv if dec.scales == "flashmla" else 0  # FlashMLA's RoPE channels, in the query's type
    k = kv * ((w.d - rope) * TYPE_BYTES[types["K"]] + rope * TYPE_BYTES[types["K_rope"]])
    return q * w.d * TYPE_BYTES[types["Q"]] + k + v + q * w.dv * TYPE_BYTES[types["O"]]


def lower_bound_bytes(w: Workload, dec: Decode) -> int:
    """The decode lower bound (derived here, docs/serving.md): every K/V word (and fp8 scale) some output
    depends on is read once and every output word written once; a Q row is read only when its token sees ≥ 2
    keys (with one key, O = V₀ whatever Q is): all N_kv ≥ 2 keys without a mask, t + N_kv − s_q + 1 keys for
    token t under the bottom-right causal mask (token 0 sees one key when s_q = N_kv). Every word of K and V
    is needed: the last query token sees every key."""
    _check_shared(w, dec)
    types = dtypes(w, dec)
    one_key = min(w.Nq, max(0, w.Nq - w.Nkv + 1)) if w.causal else (w.Nq if w.Nkv < 2 else 0)
    q_read = w.batch * w.heads * (w.Nq - one_key) * w.d * TYPE_BYTES[types["Q"]]
    fp8 = (dec.kv_dtype or w.dtype) == "fp8"
    grouped = fp8 and dec.scales in ("group128", "flashmla")
    rope = w.d - w.dv if dec.scales == "flashmla" else 0

    def row(width: int) -> int:  # bytes of one K/V row of ``width`` channels, with its per-row fp8 scales
        q8 = width - (rope if width == w.d else 0)  # FlashMLA: the RoPE channels in the query's type, unscaled
        return (q8 * TYPE_BYTES[types["K"]] + (width - q8) * TYPE_BYTES[types["K_rope"]]
                + (math.ceil(q8 / SCALE_GROUP) * TYPE_BYTES[SCALE_DTYPE] if grouped else 0))

    if w.Nkv >= 2:  # every K row, and every V row (a slice of K's row when shared_kv)
        per_token, tensors = row(w.d) + (0 if dec.shared_kv else row(w.dv)), 1 + (not dec.shared_kv)
    else:  # only V₀ (with its scales; when shared_kv, the first d_v channels of K₀'s row); K is not needed
        per_token, tensors = row(w.dv), 1
    kv = w.batch * w.kv_heads * w.Nkv * per_token
    # a scale per K/V head (per call) for each needed tensor: every output depends on it
    whole = {"head": w.batch * w.kv_heads, "tensor": 1}.get(dec.scales, 0) * tensors * TYPE_BYTES[SCALE_DTYPE] if fp8 else 0
    lse = w.batch * w.heads * w.Nq * TYPE_BYTES[types["LSE"]] if dec.split_rule == "fa2" else 0  # an output too
    return q_read + kv + whole + w.batch * w.heads * w.Nq * w.dv * TYPE_BYTES[types["O"]] + lse


def flops(w: Workload) -> int:
    """Multiply-add FLOPs of QKᵀ and PV (2 per multiply-add): 2·b·H·s_q·N_kv·(d + d_v)."""
    return 2 * w.batch * w.heads * w.Nq * w.Nkv * (w.d + w.dv)


# -- MLA ------------------------------------------------------------------------------------------------------
#: DeepSeek-V3's multi-head latent attention widths (arXiv 2412.19437 §2.1): latent d_c = 512, RoPE part 64,
#: per-head no-RoPE part 128 and value width 128.
MLA_LATENT, MLA_ROPE, MLA_NOPE, MLA_V = 512, 64, 128, 128


def mla(form: str, *, batch: int, heads: int, Nq: int, Nkv: int, dtype: str = "bf16", M: int = 1 << 20,
        kv_dtype: str | None = None, scales: str = "group128") -> tuple[Workload, Decode]:
    """MLA decode as a workload. ``absorbed``: one latent K/V head per sequence, rows [c | k_rope] of
    d_c + 64 = 576 channels, V = c, the first 512 (``shared_kv``), read once for all h_q query heads (the
    up-projections absorbed into Q and O). ``naive``: per-head K (128 + 64) and V (128) reconstructed and
    cached, h_q K/V heads (the reconstruction's own traffic is not counted). ``scales``: the fp8 layout
    (:data:`SCALE_LAYOUTS`; ``flashmla``: FlashMLA's 656-byte row, absorbed only).

    >>> w, dec = mla("absorbed", batch=1, heads=128, Nq=1, Nkv=1024)
    >>> (w.kv_heads, w.d, w.dv, dec.shared_kv, decode_count(w, dec).words["K"])
    (1, 576, 512, True, (589824, 0))
    """
    check_choice("form", form, ["absorbed", "naive"])
    if form == "absorbed":
        w = Workload.build(batch=batch, heads=heads, kv_heads=1, Nq=Nq, Nkv=Nkv, d=MLA_LATENT + MLA_ROPE,
                           dv=MLA_LATENT, dtype=dtype, M=M)
        return w, Decode(splits=1, kv_dtype=kv_dtype, shared_kv=True, scales=scales)
    w = Workload.build(batch=batch, heads=heads, kv_heads=heads, Nq=Nq, Nkv=Nkv, d=MLA_NOPE + MLA_ROPE, dv=MLA_V,
                       dtype=dtype, M=M)
    return w, Decode(splits=1, kv_dtype=kv_dtype, scales=scales)


# -- roofline -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Roofline:
    """A decode call on a GPU preset: bytes (exact schedule and compulsory), FLOPs, arithmetic intensity, the
    preset's ridge point, the bound kind, and (given a measured time) achieved bandwidth and its fraction."""

    gpu: str
    schedule_bytes: int
    compulsory_bytes: int
    flops: int
    intensity: float  # FLOPs per schedule byte
    ridge: float  # peak FLOP/s ÷ peak bytes/s
    bound: str  # "memory" or "compute"
    time_s: float | None = None
    achieved_bytes_per_s: float | None = None  # compulsory bytes ÷ time (what published figures report)
    achieved_schedule_bytes_per_s: float | None = None
    fraction_of_peak: float | None = None

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def roofline(w: Workload, dec: Decode, gpu: str, time_s: float | None = None) -> Roofline:
    """The roofline of a decode call on ``gpu``: memory-bound when FLOPs per byte < the ridge point
    (peak FLOP/s of the MMA operands ÷ peak DRAM bandwidth: the fp8 tensor rate only when Q and K/V are both
    fp8, since a bf16 query against an fp8 cache is multiplied in bf16)."""
    check_choice("gpu", gpu, list(GPUS))
    if time_s is not None and not (time_s > 0 and math.isfinite(time_s)):
        raise InvalidParameter("time", time_s, "a finite measured time > 0 seconds")
    p = GPUS[gpu]
    c = decode_count(w, dec)
    comp = compulsory_bytes(w, dec)
    f = flops(w)
    both_fp8 = w.dtype == "fp8" and (dec.kv_dtype or w.dtype) == "fp8"
    ridge = p.peak_flops("fp8" if both_fp8 else w.dtype) / p.hbm_bytes_per_s
    inten = f / c.bytes_total
    r = Roofline(gpu, c.bytes_total, comp, f, inten, ridge, "memory" if inten < ridge else "compute")
    if time_s is None:
        return r
    bw = comp / time_s
    return Roofline(**{**r.__dict__, "time_s": time_s, "achieved_bytes_per_s": bw,
                       "achieved_schedule_bytes_per_s": c.bytes_total / time_s,
                       "fraction_of_peak": bw / p.hbm_bytes_per_s})


def mla_ridge_rows(Nkv: int = 32768) -> list[dict[str, object]]:
    """Per preset: the ridge point of absorbed MLA decode in h_q·s_q, (peak FLOP/s ÷ bandwidth)·d_k/(d_k + d_v)
    with d_k = 576, d_v = 512 (K/V bytes only), and the least h_q (s_q = 1, batch 1, N_kv = ``Nkv``) at which the
    exact schedule bytes make the call compute-bound."""
    rows = []
    dk, dv = MLA_LATENT + MLA_ROPE, MLA_LATENT
    for name, p in GPUS.items():
        ridge = p.bf16_flops / p.hbm_bytes_per_s
        lo, hi = 1, 1 << 16
        while lo < hi:  # intensity grows with h_q: the least compute-bound h_q
            mid = (lo + hi) // 2
            w, dec = mla("absorbed", batch=1, heads=mid, Nq=1, Nkv=Nkv)
            lo, hi = (mid + 1, hi) if roofline(w, dec, name).bound == "memory" else (lo, mid)
        rows.append({"gpu": name, "ridge_flops_per_byte": ridge, "ridge_hq_sq": ridge * dk / (dk + dv), "least_hq_compute_bound": lo})
    return rows
