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
from attnio.algorithms.square_tiling_bwd import rowsum_phase, slow_arrays
from attnio.algorithms.tilings import Side


@dataclass(frozen=True)
class SquareTilingIOBwdTiling(Side):
    """Side B of every output tile; the inner dimension is streamed one column (row) at a time."""

    B: int
    name = "square_tiling-io-bwd"
    needs = "a 1×1 output tile and two streamed words"
    phases = ((1, 2),)  # one B×B tile and two B-vectors: B = ⌊√(M + 1)⌋ − 1


def _streamed_product(m: Machine, A: SlowArray, Bm: SlowArray, C: SlowArray, B: int, *, transpose_a: bool,
                      scale: float, what: str) -> None:
    """C = scale·op(A)·Bm with B×B output tiles, the inner dimension streamed one index at a time: for each tile,
    a B-vector of op(A) (a column of A, or a row when transposed) and a B-vector of a row of Bm per index."""
    n_rows, n_cols = C.shape
    inner = Bm.shape[0]
    for rows in m.tiles(n_rows, B):
        for cols in m.tiles(n_cols, B):
            acc = m.alloc((rows.stop - rows.start, cols.stop - cols.start), what=what)
            for k in m.tiles(inner, 1):
                a = m.load(A, k, rows, what="A_k") if transpose_a else m.load(A, rows, k, what="A_k")
                b = m.load(Bm, k, cols, what="B_k")
                if m.numeric:
                    acc.data += (a.data.T if transpose_a else a.data) @ b.data
                m.work("mm", acc.words)
                m.free(a, b)
            if m.numeric and scale != 1.0:
                acc.data *= scale
            m.store(acc, C, rows, cols)
            m.free(acc)


def schedule(m: Machine, ins: dict[str, SlowArray], t: SquareTilingIOBwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    xp = m.xp
    Q, K, V, O, dO, S, L = (ins[k] for k in ("Q", "K", "V", "O", "dO", "S", "L"))
    N, d = Q.shape
    dv = V.shape[1]
    B = t.B
    dQ, dK, dV, dS, D = slow_arrays(m, N, d, dv)
    rowsum_phase(m, O, dO, D, B, 1)  # phase 0: one column of O and dO at a time

    # phase 1: dS = exp(S − L) ∘ (dO Vᵀ − D), dP accumulated from columns of dO and V
    for rows in m.tiles(N, B):
        for cols in m.tiles(N, B):
            C = m.alloc((rows.stop - rows.start, cols.stop - cols.start), what="dP_ij")
            for ls in m.tiles(dv, 1):
                dOil = m.load(dO, rows, ls, what="dO_iℓ")
                Vjl = m.load(V, cols, ls, what="V_jℓ")
                if m.numeric:
                    C.data += dOil.data @ Vjl.data.T
                m.work("mm", C.words)
                m.free(dOil, Vjl)
            for r in m.tiles(rows.stop - rows.start, 1):
                row = slice(rows.start + r.start, rows.start + r.stop)
                Srj = m.load(S, row, cols, what="S_rj")
                Lr = m.load(L, row, what="L_r")
                if m.numeric:
                    Srj.data -= Lr.data[:, None]
                    xp.exp(Srj.data, out=Srj.data)  # P_rj
                m.free(Lr)
                Dr = m.load(D, row, what="D_r")
                if m.numeric:
                    C.data[r] = Srj.data * (C.data[r] - Dr.data[:, None])  # dS_rj
                m.free(Srj, Dr)
            m.store(C, dS, rows, cols)
            m.free(C)

    # phase 2: dV = Pᵀ dO, P = exp(S − L) formed on load, one row of S and dO at a time
    for cols in m.tiles(N, B):
        for ls in m.tiles(dv, B):
            acc = m.alloc((cols.stop - cols.start, ls.stop - ls.start), what="dV_jℓ")
            for k in m.tiles(N, 1):
                Skj = m.load(S, k, cols, what="S_kj")
                Lk = m.load(L, k, what="L_k")
                if m.numeric:
                    Skj.data -= Lk.data[:, None]
                    xp.exp(Skj.data, out=Skj.data)
                m.free(Lk)
                dOkl = m.load(dO, k, ls, what="dO_kℓ")
                if m.numeric:
                    acc.data += Skj.data.T @ dOkl.data
                m.work("mm", acc.words)
                m.free(Skj, dOkl)
            m.store(acc, dV, cols, ls)
            m.free(acc)

    # phases 3, 4: dQ = scale·dS K (columns of dS streamed), dK = scale·dSᵀ Q (rows of dS streamed)
    _streamed_product(m, dS, K, dQ, B, transpose_a=False, scale=scale, what="dQ_iℓ")
    _streamed_product(m, dS, Q, dK, B, transpose_a=True, scale=scale, what="dK_jℓ")
    return dQ, dK, dV
