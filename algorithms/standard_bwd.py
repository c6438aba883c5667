"""Standard attention backward pass, Algorithm 3 of Dao et al. 2022 (arXiv 2205.14135, Appendix B.2), tiled
so every step fits M (``standard-bwd``).

Inputs in slow memory: Q, K (N×d), V, dO (N×d_v) and the probabilities P (N×N) the standard forward wrote
(Algorithm 3 "requires P in HBM"; O is not used). Outputs dQ, dK (N×d), dV (N×d_v). P, dP and dS are N×N
matrices in slow memory. Every product is square-tiled with side b, as in ``standard`` (T = ⌈N/b⌉,
T_d = ⌈d/b⌉, T_v = ⌈d_v/b⌉)::

    # line 1: dV = PᵀdO
    for i in 1..T (rows of dV), j in 1..T_v: acc ← 0
        for k in 1..T: load P[k,i], dO[k,j]; acc += P[k,i]ᵀ dO[k,j]; free both
        write dV_ij                                          # P once per j: T_v·N²; dO once per i: T·N·d_v
    # line 2: dP = dO Vᵀ
    for i in 1..T, j in 1..T: acc ← 0
        for k in 1..T_v: load dO[i,k], V[j,k]; acc += dO[i,k] V[j,k]ᵀ; free both
        write dP_ij                                          # 2T·N·d_v reads, N² writes
    # line 3: dS_ij = P_ij (dP_ij − Σ_l P_il dP_il), per row block i
        D_i ← 0 (b, fast); for j: load P_ij, dP_ij; D_i += rowsum(P_ij ∘ dP_ij)     # 2N² reads
        for j: load P_ij, dP_ij; dS_ij = P_ij ∘ (dP_ij − D_i) (in place); write      # 2N² reads, N² writes
    # line 4: dQ = scale·dS K;  line 5: dK = scale·dSᵀ Q  (inner dimension N in chunks of b)
        dS once per column tile of d: T_d·N² each; K (Q) once per row tile: T·N·d each; write N·d each

Fast memory: three b×b tiles in the products (3b²); line 3 holds two tiles and D_i (2b² + b ≤ 3b²).
Block rule: ``b = ⌊√(M/3)⌋``; needs M ≥ 3.

Exact count (derived here, docs/costs.md#standard-bwd):
reads = T_v·N² + 3T·N·d_v + 4N² + 2T_d·N² + 2T·N·d, writes = N·d_v + 2N² + 2N·d.
Θ(Nd + N²) (FlashAttention Thm 5) once b ≥ d, d_v (M ≥ 3d²).

Worked count, N=4, d=2, M=12: b = 2, T = 2, T_d = T_v = 1.
reads = 16 + 48 + 64 + 32 + 32 = 192, writes = 8 + 32 + 16 = 56, peak 3·4 = 12.

>>> from attnio.algorithms.run import run
>>> r = run("standard-bwd", N=4, d=2, M=12, seed=0)
>>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words)
(StandardBwdTiling(b=2), 192, 56, 12)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.algorithms.machine import FastBlock, Machine, SlowArray
from attnio.algorithms.tilings import Side


def tiled_product(
    m: Machine, A: SlowArray, B: SlowArray, C: SlowArray, b: int, *, k: int | None = None, transpose_a: bool,
    transpose_b: bool, scale: float = 1.0, what: str = "acc",
) -> None:
    """C = scale·op(A)·op(B) with b×b tiles of C, the inner dimension in chunks of k (None: b); op transposes
    when asked. A block of op(A) at (i, k) is loaded as the block (k, i) of A when transposed (same words). Each
    A word is read once per column tile of C and each B word once per row tile of C; C is written once."""
    n_rows, n_cols = C.shape
    inner = A.shape[0] if transpose_a else A.shape[1]
    for rows in m.tiles(n_rows, b):
        for cols in m.tiles(n_cols, b):
            acc = m.alloc((rows.stop - rows.start, cols.stop - cols.start), what=what)
            for ks in m.tiles(inner, b if k is None else k):
                a = m.load(A, ks, rows, what="A") if transpose_a else m.load(A, rows, ks, what="A")
                bb = m.load(B, cols, ks, what="B") if transpose_b else m.load(B, ks, cols, what="B")
                if m.numeric:
                    acc.data += (a.data.T if transpose_a else a.data) @ (bb.data.T if transpose_b else bb.data)
                m.work("mm", acc.words * (ks.stop - ks.start))
                m.free(a, bb)
            if m.numeric and scale != 1.0:
                acc.data *= scale
            m.store(acc, C, rows, cols)
            m.free(acc)


def rowsum_product(m: Machine, X: SlowArray, Y: SlowArray, rows: slice, width: int) -> FastBlock:
    """D_i = rowsum(X_i ∘ Y_i) over the rows ``rows`` of two slow arrays of one shape, ``width`` columns of each
    per load, left in fast memory (one read of each word of X_i and Y_i)."""
    Di = m.alloc((rows.stop - rows.start,), what="D_i")
    for cs in m.tiles(X.shape[1], width):
        Xc = m.load(X, rows, cs, what=f"{X.name}_i")
        Yc = m.load(Y, rows, cs, what=f"{Y.name}_i")
        if m.numeric:
            Di.data += (Xc.data * Yc.data).sum(axis=1)
        m.free(Xc, Yc)
    return Di


@dataclass(frozen=True)
class StandardBwdTiling(Side, name="standard-bwd", needs="three 1×1 tiles", phases=((3, 0), (2, 1))):
    """Side b of every square tile: three b×b tiles (the products), two tiles and D_i (line 3), so
    b = ⌊√(M/3)⌋."""

    b: int


def schedule(m: Machine, ins: dict[str, SlowArray], t: StandardBwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    Q, K, V, dO, P = (ins[k] for k in ("Q", "K", "V", "dO", "P"))
    N, d = Q.shape
    dv = V.shape[1]
    b = t.b
    dQ = m.slow("dQ", (N, d), role="output")
    dK = m.slow("dK", (N, d), role="output")
    dV = m.slow("dV", (N, dv), role="output")
    dP = m.slow("dP", (N, N))
    dS = m.slow("dS", (N, N))
    tiled_product(m, P, dO, dV, b, transpose_a=True, transpose_b=False, what="dV_ij")  # line 1
    tiled_product(m, dO, V, dP, b, transpose_a=False, transpose_b=True, what="dP_ij")  # line 2
    for rows in m.tiles(N, b):  # line 3
        Di = rowsum_product(m, P, dP, rows, b)
        for cols in m.tiles(N, b):
            Pij = m.load(P, rows, cols, what="P_ij")
            dPij = m.load(dP, rows, cols, what="dP_ij")
            if m.numeric:
                dPij.data -= Di.data[:, None]
                dPij.data *= Pij.data  # dS_ij, in place
            m.store(dPij, dS, rows, cols)
            m.free(Pij, dPij)
        m.free(Di)
    tiled_product(m, dS, K, dQ, b, transpose_a=False, transpose_b=False, scale=scale, what="dQ_ij")  # line 4
    tiled_product(m, dS, Q, dK, b, transpose_a=True, transpose_b=False, scale=scale, what="dK_ij")  # line 5
    return dQ, dK, dV
