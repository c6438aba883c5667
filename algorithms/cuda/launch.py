"""Launch parameters of the attnio CUDA kernels, derived from the model's tiling. Pure Python: no CuPy.

**How M words map to shared memory.** The machine's fast memory is the thread block's dynamic shared
memory. Every fast-memory word is one float32 (the accumulation type) whatever the input dtype: a float16 or
bfloat16 element is widened to float32 as it is loaded. So a schedule that holds W ≤ M words needs
``4·W`` bytes of shared memory (:data:`SHARED_BYTES_PER_WORD`), and the largest M a device can honour is
``⌊limit/4⌋`` (H100/H200: 232,448 bytes per block after opt-in, so M ≤ 58,112 words). A slow-memory word
is one element of the global array it belongs to: 4 bytes for float32, 2 for float16/bfloat16 inputs and
outputs, 4 for the float32 scratch arrays (flash2's L; square tiling's logits S and row logsumexps L).

**flash2.** Blocks from :meth:`algorithms.flash2.Flash2Tiling.default` (or a given tiling); one thread
block per Q block: grid ``T_r = ⌈N/B_r⌉``; shared words ``Flash2Tiling.fast_words(B_r, B_c, d, dv)``.

**square tiling.** ``B = ⌊√(M/4)⌋`` (Saha–Ye Alg. 1, line 1, via :meth:`SquareTiling.default`); two launches (the
two phases), each with grid ``⌈N/B⌉`` and ``3B² + B`` shared words.

Worked example, N=1024, d=64, M=16384: a = ⌊16320/132⌋ = 123, T_r = ⌈1024/123⌉ = 9, B_r = ⌈1024/9⌉ = 114,
B_c = ⌊(16384 − 114·131)/(64 + 114)⌋ = ⌊1450/178⌋ = 8; shared words 2·114·64 + 114·8 + 3·114 + 8·64 = 16358,
i.e. 65,432 bytes (more than 48 KiB: the launch opts in).

>>> p = flash2_plan(N=1024, d=64, M=16384)
>>> p.tiling, p.launches[0].grid, p.launches[0].shared_words, p.launches[0].shared_bytes
(Flash2Tiling(B_r=114, B_c=8), (9, 1, 1), 16358, 65432)
>>> q = square_tiling_plan(N=1024, d=128, M=4096)
>>> q.tiling.B, [(l.kernel, l.grid[0], l.shared_words) for l in q.launches]
(32, [('square_tiling_phase1', 32, 3104), ('square_tiling_phase2', 32, 3104)])
>>> sum(q.words().values(), IOCount(0, 0)).io_words   # 4N²d/B + N² + Nd + 2N at B = 32 (docs/costs.md#square_tiling)
17958912
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnio.algorithms.flash2 import Flash2Tiling
from attnio.algorithms.square_tiling import SquareTiling
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.validate import check_choice, check_int

SHARED_BYTES_PER_WORD = 4
"""Bytes of shared memory per fast-memory word: one float32 accumulator slot, for every input dtype."""

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
"""Bytes of one global-memory word of an input or output array (Q, K, V, O), by input dtype."""

SCRATCH_BYTES = 4
"""Bytes of one word of a float32 scratch array in global memory (L; S)."""

DEFAULT_THREADS = 256
INT32_MAX = 2**31 - 1
STATIC_SHARED_DEFAULT_BYTES = 48 * 1024
"""Dynamic shared memory a kernel may use without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize)."""


@dataclass(frozen=True)
class Launch:
    """One kernel launch: function name (without template arguments), grid, block and dynamic shared memory."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_words: int

    @property
    def shared_bytes(self) -> int:
        return self.shared_words * SHARED_BYTES_PER_WORD

    @property
    def needs_opt_in(self) -> bool:
        """True when the launch needs more than the default 48 KiB of dynamic shared memory."""
        return self.shared_bytes > STATIC_SHARED_DEFAULT_BYTES


