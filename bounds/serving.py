"""Decoding against a KV cache: split-KV (Flash-Decoding), paged KV, GQA packing, MLA and per-tensor dtypes.

Exact counts of the decode schedule of ``attnio.algorithms.decode`` (derived here, docs/serving.md), the
compulsory traffic and the decode lower bound. Everything is per tensor, in words of that tensor's own type,
so bytes are exact when Q/O, K/V, the fp32 partials and the int32 block table have different widths.

A decode call is a :class:`attnio.workload.Workload` (batch b, query heads H, K/V heads H_kv, N_q = s_q new
tokens, N_kv cached tokens, widths d, d_v, fast memory M) plus a :class:`Decode`: KV splits, page size, the
K/V element type and whether V is a slice of K's row (MLA's absorbed form).

One *unit* is one (sequence, K/V head): its g = H/H_kv query heads × s_q tokens, R = g·s_q rows, are packed
into one Q block, so each K/V word is read once per split, not once per query head (GQA packing). With s
splits (page-aligned when paged), per unit:

- reads: Q s·R·d; K n·d; V n·d_v (none when V is a slice of K's row); the block table ⌈n/P⌉ int32 entries
  (paged); fp8 scales n·(⌈d/128⌉ + ⌈d_v/128⌉) fp32 (one per 128 channels of a row); with s > 1 the combine
  reads back s·R·d_v partial outputs and s·R log-sum-exps (fp32);
- writes: O R·d_v; with s > 1 also the s·R·d_v partial outputs and s·R log-sum-exps (fp32).

>>> from attnio.workload import Workload
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
from dataclasses import dataclass, field

from attnio.counts import IOCount
from attnio.errors import InvalidParameter
from attnio.validate import check_choice, check_int
from attnio.workload import DTYPES, GPUS, Workload

#: bytes of the types that only serving tensors use: fp32 partials and statistics, int32 block-table entries.
PARTIAL_DTYPE, TABLE_DTYPE, SCALE_DTYPE = "fp32", "int32", "fp32"
TYPE_BYTES: dict[str, int] = {**DTYPES, "int32": 4}
#: channels per fp8 scale (one fp32 scale per 128 channels of a K or V row, the layout of docs/serving.md).
SCALE_GROUP = 128
#: Flash-Decoding's largest split count (the split heuristic never exceeds it).
MAX_SPLITS = 128


@dataclass(frozen=True)
class Decode:
    """How a decode call is run: ``splits`` KV splits per unit (``None``: the heuristic for ``gpu``), ``page``
    tokens per KV page (``None``: a contiguous cache, no block table), ``kv_dtype`` (``None``: the workload's
    dtype; ``"fp8"`` adds fp32 scales), ``shared_kv`` (V is the first d_v channels of K's row: MLA absorbed),
    ``gpu`` (a preset, for the split heuristic)."""

    splits: int | None = None
    page: int | None = None
    kv_dtype: str | None = None
    shared_kv: bool = False
    gpu: str | None = None

    def __post_init__(self) -> None:
        if self.splits is not None:
            check_int("splits", self.splits, min=1)
        if self.page is not None:
            check_int("page", self.page, min=1)
        if self.kv_dtype is not None:
            check_choice("kv_dtype", self.kv_dtype, list(DTYPES))
        if self.gpu is not None:
            check_choice("gpu", self.gpu, list(GPUS))
        if self.splits is None and self.gpu is None:
            raise InvalidParameter("splits", None, "a split count >= 1, or a gpu preset for the split heuristic")


@dataclass(frozen=True)
class DecodeCount:
    """Per tensor: (reads, writes) in words of that tensor's type; ``bpw`` its bytes per word."""

    splits: int
    chunk: int  # KV tokens per split (the last split may hold fewer)
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
    """Flash-Decoding's rule: enough splits that (sequences × K/V heads) × splits ≈ the preset's SM count,
    s = min(⌈SMs / (b·H_kv)⌉, KV chunks, 128), KV chunks = pages (paged) or tokens; 1 when the units alone
    fill the GPU.

    >>> split_heuristic(Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=32768, d=128, M=10**6), "h200")
    17
    """
    units = w.batch * w.kv_heads
    sms = GPUS[gpu].sm_count
    chunks = w.Nkv if page is None else -(-w.Nkv // page)
    return max(1, min(-(-sms // units), chunks, MAX_SPLITS))


def chunking(w: Workload, splits: int, page: int | None) -> tuple[int, int]:
    """(effective splits, KV tokens per split): page-aligned chunks of ⌈pages/s⌉ pages when paged, else
    ⌈N_kv/s⌉ tokens; a split count above the chunks available gives fewer, never empty, splits."""
    if page is None:
        chunk = -(-w.Nkv // splits)
    else:
        pages = -(-w.Nkv // page)
        chunk = -(-pages // splits) * page
    return -(-w.Nkv // chunk), chunk


def dtypes(w: Workload, dec: Decode) -> dict[str, str]:
    """Each tensor's element type: Q and O the workload's, K and V ``kv_dtype``, partials fp32, table int32."""
    kv = dec.kv_dtype or w.dtype
    return {"Q": w.dtype, "K": kv, "V": kv, "K_scale": SCALE_DTYPE, "V_scale": SCALE_DTYPE, "BT": TABLE_DTYPE,
            "O_part": PARTIAL_DTYPE, "LSE_part": PARTIAL_DTYPE, "O": w.dtype}


def resolve(w: Workload, dec: Decode) -> Decode:
    """``dec`` with its split count decided (the heuristic when not given)."""
    if dec.shared_kv and w.dv > w.d:
        raise InvalidParameter("dv", w.dv, f"dv <= d={w.d} when V is a slice of K's row (shared_kv)")
    if dec.splits is not None:
        return dec
    return Decode(split_heuristic(w, dec.gpu, dec.page), dec.page, dec.kv_dtype, dec.shared_kv, dec.gpu)  # type: ignore[arg-type]


def decode_count(w: Workload, dec: Decode) -> DecodeCount:
    """The exact per-tensor count of the decode schedule (module docstring), summed over b·H_kv units."""
    dec = resolve(w, dec)
    s, chunk = chunking(w, dec.splits, dec.page)  # type: ignore[arg-type]
    R, n, d, dv = w.groups * w.Nq, w.Nkv, w.d, w.dv
    fp8 = (dec.kv_dtype or w.dtype) == "fp8"
    per_unit = {
        "Q": (s * R * d, 0),
        "K": (n * d, 0),
        "V": (0 if dec.shared_kv else n * dv, 0),
        "K_scale": (n * math.ceil(d / SCALE_GROUP) if fp8 else 0, 0),
        "V_scale": (n * math.ceil(dv / SCALE_GROUP) if fp8 and not dec.shared_kv else 0, 0),
        "BT": (0 if dec.page is None else -(-n // dec.page), 0),
        "O_part": (s * R * dv, s * R * dv) if s > 1 else (0, 0),
        "LSE_part": (s * R, s * R) if s > 1 else (0, 0),
        "O": (0, R * dv),
    }
    units = w.batch * w.kv_heads
    types = dtypes(w, dec)
    words = {t: (units * r, units * wr) for t, (r, wr) in per_unit.items() if r or wr}
    return DecodeCount(s, chunk, words, {t: TYPE_BYTES[types[t]] for t in words})


def compulsory_bytes(w: Workload, dec: Decode) -> int:
    """Q + K + V + O, each moved once in its own type: the figure published decode bandwidths divide by
    (V not counted apart when it is a slice of K's row)."""
    types = dtypes(w, dec)
    q = w.batch * w.heads * w.Nq
    kv = w.batch * w.kv_heads * w.Nkv
    v = 0 if dec.shared_kv else kv * w.dv * TYPE_BYTES[types["V"]]
    return q * w.d * TYPE_BYTES[types["Q"]] + kv * w.d * TYPE_BYTES[types["K"]] + v + q * w.dv * TYPE_BYTES[types["O"]]


def lower_bound_bytes(w: Workload, dec: Decode) -> int:
    """The decode lower bound (derived here, docs/serving.md): every K/V word (and fp8 scale) some output
    depends on is read once and every output word written once; Q is read only when N_kv ≥ 2 (with one
    key, O = V₀ whatever Q is). Every word of K and V is needed: the last query token sees every key."""
    types = dtypes(w, dec)
    q_read = w.batch * w.heads * w.Nq * w.d * TYPE_BYTES[types["Q"]] if w.Nkv >= 2 else 0
    c = decode_count(w, Decode(1, None, dec.kv_dtype, dec.shared_kv))  # one split, no table: K, V, scales once
    kv = sum(c.words[t][0] * c.bpw[t] for t in ("K", "V", "K_scale", "V_scale") if t in c.words)
    if w.Nkv < 2:  # only V₀ is needed (and its scales); K is not
        kv -= c.words["K"][0] * c.bpw["K"] + (c.words["K_scale"][0] * c.bpw["K_scale"] if "K_scale" in c.words else 0)
        if dec.shared_kv:  # V₀ is the first d_v channels of K₀'s row
            kv += w.batch * w.kv_heads * w.dv * TYPE_BYTES[types["K"]]
    return q_read + kv + w.batch * w.heads * w.Nq * w.dv * TYPE_BYTES[types["O"]]


def flops(w: Workload) -> int:
    """Multiply-add FLOPs of QKᵀ and PV (2 per multiply-add): 2·b·H·s_q·N_kv·(d + d_v)."""
    return 2 * w.batch * w.heads * w.Nq * w.Nkv * (w.d + w.dv)
