"""Approximate attention by the polynomial method (Alman–Song), with near-linear I/O. **Derived here**
(docs/approx.md): the seed paper (Papp, Sobczyk & Zouzias, arXiv 2605.23751) is known only by its abstract.

The computation: with φ the feature map of :mod:`attnio.algorithms.poly_features` (rank r = C(d+g, g)),
U₁ = φ(Q), U₂ = φ(K) (N×r), S = U₂ᵀV (r×d), s = U₂ᵀ1 (r), and O = diag(U₁s)⁻¹·U₁S. The N×N matrix is never
formed. Guarantee (docs/approx.md, Theorem 1): for |Q|, |K|, |V| entries ≤ B (so |logits| ≤ β = scale·d·B²),
or for logits bounded by a given β (checked by Cauchy–Schwarz) and |V| ≤ B, every entry of O is within ε of
exact attention, ε/2 from the polynomial and ε/2 left to float64 rounding (checked before a numeric run).

Three schedules on the two-level machine; exact counts in :mod:`attnio.bounds.approx`:

``stream`` (M ≥ r(d+2) + 2d)::

    S ← 0 (r×d), s ← 0 (r) in fast memory, resident throughout
    for j in 1..⌈N/b⌉: load K_j, V_j (b×d each); F = φ(K_j) (b×r); S += FᵀV_j; s += Fᵀ1
    for i in 1..⌈N/b⌉: load Q_i; F = φ(Q_i); free Q_i; Y = F S, z = F s; O_i = Y/z; write O_i

  reads 3Nd, writes Nd: exactly the trivial bound 4Nd.

``chunked`` (M ≥ 3d + 3)::

    for each feature chunk C (c ≤ c_max features, T_f = ⌈r/c_max⌉ chunks):
        S_C ← 0 (c×d), s_C ← 0 (c)
        for j in 1..⌈N/b₁⌉: load K_j, V_j; F = φ_C(K_j) (b₁×c); S_C += FᵀV_j; s_C += Fᵀ1
        write S_C, s_C
    for each query block i (b ≤ b_max = ⌊(M − 1)/(d + 3)⌋ rows, T_q = ⌈N/b_max⌉ blocks):
        load Q_i; z ← 0 (b)
        for each feature chunk C' (c₂ features): load s_C'; F = φ_C'(Q_i); z += F s_C'
        for each column c of O: y ← 0 (b)
            for each feature chunk C': load S_C',c; F = φ_C'(Q_i); y += F S_C',c
            O_i,c = y/z; write O_i,c

  reads 2Nd·T_f + Nd + T_q·r(d+1), writes r(d+1) + Nd. Phase 2 reads every value of [S | s] once per query
  block whatever the column order; one column of Y at a time lets a block hold b = ⌊(M − 1)/(d + 3)⌋ rows (its
  rows, z and y: b(d + 2) words, plus a chunk and its features), not ⌊(M − d − 1)/(2d + 2)⌋ with all of Y.

``tiled`` (M ≥ max(d+1, 5)), tiles of width w = min(d, ⌊√M⌋ − 1)::

    A: for each row block: load X_j; for each feature chunk: F = φ(X_j)_chunk; write F → U   (X = K, then Q)
    B: for each feature block α (t_B rows of S), column block c (w columns):
           S_αc ← 0 (t_B×w) [and s_α ← 0 if c is the first]; for j in 1..N: load U₂[j, α], V[j, c]; accumulate
           write S_αc [and s_α]
    C: for each row block i (b rows): z ← 0 (b)
           for each column block c: Y ← 0 (b×w)
               for each feature chunk α: load U₁[i, α], S[α, c] [and s[α] if c is the first]; accumulate
               O_ic = Y/z; write O_ic

  reads 2Nd + 2Nr·T_c + Nd·T_a + T_r·r(d+1), writes 2Nr + r(d+1) + Nd.

What is free (docs/approx.md §4.0): loop indices and scalars, the g+1 coefficients of P and the feature-map
index tables (each entry is a function of the loop index α, computable in O(1) registers).

Worked count (stream), N=8, d=2, g=2 (r = 6), M = 6·4 + 4 = 28: b = ⌊(28 − 18)/(6 + 4)⌋ = 1.
reads = 3·8·2 = 48, writes = 16.

>>> from attnio.algorithms.run import run
>>> t = PolyTiling.build("stream", N=8, d=2, M=28, eps=0.1, B=0.5)
>>> (t.g, t.r, t.blocks)
(2, 6, {'b': 1})
>>> res = run("poly", N=8, d=2, M=28, seed=0, tiling=t)
>>> (res.measurement.reads_words, res.measurement.writes_words, res.max_abs_error <= 0.1)
(48, 16, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.poly_features import Budget, budget, features, rank
from attnio.algorithms.reference import default_scale
from attnio.bounds import approx as formulas
from attnio.core.errors import InvalidParameter, Unsupported


@dataclass(frozen=True)
class PolyTiling:
    """The polynomial (degree ``g``, shift ``h``, rank ``r``), the error budget and one schedule's blocks.

    ``blocks`` (all ints) for ``stream``: b; ``chunked``: c, b1, b2, c2; ``tiled``: bA, cA, w, tB, uB, bC, tC.
    """

    schedule: str
    g: int
    r: int
    h: float
    eps: float | None
    B: float | None
    beta: float | None
    beta_from: str
    delta: float | None
    blocks: dict[str, int] = field(default_factory=dict)

    # -- construction -------------------------------------------------------------------------------

    @staticmethod
    def min_M(N: int, d: int, dv: int | None = None) -> int:
        """The least M any schedule runs with (tiled: M ≥ max(d + 1, 5))."""
        return max(d + 1, 5)

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None, *, params: dict[str, Any] | None = None) -> PolyTiling:
        """Choose g from ε and the bound, then the schedule with the least exact I/O (``attnio.bounds.approx``)."""
        params = dict(params or {})
        if "eps" not in params:
            raise InvalidParameter("eps", None, "0 < eps < 1: poly is approximate and needs an error target")
        b = budget(params["eps"], params.get("B"), d, default_scale(d, None), params.get("beta"))
        return cls._with_budget(params.get("schedule", "auto"), N, d, M, b)

    @classmethod
    def build(cls, schedule: str, *, N: int, d: int, M: int, eps: float, B: float, beta: float | None = None) -> PolyTiling:
        """A tiling for a named schedule (``stream``, ``chunked``, ``tiled`` or ``auto``)."""
        return cls._with_budget(schedule, N, d, M, budget(eps, B, d, default_scale(d, None), beta))

    @classmethod
    def for_degree(cls, schedule: str, *, N: int, d: int, M: int, g: int, h: float = 0.0) -> PolyTiling:
        """A tiling for a given degree, with no error budget (count-only studies and benchmarks)."""
        t = cls(schedule, g, rank(d, g), h, None, None, None, "none", None)
        return t._blocked(N, d, M)

    @classmethod
    def _with_budget(cls, schedule: str, N: int, d: int, M: int, b: Budget) -> PolyTiling:
        t = cls(schedule, b.g, rank(d, b.g), b.h, b.eps, b.B_v, b.beta, b.beta_from, b.delta)
        return t._blocked(N, d, M)

    def _blocked(self, N: int, d: int, M: int) -> PolyTiling:
        r = self.r
        schedule = self.schedule
        if schedule == "auto":
            schedule, _ = formulas.best_schedule(N=N, d=d, M=M, r=r)
        if schedule not in formulas.SCHEDULES:
            raise InvalidParameter("schedule", schedule, "one of auto, " + ", ".join(formulas.SCHEDULES))
        need = {"stream": r * (d + 2) + 2 * d, "chunked": 3 * d + 3, "tiled": max(d + 1, 5)}[schedule]
        if M < need:
            raise InvalidParameter("M", M, f"M >= {need} for poly schedule {schedule} (d={d}, r={r})")
        blocks = {"stream": _stream_blocks, "chunked": _chunked_blocks, "tiled": _tiled_blocks}[schedule](N, d, M, r)
        return replace(self, schedule=schedule, blocks=blocks)

    # -- inputs -------------------------------------------------------------------------------------

    def prepare_inputs(self, Q: Any, K: Any, V: Any, seed: int | None, N: int, d: int, xp: Any) -> tuple[Any, Any, Any]:
        """Random inputs uniform in [−B, B] when none are given; given inputs are checked against the promise."""
        if self.B is None:
            raise InvalidParameter("B", None, "B > 0 (a tiling built by for_degree has no error budget: count-only)")
        if Q is None:
            rng = np.random.default_rng(seed)
            Q, K, V = (xp.asarray(rng.uniform(-self.B, self.B, (N, d))) for _ in range(3))
            if self.beta_from == "beta":  # scale rows so that the logit promise holds too
                s = 1.0 / math.sqrt(d)
                nq, nk = float(xp.max(xp.linalg.norm(Q, axis=1))), float(xp.max(xp.linalg.norm(K, axis=1)))
                if s * nq * nk > self.beta:
                    f = math.sqrt(self.beta / (s * nq * nk)) * (1 - 1e-12)
                    Q, K = Q * f, K * f
        self.check_inputs(Q, K, V)
        return Q, K, V

    def check_inputs(self, Q: Any, K: Any, V: Any) -> None:
        """InvalidParameter when inputs break the promise the guarantee rests on."""
        xp_max = lambda X: float(abs(X).max()) if X.size else 0.0  # noqa: E731
        if self.beta_from == "B":
            for name, X in (("Q", Q), ("K", K), ("V", V)):
                if xp_max(X) > self.B:
                    raise InvalidParameter(name, f"<array with max |entry| {xp_max(X):.6g}>", f"entries in [−B, B] = [−{self.B:g}, {self.B:g}]")
        else:
            if xp_max(V) > self.B:
                raise InvalidParameter("V", f"<array with max |entry| {xp_max(V):.6g}>", f"entries in [−B, B] = [−{self.B:g}, {self.B:g}]")
            s = 1.0 / math.sqrt(Q.shape[1])
            nq = float(np.max(np.linalg.norm(np.asarray(Q), axis=1)))
            nk = float(np.max(np.linalg.norm(np.asarray(K), axis=1)))
            if s * nq * nk > self.beta:
                raise InvalidParameter(
                    "Q, K", f"<arrays with scale·max‖q‖·max‖k‖ = {s * nq * nk:.6g}>", f"scale·max‖q‖·max‖k‖ ≤ beta = {self.beta:g}"
                )

    def rounding_check(self, N: int, d: int) -> None:
        """Unsupported when float64 cannot deliver the ε/2 left for rounding (docs/approx.md, Lemma 3)."""
        if self.eps is None:
            return
        b = Budget(self.eps, self.B, self.beta, self.beta_from, 0.0, self.g, self.delta, self.h)
        bound = b.rounding_bound(N, self.r)
        if bound > self.eps / 2:
            raise Unsupported(
                f"eps={self.eps:g} is below what float64 guarantees here: the rounding bound is {bound:.3g} > eps/2 "
                f"(β={self.beta:g}, N={N}, r={self.r}); use a larger eps or a smaller B"
            )


# -- block rules (independent of bounds.approx; tests check the counts agree) -----------------------------


def _stream_blocks(N: int, d: int, M: int, r: int) -> dict[str, int]:
    b = min(N, (M - r * (d + 1)) // (r + 2 * d))
    assert b >= 1
    return {"b": b}


def _chunked_blocks(N: int, d: int, M: int, r: int) -> dict[str, int]:
    c_max = (M - 2 * d) // (d + 2)
    T_f = -(-r // min(c_max, r))
    c = -(-r // T_f)  # same T_f, spare space to the row block
    b1 = min(N, (M - c * (d + 1)) // (2 * d + c))
    b_max = (M - 1) // (d + 3)  # phase 2 with c₂ = 1: b(d + 2) + (1 + b) ≤ M
    T_q = -(-N // min(b_max, N))
    b2 = -(-N // T_q)
    c2 = min(r, (M - b2 * (d + 2)) // (b2 + 1))
    assert min(c, b1, b2, c2) >= 1
    return {"c": c, "b1": b1, "b2": b2, "c2": c2}


def _tiled_blocks(N: int, d: int, M: int, r: int) -> dict[str, int]:
    cA = min(r, M - d)
    bA = min(N, M // (d + cA))
    w = min(d, math.isqrt(M) - 1)
    tB = min(r, (M - w) // (w + 2))
    uB = min(N, max(1, (M - tB * w - tB) // (tB + w)))
    b_max = (M - w - 1) // (w + 2)
    T_r = -(-N // min(b_max, N))
    bC = -(-N // T_r)
    tC = min(r, (M - bC * (w + 1)) // (bC + w + 1))
    assert min(cA, bA, w, tB, uB, bC, tC) >= 1
    return {"bA": bA, "cA": cA, "w": w, "tB": tB, "uB": uB, "bC": bC, "tC": tC}


# -- schedules ---------------------------------------------------------------------------------------


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: PolyTiling, scale: float) -> SlowArray:
    N, d = Q.shape
    if V.shape[1] != d:
        raise Unsupported("poly needs d_v = d")
    if not math.isclose(scale, default_scale(d, None), rel_tol=1e-12):
        raise Unsupported("poly chose its polynomial for scale 1/√d; other scales are not supported")
    phi = None
    if m.numeric:
        t.rounding_check(N, d)
        phi = features(d, t.g, t.h, scale)
    return {"stream": _stream, "chunked": _chunked, "tiled": _tiled}[t.schedule](m, Q, K, V, t, phi)


def _stream(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: PolyTiling, phi: Any) -> SlowArray:
    N, d = Q.shape
    r, b = t.r, t.blocks["b"]
    O = m.slow("O", (N, d), role="output")
    S = m.alloc((r, d), what="S")  # U₂ᵀV, resident for the whole run
    s = m.alloc((r,), what="s")  # U₂ᵀ1
    for rows in m.tiles(N, b):
        br = rows.stop - rows.start
        Kj = m.load(K, rows, what="K_j")  # b·d reads
        Vj = m.load(V, rows, what="V_j")  # b·d reads
        F = m.alloc((br, r), what="φ(K_j)", fill=None)
        if m.numeric:
            phi.fill(Kj.data, F.data)
            S.data += F.data.T @ Vj.data
            s.data += F.data.sum(axis=0)
        m.work("features", br * r)
        m.work("sv", br * r * d)
        m.free(Kj, Vj, F)
    for rows in m.tiles(N, b):
        br = rows.stop - rows.start
        Qi = m.load(Q, rows, what="Q_i")  # b·d reads
        F = m.alloc((br, r), what="φ(Q_i)", fill=None)
        if m.numeric:
            phi.fill(Qi.data, F.data)
        m.free(Qi)
        Y = m.alloc((br, d), what="Y_i", fill=None)
        z = m.alloc((br,), what="z_i", fill=None)
        if m.numeric:
            np.matmul(F.data, S.data, out=Y.data)
            np.matmul(F.data, s.data, out=z.data)
            Y.data /= z.data[:, None]
        m.work("ys", br * r * (d + 1))
        m.store(Y, O, rows)  # b·d writes
        m.free(F, Y, z)
    m.free(S, s)
    return O


def _chunked(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: PolyTiling, phi: Any) -> SlowArray:
    N, d = Q.shape
    r = t.r
    c, b1, b2, c2 = (t.blocks[k] for k in ("c", "b1", "b2", "c2"))
    O = m.slow("O", (N, d), role="output")
    Ss = m.slow("S", (r, d))  # U₂ᵀV, written once per chunk
    ss = m.slow("s", (r,))  # U₂ᵀ1
    # phase 1: feature chunks outer, K and V streamed once per chunk
    for feats in m.tiles(r, c):
        fc = feats.stop - feats.start
        Sc = m.alloc((fc, d), what="S_C")
        sc = m.alloc((fc,), what="s_C")
        for rows in m.tiles(N, b1):
            br = rows.stop - rows.start
            Kj = m.load(K, rows, what="K_j")  # b₁·d reads
            Vj = m.load(V, rows, what="V_j")  # b₁·d reads
            F = m.alloc((br, fc), what="φ_C(K_j)", fill=None)
            if m.numeric:
                phi.fill(Kj.data, F.data, feats.start)
                Sc.data += F.data.T @ Vj.data
                sc.data += F.data.sum(axis=0)
            m.work("sv", br * fc * d)
            m.free(Kj, Vj, F)
        m.store(Sc, Ss, feats)  # c·d writes
        m.store(sc, ss, feats)  # c writes
        m.free(Sc, sc)
    # phase 2: query blocks outer; z = U₁s first, then one column of Y at a time: [S | s] streamed once per block
    for rows in m.tiles(N, b2):
        br = rows.stop - rows.start
        Qi = m.load(Q, rows, what="Q_i")  # b₂·d reads
        z = m.alloc((br,), what="z_i")
        for feats in m.tiles(r, c2):
            sc = m.load(ss, feats, what="s_C")  # c₂ reads
            F = _query_features(m, phi, Qi, feats)
            if m.numeric:
                z.data += F.data @ sc.data
            m.free(sc, F)
        for cols in m.tiles(d, 1):
            y = m.alloc((br, 1), what="Y_ic")
            for feats in m.tiles(r, c2):
                Sc = m.load(Ss, feats, cols, what="S_Cc")  # c₂ reads
                F = _query_features(m, phi, Qi, feats)
                if m.numeric:
                    y.data += F.data @ Sc.data
                m.free(Sc, F)
            if m.numeric:
                y.data /= z.data[:, None]
            m.store(y, O, rows, cols)  # b₂ writes
            m.free(y)
        m.free(Qi, z)
    return O


def _query_features(m: Machine, phi: Any, Qi: Any, feats: slice) -> Any:
    """F = φ_C(Q_i) for the feature chunk ``feats`` (b × c words, counted), recomputed from the resident rows; its
    b·c products with one column of [S | s] are recorded as work."""
    br, fc = Qi.shape[0], feats.stop - feats.start
    F = m.alloc((br, fc), what="φ_C(Q_i)", fill=None)
    if m.numeric:
        phi.fill(Qi.data, F.data, feats.start)
    m.work("ys", br * fc)
    return F


def _tiled(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: PolyTiling, phi: Any) -> SlowArray:
    N, d = Q.shape
    r = t.r
    bA, cA, w, tB, uB, bC, tC = (t.blocks[k] for k in ("bA", "cA", "w", "tB", "uB", "bC", "tC"))
    O = m.slow("O", (N, d), role="output")
    U1 = m.slow("U1", (N, r))
    U2 = m.slow("U2", (N, r))
    Ss = m.slow("S", (r, d))
    ss = m.slow("s", (r,))
    # phase A: materialise the features (X read once, U written once)
    for X, U, name in ((K, U2, "K"), (Q, U1, "Q")):
        for rows in m.tiles(N, bA):
            br = rows.stop - rows.start
            Xj = m.load(X, rows, what=f"{name}_j")  # b_A·d reads
            for feats in m.tiles(r, cA):
                F = m.alloc((br, feats.stop - feats.start), what=f"φ({name}_j)", fill=None)
                if m.numeric:
                    phi.fill(Xj.data, F.data, feats.start)
                m.store(F, U, rows, feats)  # b_A·c_A writes
                m.free(F)
            m.free(Xj)
    # phase B: [S | s] = U₂ᵀ[V | 1], output tiles t_B×w stationary, rows of U₂ and V streamed
    for feats in m.tiles(r, tB):
        fb = feats.stop - feats.start
        for cols, first in _column_blocks(m, d, w):
            Sa = m.alloc((fb, cols.stop - cols.start), what="S_αc")
            sa = m.alloc((fb,), what="s_α") if first else None
            for rows in m.tiles(N, uB):
                Ut = m.load(U2, rows, feats, what="U2_tile")  # u·t_B reads
                Vt = m.load(V, rows, cols, what="V_tile")  # u·w reads
                if m.numeric:
                    Sa.data += Ut.data.T @ Vt.data
                    if first:
                        sa.data += Ut.data.sum(axis=0)
                m.free(Ut, Vt)
            m.store(Sa, Ss, feats, cols)  # t_B·w writes
            m.free(Sa)
            if first:
                m.store(sa, ss, feats)  # t_B writes
                m.free(sa)
    # phase C: [Y | z] = U₁·[S | s], output tiles b×w stationary, z kept for the whole row block
    for rows in m.tiles(N, bC):
        br = rows.stop - rows.start
        z = m.alloc((br,), what="z_i")
        for cols, first in _column_blocks(m, d, w):
            Y = m.alloc((br, cols.stop - cols.start), what="Y_ic")
            for feats in m.tiles(r, tC):
                Ut = m.load(U1, rows, feats, what="U1_tile")  # b·t_C reads
                St = m.load(Ss, feats, cols, what="S_tile")  # t_C·w reads
                st = m.load(ss, feats, what="s_tile") if first else None  # t_C reads, first column block only
                if m.numeric:
                    Y.data += Ut.data @ St.data
                    if first:
                        z.data += Ut.data @ st.data
                m.free(Ut, St)
                if first:
                    m.free(st)
            if m.numeric:
                Y.data /= z.data[:, None]
            m.store(Y, O, rows, cols)  # b·w writes
            m.free(Y)
        m.free(z)
    return O


def _column_blocks(m: Machine, d: int, w: int):
    """Column blocks of width w, the first one apart (it also carries s = U₂ᵀ1 / z = U₁s): count-only mode
    compresses equal tiles into one representative, so the first block must not share a loop with the rest."""
    w0 = min(w, d)
    yield slice(0, w0), True
    for c in m.tiles(d - w0, w):
        yield slice(c.start + w0, c.stop + w0), False


# -- where the approximation stops paying: bounds.approx.crossover_B (pure formulas), re-exported here ------

crossover_B = formulas.crossover_B