@dataclass(frozen=True)
class KernelPlan:
    """Everything a launch needs, and what the kernel will move, for one (algorithm, N, d, dv, M, dtype)."""

    algorithm: str  # "flash2" | "square_tiling"
    N: int
    d: int
    dv: int
    M: int
    dtype: str
    tiling: Flash2Tiling | SquareTiling
    launches: tuple[Launch, ...]
    scratch: dict[str, tuple[int, ...]] = field(
        default_factory=dict
    )  # float32 global arrays besides Q, K, V, O

    @property
    def shared_bytes(self) -> int:
        return max(l.shared_bytes for l in self.launches)

    def words(self) -> dict[str, IOCount]:
        """Global-memory words per array that the kernels move (closed form, derived in the .cu headers)."""
        N, d, dv = self.N, self.d, self.dv
        if isinstance(self.tiling, Flash2Tiling):
            Tr = -(-N // self.tiling.B_r)
            return {
                "Q": IOCount(N * d, 0),
                "K": IOCount(Tr * N * d, 0),
                "V": IOCount(Tr * N * dv, 0),
                "O": IOCount(0, N * dv),
                "L": IOCount(0, N),
            }
        B = self.tiling.B
        T, Tdv = -(-N // B), -(-dv // B)
        return {
            "Q": IOCount(T * N * d, 0),
            "K": IOCount(T * N * d, 0),
            "S": IOCount(Tdv * N * N, N * N),
            "L": IOCount(N, N),
            "V": IOCount(T * N * dv, 0),
            "O": IOCount(0, N * dv),
        }

    def total_words(self) -> IOCount:
        return sum(self.words().values(), IOCount(0, 0))

    def bytes(self) -> IOCount:
        """Global-memory bytes the model's words stand for: words × the element size of their array."""
        item = DTYPE_BYTES[self.dtype]
        total = IOCount(0, 0)
        for name, c in self.words().items():
            b = SCRATCH_BYTES if name in self.scratch else item
            total = total + IOCount(c.reads_words * b, c.writes_words * b)
        return total

    def flops(self) -> int:
        """Multiply-adds ×2 of the two products (scale·QKᵀ and P·V): 2N²d + 2N²dv."""
        return 2 * self.N * self.N * (self.d + self.dv)


def _check_common(
    N: int, d: int, M: int, dv: int | None, dtype: str, threads: int
) -> tuple[int, int, int, int, str, int]:
    N = check_int("N", N, min=1, max=INT32_MAX)
    d = check_int("d", d, min=1, max=INT32_MAX)
    dv = d if dv is None else check_int("dv", dv, min=1, max=INT32_MAX)
    M = check_int("M", M, min=1)
    dtype = check_choice("dtype", dtype, list(DTYPE_BYTES))
    threads = check_int("threads", threads, min=32, max=1024)
    if threads % 32:
        raise InvalidParameter("threads", threads, "a multiple of 32 (whole warps) between 32 and 1024")
    return N, d, dv, M, dtype, threads


def flash2_plan(N: int, d: int, M: int, *, dv: int | None = None, dtype: str = "float32", tiling: Flash2Tiling | None = None,
                threads: int = DEFAULT_THREADS) -> KernelPlan:
    """The fused flash2 launch: the model's tiling (io-optimal rule unless ``tiling`` is given).

    >>> flash2_plan(4, 2, 14).tiling   # the worked example of algorithms/flash2.py
    Flash2Tiling(B_r=1, B_c=2)
    >>> flash2_plan(4, 2, 14, tiling=Flash2Tiling(4, 4))
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: tiling=Flash2Tiling(B_r=4, B_c=4) is invalid: valid range is Flash2Tiling.fast_words(B_r, B_c, d=2, dv=2) = 52 <= M=14
    """
    N, d, dv, M, dtype, threads = _check_common(N, d, M, dv, dtype, threads)
    if tiling is None:
        tiling = Flash2Tiling.default(N, d, M, dv)
    words = Flash2Tiling.fast_words(tiling.B_r, tiling.B_c, d, dv)
    if words > M:
        raise InvalidParameter(
            "tiling", tiling, f"Flash2Tiling.fast_words(B_r, B_c, d={d}, dv={dv}) = {words} <= M={M}"
        )
    if tiling.B_r > N or tiling.B_c > N:
        raise InvalidParameter("tiling", tiling, f"B_r <= N and B_c <= N (N={N})")
    Tr = -(-N // tiling.B_r)
    launch = Launch("flash2_fwd", (Tr, 1, 1), (threads, 1, 1), words)
    return KernelPlan("flash2", N, d, dv, M, dtype, tiling, (launch,), {"L": (N,)})


def square_tile_size(M: int) -> int:
    """B = ⌊√(M/4)⌋ (Saha–Ye Alg. 1 line 1): the model's own rule, :meth:`SquareTiling.default`.

    >>> [square_tile_size(M) for M in (4, 15, 16, 4096, 4100)]
    [1, 1, 2, 32, 32]
    """
    M = check_int("M", M, min=1)
    return SquareTiling.default(1, 1, M).B


def square_tiling_plan(N: int, d: int, M: int, *, dv: int | None = None, dtype: str = "float32",
                       threads: int = DEFAULT_THREADS) -> KernelPlan:
    """The two square-tiling launches (Phase 1 writes the logits S and row logsumexps L; Phase 2 reads them)."""
    N, d, dv, M, dtype, threads = _check_common(N, d, M, dv, dtype, threads)
    B = SquareTiling.default(N, d, M, dv).B
    if N * N > 2**62:
        raise Unsupported(f"square_tiling materialises A (N² = {N * N} words); too large")
    words = SquareTiling.fast_words(B)  # 3B² + B
    assert words <= M, (M, B)
    T = -(-N // B)
    launches = (
        Launch("square_tiling_phase1", (T, 1, 1), (threads, 1, 1), words),
        Launch("square_tiling_phase2", (T, 1, 1), (threads, 1, 1), words),
    )
    return KernelPlan(
        "square_tiling", N, d, dv, M, dtype, SquareTiling(B), launches, {"S": (N, N), "L": (N,)}
    )


def plan(algorithm: str, N: int, d: int, M: int, **kw: object) -> KernelPlan:
    """Dispatch on ``algorithm`` ("flash2" or "square_tiling")."""
    algorithm = check_choice("algorithm", algorithm, ["flash2", "square_tiling"])
    return flash2_plan(N, d, M, **kw) if algorithm == "flash2" else square_tiling_plan(N, d, M, **kw)  # type: ignore[arg-type]


def max_M_words(shared_limit_bytes: int) -> int:
    """The largest M (words) whose every word fits in ``shared_limit_bytes`` of shared memory.

    >>> max_M_words(232448)   # H100/H200 opt-in limit per block
    58112
    """
    return check_int("shared_limit_bytes", shared_limit_bytes, min=0) // SHARED_BYTES_PER_WORD


def check_shared_memory(p: KernelPlan, shared_limit_bytes: int) -> None:
    """Raise :class:`Unsupported` when a launch of ``p`` needs more shared memory than the device gives a block.

    >>> check_shared_memory(flash2_plan(4096, 64, 16384), 232448)   # 16,358 words = 65,432 bytes: fits after opt-in
    >>> check_shared_memory(flash2_plan(4096, 64, 65536), 232448)
    Traceback (most recent call last):
    attnio.core.errors.Unsupported: flash2 at M=65536 needs 261824 bytes of shared memory per block (65456 float32 words) but this device allows 232448; use M <= 58112
    """
    for l in p.launches:
        if l.shared_bytes > shared_limit_bytes:
            raise Unsupported(
                f"{p.algorithm} at M={p.M} needs {l.shared_bytes} bytes of shared memory per block "
                f"({l.shared_words} float32 words) but this device allows {shared_limit_bytes}; "
                f"use M <= {max_M_words(shared_limit_bytes)}"
            )
