"""The two square-tiled products of the schedules that materialise the scores (standard attention, Saha–Ye's
square tiling and its io tile rule): one logits tile S_ij = scale·Q_i K_jᵀ with the inner dimension d in chunks
of b, and one row of output tiles O_i = P_i V with the inner dimension in chunks of b (or k). Row offsets place
one head of a row-stacked workload (:mod:`attnio.algorithms.causal`); a tile crossing a causal diagonal is
masked.
"""

from __future__ import annotations

from attnio.algorithms.causal import mask_if_crossing, shift
from attnio.algorithms.machine import FastBlock, Machine, SlowArray


def logits(m: Machine, Q: SlowArray, K: SlowArray, rows: slice, cols: slice, b: int, scale: float, *,
           q_off: int = 0, kv_off: int = 0, delta: int | None = None, names: tuple[str, str, str] = ("S_ij", "Q_ik", "K_jk")) -> FastBlock:
    """S_ij = scale·Q_i K_jᵀ in fast memory (left allocated), from b×b tiles of Q and K loaded and freed."""
    d = Q.shape[1]
    A = m.alloc((rows.stop - rows.start, cols.stop - cols.start), what=names[0])
    for ks in m.tiles(d, b):
        Qik = m.load(Q, shift(rows, q_off), ks, what=names[1])
        Kjk = m.load(K, shift(cols, kv_off), ks, what=names[2])
        if m.numeric:
            A.data += Qik.data @ Kjk.data.T
        m.work("qk", A.words * (ks.stop - ks.start))
        m.free(Qik, Kjk)
    if m.numeric:
        A.data *= scale
        mask_if_crossing(A.data, rows, cols, delta)
    return A


def pv(m: Machine, P: SlowArray, V: SlowArray, O: SlowArray, rows: slice, ext: int, b: int, *, k: int | None = None,
       L_i: FastBlock | None = None, q_off: int = 0, kv_off: int = 0, names: tuple[str, str, str] = ("P_ik", "V_kj", "O_ij")) -> None:
    """O_i = P_i[:, :ext]·V[:ext] in output tiles of b value columns (the inner dimension in chunks of k,
    default b), written to O; with ``L_i`` the tiles of P are logits, turned into exp(S − L_i) on load (in place)."""
    dv = V.shape[1]
    for vcols in m.tiles(dv, b):
        Oij = m.alloc((rows.stop - rows.start, vcols.stop - vcols.start), what=names[2])
        for ks in m.tiles(ext, b if k is None else k):
            Pik = m.load(P, rows, ks, what=names[0])
            Vkj = m.load(V, shift(ks, kv_off), vcols, what=names[1])
            if m.numeric:
                if L_i is not None:
                    Pik.data -= L_i.data[:, None]
                    m.xp.exp(Pik.data, out=Pik.data)  # exp(S − L) = diag(d)⁻¹A, in place
                Oij.data += Pik.data @ Vkj.data
            m.work("pv", Oij.words * (ks.stop - ks.start))
            m.free(Pik, Vkj)
        m.store(Oij, O, shift(rows, q_off), vcols)
        m.free(Oij)
