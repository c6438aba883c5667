"""A small-cache backward pass with square tiles (derived here; ``square_tiling-bwd``), the backward of
Saha–Ye's SquareTilingAttention (arXiv 2402.07443, Algorithm 1, as ``square_tiling`` runs it: that forward
leaves the logits S and one logsumexp L per row in slow memory).

Inputs in slow memory: Q, K (N×d), V, O, dO (N×d_v), the logits S (N×N) and the logsumexp L (N) of the
forward. Outputs dQ, dK (N×d), dV (N×d_v); dS (N×N) and D (N) are scratch in slow memory. Every tile is B×B
(T = ⌈N/B⌉, T_d = ⌈d/B⌉, T_v = ⌈d_v/B⌉)::

    # phase 0: D = rowsum(dO ∘ O)
    for i in 1..T: D_i ← 0; for ℓ in 1..T_v: load O[i,ℓ], dO[i,ℓ]; D_i += rowsum; write D_i  # 2N·d_v, N
    # phase 1: dS = P ∘ (dO Vᵀ − D), P = exp(S − L) formed on load
    for i in 1..T: load L_i, D_i                                                # 2N reads
        for j in 1..T: C ← 0
            for ℓ in 1..T_v: load dO[i,ℓ], V[j,ℓ]; C += dO[i,ℓ] V[j,ℓ]ᵀ            # 2T·N·d_v reads
            load S_ij; P_ij = exp(S_ij − L_i) (in place); C = P_ij ∘ (C − D_i); write dS_ij   # N², N²
    # phase 2: dV = Pᵀ dO, P formed on load
    for j in 1..T (rows of dV), ℓ in 1..T_v: acc ← 0
        for k in 1..T: load S[k,j], L_k, dO[k,ℓ]; acc += exp(S[k,j] − L_k)ᵀ dO[k,ℓ]
        write dV_jℓ                          # S: T_v·N², L: T·T_v·N, dO: T·N·d_v reads; N·d_v writes
    # phases 3, 4: dQ = scale·dS K, dK = scale·dSᵀ Q   # T_d·N² + T·N·d reads, N·d writes each

Fast memory: phase 1 holds L_i, D_i, C and two input tiles (3B² + 2B); the others at most 3B² + B. Block
rule: the largest B with 3B² + 2B ≤ M, ``B = ⌊(⌊√(3M + 1)⌋ − 1)/3⌋``; needs M ≥ 5.

Exact count (derived here, docs/costs.md#square_tiling-bwd):
reads = 2N·d_v + 2N + 3T·N·d_v + N² + T_v·N² + T·T_v·N + 2T_d·N² + 2T·N·d,
writes = N + N² + N·d_v + 2N·d.
Leading term (d_v = d, B ≈ √(M/3)): 8√3·N²d/√M + 2N², Θ(N²d/√M) for M ≤ d² (the small-cache branch
(N²d + Nd²)/√M of Li et al., arXiv 2410.09397, since Nd² ≤ N²d for d ≤ N).

Worked count, N=4, d=2, M=16: B = ⌊(7 − 1)/3⌋ = 2, T = 2, T_d = T_v = 1.
reads = 16 + 8 + 48 + 16 + 16 + 8 + 32 + 32 = 176, writes = 4 + 16 + 8 + 16 = 44, peak 3·4 + 4 = 16.

>>> from attnio.algorithms.run import run
>>> r = run("square_tiling-bwd", N=4, d=2, M=16, seed=0)
>>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words)
(SquareTilingBwdTiling(B=2), 176, 44, 16)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.algorithms.machine import FastBlock, Machine, SlowArray
from attnio.algorithms.standard_bwd import rowsum_product, tiled_product
from attnio.algorithms.tilings import Side


@dataclass(frozen=True)
class SquareBwdArrays:
    """The slow arrays of a square-tiled backward (``square_tiling-bwd``, ``square_tiling-io-bwd``): the inputs Q,
    K (N×d), V, dO (N×d_v), the forward's logits S (N×N) and logsumexp L (N); the outputs dQ, dK (N×d), dV
    (N×d_v); the scratch dS (N×N) and D (N)."""

    Q: SlowArray
    K: SlowArray
    V: SlowArray
    dO: SlowArray
    S: SlowArray
    L: SlowArray
    dQ: SlowArray
    dK: SlowArray
    dV: SlowArray
    dS: SlowArray
    D: SlowArray


@dataclass(frozen=True)
class SquareTilingBwdTiling(Side, name="square_tiling-bwd", needs="three 1×1 tiles and two statistics", phases=((3, 2),)):
    """Side B of every tile: phase 1 holds C, two input tiles, L_i and D_i (the others less), so
    B = ⌊(⌊√(3M + 1)⌋ − 1)/3⌋."""

    B: int


def rowsum_phase(m: Machine, ins: dict[str, SlowArray], B: int, width: int) -> SquareBwdArrays:
    """The slow arrays of a square-tiled backward, then its phase 0: D = rowsum(dO ∘ O), B rows at a time,
    ``width`` columns of O and of dO per load (2N·d_v reads, N writes; B + 2B·width words at most)."""
    Q, V, O, dO = ins["Q"], ins["V"], ins["O"], ins["dO"]
    N, d = Q.shape
    dv = V.shape[1]
    a = SquareBwdArrays(Q, ins["K"], V, dO, ins["S"], ins["L"], m.slow("dQ", (N, d), role="output"),
                        m.slow("dK", (N, d), role="output"), m.slow("dV", (N, dv), role="output"), m.slow("dS", (N, N)),
                        m.slow("D", (N,)))
    for rows in m.tiles(N, B):
        Di = rowsum_product(m, O, dO, rows, width)
        m.store(Di, a.D, rows)
        m.free(Di)
    return a


def dP_tile(m: Machine, a: SquareBwdArrays, rows: slice, cols: slice, width: int) -> FastBlock:
    """dP_ij = dO_i V_jᵀ in a fresh fast tile, ``width`` columns of dO and V per load (the tile and 2B·width
    words at most)."""
    C = m.alloc((rows.stop - rows.start, cols.stop - cols.start), what="dP_ij")
    for ls in m.tiles(a.V.shape[1], width):
        dOil = m.load(a.dO, rows, ls, what="dO_iℓ")
        Vjl = m.load(a.V, cols, ls, what="V_jℓ")
        if m.numeric:
            C.data += dOil.data @ Vjl.data.T
        m.work("mm", C.words * (ls.stop - ls.start))
        m.free(dOil, Vjl)
    return C


def dV_phase(m: Machine, a: SquareBwdArrays, B: int, k: int) -> None:
    """Phase 2: dV = Pᵀ dO in B×B tiles, P = exp(S − L) formed on load, k rows of S, L and dO per step (L_k freed
    before dO_k is loaded)."""
    N, dv = a.dO.shape
    for cols in m.tiles(N, B):
        for ls in m.tiles(dv, B):
            acc = m.alloc((cols.stop - cols.start, ls.stop - ls.start), what="dV_jℓ")
            for ks in m.tiles(N, k):
                Skj = m.load(a.S, ks, cols, what="S_kj")
                Lk = m.load(a.L, ks, what="L_k")
                if m.numeric:
                    Skj.data -= Lk.data[:, None]
                    m.xp.exp(Skj.data, out=Skj.data)
                m.free(Lk)
                dOkl = m.load(a.dO, ks, ls, what="dO_kℓ")
                if m.numeric:
                    acc.data += Skj.data.T @ dOkl.data
                m.work("mm", acc.words * (ks.stop - ks.start))
                m.free(Skj, dOkl)
            m.store(acc, a.dV, cols, ls)
            m.free(acc)


def dQ_dK_phases(m: Machine, a: SquareBwdArrays, B: int, k: int, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    """Phases 3, 4: dQ = scale·dS K, dK = scale·dSᵀ Q in B×B tiles, the inner dimension N in chunks of k;
    returns the gradients (dQ, dK, dV)."""
    tiled_product(m, a.dS, a.K, a.dQ, B, k=k, transpose_a=False, transpose_b=False, scale=scale, what="dQ_iℓ")
    tiled_product(m, a.dS, a.Q, a.dK, B, k=k, transpose_a=True, transpose_b=False, scale=scale, what="dK_jℓ")
    return a.dQ, a.dK, a.dV


def schedule(m: Machine, ins: dict[str, SlowArray], t: SquareTilingBwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    """Phases 0-4 with B×B tiles throughout."""
    B = t.B
    a = rowsum_phase(m, ins, B, B)  # phase 0
    N = a.Q.shape[0]
    for rows in m.tiles(N, B):  # phase 1: dS = exp(S − L) ∘ (dO Vᵀ − D)
        Li = m.load(a.L, rows, what="L_i")
        Di = m.load(a.D, rows, what="D_i")
        for cols in m.tiles(N, B):
            C = dP_tile(m, a, rows, cols, B)
            Sij = m.load(a.S, rows, cols, what="S_ij")
            if m.numeric:
                Sij.data -= Li.data[:, None]
                m.xp.exp(Sij.data, out=Sij.data)  # P_ij
                C.data -= Di.data[:, None]
                C.data *= Sij.data  # dS_ij
            m.store(C, a.dS, rows, cols)
            m.free(Sij, C)
        m.free(Li, Di)
    dV_phase(m, a, B, B)
    return dQ_dK_phases(m, a, B, B, scale)
