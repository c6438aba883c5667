"""A small-cache backward pass with output tiles and the inner dimension streamed (derived here;
``square_tiling-io-bwd``): the backward of ``square_tiling``/``square_tiling-io`` (it reads the forward's logits S
and logsumexp L), with the tile shape of ``square_tiling-io`` (docs/costs.md#square_tiling-io).

The backward needs five N×N×d products: S = QKᵀ (read here, not recomputed: the forward left it in slow memory),
dP = dO·Vᵀ, dV = PᵀdO, dQ = scale·dS·K, dK = scale·dSᵀ·Q. ``square_tiling-bwd`` runs the four it computes with
three B×B tiles in fast memory (3B² + 2B ≤ M, B ≈ √(M/3)), so every streamed word is read ≈ N/B = √3·N/√M times.
Here each product holds one B×B *output* tile and streams its inner dimension one column (or row) at a time,
so the two streamed operands take 2B words and B² + 2B ≤ M: B ≈ √M, √3 fewer reads of every streamed word.
Inputs in slow memory: Q, K (N×d), V, O, dO (N×d_v), S (N×N), L (N). Outputs dQ, dK (N×d), dV (N×d_v); dS (N×N)
and D (N) are scratch. T = ⌈N/B⌉, T_d = ⌈d/B⌉, T_v = ⌈d_v/B⌉::

    # phase 0: D = rowsum(dO ∘ O)
    for i in 1..T: D_i ← 0; for ℓ in 1..d_v: load O[i,ℓ], dO[i,ℓ] (columns); D_i += O ∘ dO; write D_i   # 2N·d_v, N
    # phase 1: dS = P ∘ (dO Vᵀ − D), P = exp(S − L)
    for i in 1..T, j in 1..T: C ← 0 (B×B)
        for ℓ in 1..d_v: load dO[i,ℓ], V[j,ℓ] (columns); C += dO[i,ℓ] V[j,ℓ]ᵀ       # 2T·N·d_v reads
        for r in rows of i: load S[r,j], L_r; P = exp(S − L_r); free L_r; load D_r; C[r] = P ∘ (C[r] − D_r)  # N², 2T·N
        write C → dS_ij                                                             # N² writes
    # phase 2: dV = Pᵀ dO
    for j in 1..T, ℓ in 1..T_v: acc ← 0 (B×B)
        for k in 1..N: load S[k,j], L_k; P = exp(S − L_k); free L_k; load dO[k,ℓ]; acc += Pᵀ dO[k,ℓ]
        write acc → dV_jℓ                  # S: T_v·N², L: T·T_v·N, dO: T·N·d_v reads; N·d_v writes
    # phase 3: dQ = scale·dS K; phase 4: dK = scale·dSᵀ Q (the same loop, dS's columns resp. rows streamed)
    for i in 1..T, ℓ in 1..T_d: acc ← 0; for k in 1..N: load dS[i,k], K[k,ℓ]; acc += …; write scale·acc
                                           # T_d·N² + T·N·d reads, N·d writes each

Fast memory: every phase holds at most one B×B tile and two B-vectors (phase 0: three B-vectors; the S step of
phase 1: the tile, one S row of B words and one of L_r, D_r), so B² + 2B ≤ M. Block rule: the largest such B,
``B = ⌊√(M + 1)⌋ − 1``; needs M ≥ 3.

Exact count (derived here, docs/costs.md#square_tiling-io-bwd):
reads = 2N·d_v + 3T·N·d_v + N² + 2T·N + T_v·N² + T·T_v·N + 2T_d·N² + 2T·N·d,
writes = N + N² + N·d_v + 2N·d.
These are square_tiling-bwd's terms with its B, except 2T·N for L and D in phase 1 (loaded with each S row
instead of once per row tile). Leading term (d_v = d, B ≈ √M): 8N²d/√M + 2N², against square_tiling-bwd's
8√3·N²d/√M + 2N².

Why not the arrangement that consumes each resident dS tile in both dQ and dK (and P in dV) at once: dQ, dK and
dV are N×d accumulators, larger than fast memory when M < d², so that loop reads and writes an accumulator slice
for every pair tile (2 words per accumulator word per tile): with a×b pair tiles it moves N²d(4/b + 5/a) with
2ab ≤ M, at best 4√10·N²d/√M ≈ 12.6·N²d/√M, more than the 8 here.

Worked count, N=4, d=2, M=16: B = ⌊√17⌋ − 1 = 3, T = 2, T_d = T_v = 1.
reads = 16 + 48 + 16 + 16 + 16 + 8 + 32 + 32 = 184, writes = 4 + 16 + 8 + 16 = 44, peak 3² + 2·3 = 15.

>>> from attnio.algorithms.run import run
>>> r = run("square_tiling-io-bwd", N=4, d=2, M=16, seed=0)
>>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words)
(SquareTilingIOBwdTiling(B=3), 184, 44, 15)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.square_tiling_bwd import dP_tile, dQ_dK_phases, dV_phase, rowsum_phase
from attnio.algorithms.tilings import Side


@dataclass(frozen=True)
class SquareTilingIOBwdTiling(Side, name="square_tiling-io-bwd", needs="a 1×1 output tile and two streamed words",
                              phases=((1, 2),)):
    """Side B of every output tile; the inner dimension is streamed one column (row) at a time. One B×B tile and
    two B-vectors: B = ⌊√(M + 1)⌋ − 1."""

    B: int


def schedule(m: Machine, ins: dict[str, SlowArray], t: SquareTilingIOBwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    """Phases 0-4 with B×B output tiles, the inner dimension streamed one index at a time."""
    B = t.B
    a = rowsum_phase(m, ins, B, 1)  # phase 0: one column of O and dO at a time
    N = a.Q.shape[0]
    for rows in m.tiles(N, B):  # phase 1: dS = exp(S − L) ∘ (dO Vᵀ − D), one row of S, L and D at a time
        for cols in m.tiles(N, B):
            C = dP_tile(m, a, rows, cols, 1)  # from columns of dO and V
            for r in m.tiles(rows.stop - rows.start, 1):
                row = slice(rows.start + r.start, rows.start + r.stop)
                Srj = m.load(a.S, row, cols, what="S_rj")
                Lr = m.load(a.L, row, what="L_r")
                if m.numeric:
                    Srj.data -= Lr.data[:, None]
                    m.xp.exp(Srj.data, out=Srj.data)  # P_rj
                m.free(Lr)
                Dr = m.load(a.D, row, what="D_r")
                if m.numeric:
                    C.data[r] = Srj.data * (C.data[r] - Dr.data[:, None])  # dS_rj
                m.free(Srj, Dr)
            m.store(C, a.dS, rows, cols)
            m.free(C)
    dV_phase(m, a, B, 1)  # phase 2: one row of S and dO at a time
    return dQ_dK_phases(m, a, B, 1, scale)  # phases 3, 4: columns (dQ) resp. rows (dK) of dS streamed
