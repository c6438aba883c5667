"""A real attention workload: batch, heads, grouped K/V heads, sequence lengths, causal mask, element type and
fast memory (docs/workloads.md).

A :class:`Workload` is plain data. Counts stay in words (one word = one element of the element type); bytes are
words × :attr:`Workload.bytes_per_word`. Fast memory M is given exactly one way: in words (``M``), in bytes
(``smem_bytes``, e.g. ``parse_bytes("192KiB")``) or as a GPU preset (``gpu``: the per-SM shared memory of
:data:`GPUS`); the words are ⌊bytes / bytes_per_word⌋.

>>> w = Workload.build(batch=64, heads=16, N=1024, d=64, dtype="fp16", gpu="a100")
>>> (w.M, w.groups, w.query_heads_total, w.kv_heads_total)
(98304, 1, 1024, 1024)
>>> w.io_bytes(1000)
2000
>>> Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=32768, d=128, causal=True, M=100000).groups
4
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int

#: bytes per word of each element type (IEEE fp32/fp16, bfloat16, the OCP 8-bit float formats E4M3/E5M2).
DTYPES: dict[str, int] = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


@dataclass(frozen=True)
class GPU:
    """A GPU preset: the on-chip shared memory (SRAM) of one streaming multiprocessor, in bytes, its source, and
    what a roofline needs (vendor figures, dense, no sparsity; sources in docs/serving.md): peak DRAM
    bandwidth, dense bf16 and fp8 tensor FLOP/s (``None``: no fp8 tensor cores), SM count and L2 size."""

    name: str
    smem_bytes: int
    source: str
    max_per_block_bytes: int  # what one thread block may allocate (for reference; M uses smem_bytes)
    hbm_bytes_per_s: float = 0.0
    bf16_flops: float = 0.0
    fp8_flops: float | None = None
    sm_count: int = 0
    l2_bytes: int = 0

    def peak_flops(self, dtype: str) -> float:
        """Dense tensor-core FLOP/s for ``dtype`` operands (fp8 where the GPU has fp8 tensor cores, else bf16;
        fp16 as bf16; fp32 operands are counted at the bf16 rate, an upper bound)."""
        return self.fp8_flops if dtype == "fp8" and self.fp8_flops else self.bf16_flops


KiB = 1024
#: Per-SM shared memory as the FlashAttention papers use it (sources in docs/workloads.md).
GPUS: dict[str, GPU] = {
    "a100": GPU(
        "a100",
        192 * KiB,
        "FlashAttention (Dao et al. 2022, arXiv 2205.14135) §2.1: '192KB of on-chip SRAM per each of 108 streaming "
        "multiprocessors'; NVIDIA A100 Tuning Guide: 192 KB combined L1/shared memory per SM",
        164 * KiB,
        hbm_bytes_per_s=2.039e12, bf16_flops=312e12, fp8_flops=None, sm_count=108, l2_bytes=40 * 2**20,
    ),
    "h100": GPU(
        "h100",
        228 * KiB,
        "FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608) §2.2: H100 SXM5 SMEM 228 KiB per SM; NVIDIA Hopper "
        "Tuning Guide: up to 228 KB of shared memory per SM",
        227 * KiB,
        hbm_bytes_per_s=3.35e12, bf16_flops=989.4e12, fp8_flops=1978.9e12, sm_count=132, l2_bytes=50 * 2**20,
    ),
    "h200": GPU(
        "h200",
        228 * KiB,
        "same GH100 streaming multiprocessor as the H100 (NVIDIA H200 datasheet; Hopper Tuning Guide: 228 KB of "
        "shared memory per SM); only HBM capacity and bandwidth differ",
        227 * KiB,
        hbm_bytes_per_s=4.8e12, bf16_flops=989.4e12, fp8_flops=1978.9e12, sm_count=132, l2_bytes=50 * 2**20,
    ),
    "b200": GPU(
        "b200",
        228 * KiB,
        "NVIDIA Blackwell Tuning Guide: up to 228 KB of shared memory per SM (as Hopper); 148 SMs enabled",
        227 * KiB,
        hbm_bytes_per_s=8.0e12, bf16_flops=2.25e15, fp8_flops=4.5e15, sm_count=148, l2_bytes=126 * 10**6,
    ),
    "a6000": GPU(
        "a6000",
        100 * KiB,
        "NVIDIA Ampere Tuning Guide (GA10x, compute capability 8.6): 128 KB combined L1/shared memory per SM, of "
        "which at most 100 KB shared memory",
        99 * KiB,
        hbm_bytes_per_s=768e9, bf16_flops=154.8e12, fp8_flops=None, sm_count=84, l2_bytes=6 * 2**20,
    ),
}

_UNITS = {"": 1, "b": 1, "kb": 1000, "kib": KiB, "mb": 1000**2, "mib": KiB**2}


def parse_bytes(text: str) -> int:
    """``"192KiB"`` → 196608, ``"192KB"`` → 192000, ``"4096"`` → 4096 (KiB/MiB binary, KB/MB decimal).

    >>> parse_bytes("192KiB"), parse_bytes("228 KiB"), parse_bytes("1000")
    (196608, 233472, 1000)
    >>> parse_bytes("lots")
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: smem='lots' is invalid: valid range is a byte count such as 192KiB, 164KB or 65536 (units B, KB, KiB, MB, MiB)
    """
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise InvalidParameter("smem", text, "a byte count such as 192KiB, 164KB or 65536 (units B, KB, KiB, MB, MiB)")
    n = int(m.group(1)) * _UNITS[m.group(2).lower()]
    if n < 1:
        raise InvalidParameter("smem", text, "at least 1 byte")
    return n


def _check_causal(causal: object) -> None:
    """True or False (NumPy's bool too); a string such as "False" would otherwise be read as truthy."""
    if isinstance(causal, str) or causal is None or causal not in (True, False) or type(causal) in (int, float):
        raise InvalidParameter("causal", causal, "True or False")


@dataclass(frozen=True)
class Workload:
    """One attention call: ``batch`` × ``heads`` query heads of ``Nq`` rows, ``kv_heads`` K/V heads of ``Nkv`` rows
    (``heads`` divisible by ``kv_heads``; ``kv_heads = 1`` is MQA, ``kv_heads = heads`` plain multi-head),
    widths ``d`` (Q, K) and ``dv`` (V, O), ``causal`` (bottom-right aligned: query row i sees key rows
    j ≤ i + Nkv − Nq, the FlashAttention-2 convention; needs Nq ≤ Nkv), element type ``dtype`` and fast memory
    ``M`` words. Build it with :meth:`build`, which validates and resolves M.
    """

    batch: int
    heads: int
    kv_heads: int
    Nq: int
    Nkv: int
    d: int
    dv: int
    causal: bool
    dtype: str
    M: int
    memory: str  # how M was given: "M", "smem 192KiB" or "gpu a100"

    def __post_init__(self) -> None:
        for name in ("batch", "heads", "kv_heads", "Nq", "Nkv", "d", "dv", "M"):  # stored as int (16.0 is 16)
            object.__setattr__(self, name, check_int(name, getattr(self, name), min=1))
        check_choice("dtype", self.dtype, list(DTYPES))
        _check_causal(self.causal)
        object.__setattr__(self, "causal", bool(self.causal))
        if self.heads % self.kv_heads:
            raise InvalidParameter("kv_heads", self.kv_heads, f"a divisor of heads={self.heads} (each K/V head serves heads/kv_heads query heads)")
        if self.causal and self.Nq > self.Nkv:
            raise InvalidParameter("Nq", self.Nq, f"Nq <= Nkv={self.Nkv} for a causal mask (bottom-right aligned: otherwise the first rows see no key)")

    @classmethod
    def build(
        cls,
        *,
        batch: int = 1,
        heads: int = 1,
        kv_heads: int | None = None,
        N: int | None = None,
        Nq: int | None = None,
        Nkv: int | None = None,
        d: int,
        dv: int | None = None,
        causal: bool = False,
        dtype: str = "fp32",
        M: int | None = None,
        smem: int | str | None = None,
        gpu: str | None = None,
    ) -> Workload:
        """Validate and resolve: ``N`` sets ``Nq`` and ``Nkv`` (each may override it); exactly one of ``M`` (words),
        ``smem`` (bytes, an int or text like ``"192KiB"``) and ``gpu`` (a key of :data:`GPUS`)."""
        if Nq is None:
            Nq = N
        if Nkv is None:
            Nkv = N
        if Nq is None or Nkv is None:
            raise InvalidParameter("N", None, "a sequence length: give N (both) or Nq and Nkv")
        check_choice("dtype", dtype, list(DTYPES))
        _check_causal(causal)
        given = [k for k, v in (("M", M), ("smem", smem), ("gpu", gpu)) if v is not None]
        if len(given) != 1:
            raise InvalidParameter("M", given or None, "exactly one of M (words), smem (bytes) or gpu (" + ", ".join(GPUS) + ")")
        bpw = DTYPES[dtype]
        if M is not None:
            words, memory = check_int("M", M, min=1), "M"
        elif smem is not None:
            b = parse_bytes(smem) if isinstance(smem, str) else check_int("smem", smem, min=1)
            words, memory = b // bpw, f"smem {smem}"
        else:
            check_choice("gpu", gpu, list(GPUS))
            words, memory = GPUS[gpu].smem_bytes // bpw, f"gpu {gpu}"  # type: ignore[index]
        if words < 1:
            raise InvalidParameter("smem", smem, f"at least one {dtype} word ({bpw} bytes)")
        return cls(
            batch=batch,
            heads=heads,
            kv_heads=heads if kv_heads is None else kv_heads,
            Nq=Nq,
            Nkv=Nkv,
            d=d,
            dv=d if dv is None else dv,
            causal=bool(causal),
            dtype=dtype,
            M=words,
            memory=memory,
        )

    @property
    def bytes_per_word(self) -> int:
        return DTYPES[self.dtype]

    @property
    def groups(self) -> int:
        """Query heads per K/V head (g = heads / kv_heads)."""
        return self.heads // self.kv_heads

    @property
    def query_heads_total(self) -> int:
        """batch · heads: independent (Q, O) head instances."""
        return self.batch * self.heads

    @property
    def kv_heads_total(self) -> int:
        """batch · kv_heads: K/V head instances, each shared by a group of ``groups`` query heads."""
        return self.batch * self.kv_heads

    def io_bytes(self, words: int) -> int:
        return words * self.bytes_per_word

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["bytes_per_word"] = self.bytes_per_word
        out["groups"] = self.groups
        return out


@dataclass(frozen=True)
class Ragged:
    """A packed variable-length batch beside a :class:`Workload` (a companion record): sequence i has
    ``seqlens[i]`` query and key rows (self-attention: the same cumulative lengths ``cu_seqlens`` for both), its
    tokens packed one sequence after another into (tokens, heads, d) tensors. Its compulsory traffic and its
    bounds are the sums over its sequences (:meth:`sequences`: one batch-1 Workload each, the heads, widths,
    mask, dtype and M of the base workload).

    >>> r = Ragged.from_cu_seqlens([0, 3, 8])
    >>> r.seqlens, r.tokens, r.max_seqlen
    ((3, 5), 8, 5)
    >>> [w.Nq for w in r.sequences(Workload.build(heads=2, N=1, d=4, M=64))]
    [3, 5]
    """

    cu_seqlens: tuple[int, ...]

    @classmethod
    def from_cu_seqlens(cls, cu: object) -> Ragged:
        vals = [int(x) for x in (cu.tolist() if hasattr(cu, "tolist") else cu)]  # type: ignore[attr-defined]
        if len(vals) < 2 or vals[0] != 0 or any(b <= a for a, b in zip(vals, vals[1:], strict=False)):
            raise InvalidParameter("cu_seqlens", vals, "0 followed by strictly increasing token offsets (each "
                                   "sequence at least one token), e.g. 0,5,12")
        return cls(tuple(vals))

    @property
    def seqlens(self) -> tuple[int, ...]:
        return tuple(b - a for a, b in zip(self.cu_seqlens, self.cu_seqlens[1:], strict=False))

    @property
    def tokens(self) -> int:
        return self.cu_seqlens[-1]

    @property
    def max_seqlen(self) -> int:
        return max(self.seqlens)

    def sequences(self, w: Workload) -> list[Workload]:
        """One batch-1 workload per sequence, with ``w``'s heads, widths, mask, dtype and M."""
        from dataclasses import replace

        return [replace(w, batch=1, Nq=n, Nkv=n) for n in self.seqlens]
