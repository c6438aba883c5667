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

from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.standard_bwd import tiled_product
from attnio.algorithms.tilings import Side


@dataclass(frozen=True)
class SquareTilingBwdTiling(Side):
    """Side B of every tile."""

    B: int
    name = "square_tiling-bwd"
    needs = "three 1×1 tiles and two statistics"
    phases = ((3, 2),)  # phase 1: C, two input tiles, L_i, D_i (the others less): B = ⌊(⌊√(3M + 1)⌋ − 1)/3⌋


def slow_arrays(m: Machine, N: int, d: int, dv: int) -> tuple[SlowArray, ...]:
    """The outputs dQ, dK (N×d), dV (N×d_v) and the scratch dS (N×N), D (N) of a square-tiled backward, in slow
    memory (``square_tiling-bwd``, ``square_tiling-io-bwd``)."""
    return (m.slow("dQ", (N, d), role="output"), m.slow("dK", (N, d), role="output"),
            m.slow("dV", (N, dv), role="output"), m.slow("dS", (N, N)), m.slow("D", (N,)))


def rowsum_phase(m: Machine, O: SlowArray, dO: SlowArray, D: SlowArray, B: int, width: int) -> None:
    """Phase 0 of a square-tiled backward: D = rowsum(dO ∘ O), B rows at a time, ``width`` columns of O and of dO
    per load (2N·d_v reads, N writes; B + 2B·width words at most)."""
    N, dv = O.shape
    for rows in m.tiles(N, B):
        Di = m.alloc((rows.stop - rows.start,), what="D_i")
        for ls in m.tiles(dv, width):
            Oil = m.load(O, rows, ls, what="O_iℓ")
            dOil = m.load(dO, rows, ls, what="dO_iℓ")
            if m.numeric:
                Di.data += (Oil.data * dOil.data).sum(axis=1)
            m.free(Oil, dOil)
        m.store(Di, D, rows)
        m.free(Di)


def schedule(m: Machine, ins: dict[str, SlowArray], t: SquareTilingBwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    xp = m.xp
    Q, K, V, O, dO, S, L = (ins[k] for k in ("Q", "K", "V", "O", "dO", "S", "L"))
    N, d = Q.shape
    dv = V.shape[1]
    B = t.B
    dQ, dK, dV, dS, D = slow_arrays(m, N, d, dv)
    rowsum_phase(m, O, dO, D, B, B)  # phase 0

    # phase 1: dS = exp(S − L) ∘ (dO Vᵀ − D)
    for rows in m.tiles(N, B):
        Li = m.load(L, rows, what="L_i")
        Di = m.load(D, rows, what="D_i")
        for cols in m.tiles(N, B):
            C = m.alloc((rows.stop - rows.start, cols.stop - cols.start), what="dP_ij")
            for ls in m.tiles(dv, B):
                dOil = m.load(dO, rows, ls, what="dO_iℓ")
                Vjl = m.load(V, cols, ls, what="V_jℓ")
                if m.numeric:
                    C.data += dOil.data @ Vjl.data.T
                m.work("mm", C.words * (ls.stop - ls.start))
                m.free(dOil, Vjl)
            Sij = m.load(S, rows, cols, what="S_ij")
            if m.numeric:
                Sij.data -= Li.data[:, None]
                xp.exp(Sij.data, out=Sij.data)  # P_ij
                C.data -= Di.data[:, None]
                C.data *= Sij.data  # dS_ij
            m.store(C, dS, rows, cols)
            m.free(Sij, C)
        m.free(Li, Di)

    # phase 2: dV = Pᵀ dO, P = exp(S − L) formed on load
    for cols in m.tiles(N, B):
        for ls in m.tiles(dv, B):
            acc = m.alloc((cols.stop - cols.start, ls.stop - ls.start), what="dV_jℓ")
            for ks in m.tiles(N, B):
                Skj = m.load(S, ks, cols, what="S_kj")
                Lk = m.load(L, ks, what="L_k")
                dOkl = m.load(dO, ks, ls, what="dO_kℓ")
                if m.numeric:
                    Skj.data -= Lk.data[:, None]
                    xp.exp(Skj.data, out=Skj.data)
                    acc.data += Skj.data.T @ dOkl.data
                m.work("mm", acc.words * (ks.stop - ks.start))
                m.free(Skj, Lk, dOkl)
            m.store(acc, dV, cols, ls)
            m.free(acc)

    # phases 3, 4
    tiled_product(m, dS, K, dQ, B, transpose_a=False, transpose_b=False, scale=scale, what="dQ_ij")
    tiled_product(m, dS, Q, dK, B, transpose_a=True, transpose_b=False, scale=scale, what="dK_ij")
    return dQ, dK, dV
