"""What reaches DRAM: the L2 presets, 32-byte sectors as expressions, and per-level floors (docs/dram.md).

A kernel *requests* bytes (attnio's two-level count); the memory system moves *sectors* (32 B, the unit of a
DRAM transfer on NVIDIA parts) and *lines* (128 B, the unit the L2 allocates); the L2 absorbs re-reads of thread
blocks running at the same time, so DRAM sees fewer bytes than were requested. This module holds the hardware
figures (:data:`L2_PRESETS`, each with its source) and the sector count of a byte range as an expression, from
which :mod:`attnio.solver.claims.dram` proves that a row of ``R`` bytes at a 32-byte-aligned offset touches
exactly R/32 sectors when R is a multiple of 32.

Sectors touched by the byte range [o, o + R) with sector size s (derived here): ``⌈(o + R)/s⌉ − ⌊o/s⌋``.

>>> sectors(0, 256), sectors(16, 32), sectors(0, 48), sectors(96, 64)
(8, 2, 2, 2)
>>> L2_PRESETS["mi300x"].partitions, L2_PRESETS["mi300x"].l2_bytes_per_partition
(8, 4194304)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.bounds.expr import ceil, floor
from attnio.bounds.symbols import sym
from attnio.core.errors import InvalidParameter
from attnio.core.workload import GPUS

#: symbols of the sector claim: the byte offset of a row, its bytes, the sector size (32 on every preset).
ROW_OFFSET = sym("dram_o", lo=0, doc="byte offset of a row in its tensor (dram)")
ROW_BYTES = sym("dram_R", doc="bytes of one row (dram)")
SECTOR = sym("dram_s", doc="sector size in bytes (dram)")

#: sectors touched by the byte range [o, o + R): ⌈(o + R)/s⌉ − ⌊o/s⌋ (derived here).
SECTORS_TOUCHED = ceil((ROW_OFFSET + ROW_BYTES) / SECTOR) - floor(ROW_OFFSET / SECTOR)


def sectors(offset: int, nbytes: int, sector: int = 32) -> int:
    """Sectors of ``sector`` bytes touched by the byte range [offset, offset + nbytes) (:data:`SECTORS_TOUCHED`)."""
    return -(-(offset + nbytes) // sector) - offset // sector if nbytes > 0 else 0


@dataclass(frozen=True)
class L2Preset:
    """One GPU's memory side: ``partitions`` L2 slices that do not share data (one per XCD on MI300-class parts,
    1 on NVIDIA parts, whose L2 is one coherent cache to the SMs), ``l2_bytes`` in all, ``line`` and ``sector``
    bytes, ``sms`` (SMs or CUs, spread evenly over the partitions), ``hbm_bytes_per_s``, dense bf16 FLOP/s and
    the source of every figure."""

    name: str
    l2_bytes: int
    partitions: int
    line: int
    sector: int
    sms: int
    hbm_bytes_per_s: float
    bf16_flops: float
    source: str

    @property
    def l2_bytes_per_partition(self) -> int:
        return self.l2_bytes // self.partitions

    @property
    def sms_per_partition(self) -> int:
        return self.sms // self.partitions


MiB = 2**20
_NV_LINE = ("NVIDIA CUDA C++ Best Practices Guide / Nsight Compute Kernel Profiling Guide: 128-byte L2 lines made of "
            "four 32-byte sectors; DRAM is accessed in 32-byte sectors")


def _nvidia(name: str, extra: str) -> L2Preset:
    """An NVIDIA preset from :data:`attnio.core.workload.GPUS` (one table for SM count, L2, HBM and FLOP/s)."""
    g = GPUS[name]
    return L2Preset(name, g.l2_bytes, 1, 128, 32, g.sm_count, g.hbm_bytes_per_s, g.bf16_flops,
                    f"SMs, L2, HBM, bf16: attnio.core.workload.GPUS['{name}'] (docs/serving.md: {extra}); line and "
                    f"sector: {_NV_LINE}")


#: The presets (docs/dram.md has the table with sources). NVIDIA parts reuse attnio.core.workload.GPUS.
L2_PRESETS: dict[str, L2Preset] = {
    "a100": _nvidia("a100", "NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs, 40 MB L2"),
    "h100": _nvidia("h100", "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 132 SMs, 50 MB L2, 3.35 TB/s"),
    "h200": _nvidia("h200", "NVIDIA H200 datasheet: 4.8 TB/s; GH100 die as H100: 132 SMs, 50 MB L2"),
    "b200": _nvidia("b200", "NVIDIA HGX B200 datasheet; Chips and Cheese: 148 SMs, 126 MB L2 (two dies, "
                    "modelled as one L2)"),
    "mi300x": L2Preset(
        "mi300x", 8 * 4 * MiB, 8, 128, 32, 304, 5.3e12, 1307.4e12,
        "AMD CDNA 3 Instruction Set Architecture / AMD Instinct MI300 series white paper: 8 XCDs of 38 CUs, a 4 MB "
        "L2 per XCD with 128-byte lines, 256 MB Infinity Cache (not modelled); AMD Instinct MI300X datasheet: "
        "5.3 TB/s HBM3, 1307.4 TFLOP/s dense bf16; 32-byte sector: rocprof's TCC_EA_RDREQ_32B counter"),
    "mi355x": L2Preset(
        "mi355x", 8 * 4 * MiB, 8, 128, 32, 256, 8.0e12, 2.5e15,
        "AMD Instinct MI350 series (CDNA 4) white paper: 8 XCDs of 32 CUs, a 4 MB L2 per XCD with 128-byte lines, "
        "256 MB Infinity Cache (not modelled); AMD Instinct MI355X datasheet: 8 TB/s HBM3E, 2.5 PFLOP/s dense "
        "bf16; 32-byte sector: rocprof's TCC_EA_RDREQ_32B counter"),
    "l4": L2Preset(
        "l4", 48 * MiB, 1, 128, 32, 58, 300e9, 121e12,
        f"NVIDIA L4 Tensor Core GPU datasheet: 300 GB/s GDDR6, 242 TFLOP/s bf16 with sparsity (121 dense); NVIDIA "
        f"Ada GPU Architecture whitepaper: AD104 in L4, 58 SMs, 48 MB L2; line and sector: {_NV_LINE}"),
}


def preset(name: object) -> L2Preset:
    """The preset called ``name`` (InvalidParameter naming the valid ones otherwise)."""
    if not isinstance(name, str) or name.lower() not in L2_PRESETS:
        raise InvalidParameter("l2", name, "one of " + ", ".join(L2_PRESETS))
    return L2_PRESETS[name.lower()]


@dataclass(frozen=True)
class Floors:
    """Per-level floors of one workload on one preset: ``bound`` (the catalog id of the largest two-level lower
    bound that applies at M = the whole L2 in words), ``dram_bytes`` (that bound × bytes per word), ``flops``
    (2·pairs·(d + d_v): QKᵀ and PV), and the time floor max(DRAM bytes ÷ bandwidth, FLOPs ÷ dense bf16 peak)."""

    preset: str
    M_words: int
    bound: str
    dram_bytes: int
    flops: int
    seconds: float

    def as_dict(self) -> dict:
        return {"preset": self.preset, "M_words": self.M_words, "bound": self.bound, "dram_bytes": self.dram_bytes,
                "flops": self.flops, "time_floor_s": self.seconds}


def floors(w: object, name: str | L2Preset) -> Floors:
    """The DRAM and time floors of the forward of workload ``w`` on preset ``name`` (docs/dram.md#floors).

    The two-level bounds speak about one fast memory of M words; here M is the whole L2 (every partition), which
    a machine with several L2 partitions cannot beat (one cache of their total size can hold their union). Only
    the L2 is counted as fast memory: registers and shared memory sit above it and could lower a true floor.

    >>> from attnio.core.workload import Workload
    >>> f = floors(Workload.build(heads=32, N=32768, d=128, dtype="bf16", causal=True, M=10**6), "h100")
    >>> f.bound, f.M_words, f.dram_bytes == 4 * 32 * 32768 * 128 * 2 - 32 * 128 * 2
    ('workloads.trivial.causal', 26214400, True)
    """
    from dataclasses import replace

    from attnio.bounds.workloads import best_lower_bound, pairs

    p = name if isinstance(name, L2Preset) else preset(name)
    bpw = w.bytes_per_word  # type: ignore[attr-defined]
    words = p.l2_bytes // bpw
    bound_id, lb = best_lower_bound(replace(w, M=words, memory=f"l2 {p.name}"))
    dram = int(-(-lb // 1)) * bpw
    flops = 2 * pairs(w) * (w.d + w.dv)  # type: ignore[attr-defined]
    return Floors(p.name, words, bound_id, dram, flops, max(dram / p.hbm_bytes_per_s, flops / p.bf16_flops))
