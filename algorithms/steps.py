"""The numeric steps of the schedules, as small pure functions on fast-memory buffers (in place).

A schedule reads as its I/O skeleton (load, alloc, store, free) with one ``if m.numeric: step(...)`` per step;
the arithmetic, its buffer reuse and its backend quirks live here. Names are the papers'. Each function only
computes: it moves no word, so it changes no count.

>>> import numpy as np
>>> S = np.zeros((1, 2)); m_i = np.array([-np.inf]); l_i = np.zeros(1); O_i = np.zeros((1, 1)); m_new = np.zeros(1)
>>> fa2_rescale(S, m_i, l_i, O_i, m_new, np); fa2_accumulate(O_i, S, np.array([[1.0], [3.0]]), m_i, m_new)
>>> fa2_finish(O_i, m_i, l_i, np); O_i.tolist(), m_i.round(6).tolist()   # mean of V; L = log 2
([[2.0]], [0.693147])
"""

from __future__ import annotations

from typing import Any

import numpy as np


def scores(S: Any, Q_i: Any, K_j: Any, scale: float, xp: Any) -> None:
    """S ← scale·Q_i K_jᵀ. S may be a narrower view of its buffer (the last K/V block): CuPy's matmul wants a
    contiguous ``out``, so a view is filled by assignment."""
    if S.flags.c_contiguous:
        xp.matmul(Q_i, K_j.T, out=S)
    else:
        S[...] = Q_i @ K_j.T
    S *= scale


def fa2_rescale(S: Any, m_i: Any, l_i: Any, O_i: Any, m_new: Any, xp: Any, masked: bool = False) -> None:
    """FlashAttention-2 Algorithm 1 lines 9–10, before V_j arrives: m_new = max(m_i, rowmax S);
    P̃ = exp(S − m_new) in S's buffer; α = exp(m_i − m_new) in m_i's buffer; ℓ_i ← α·ℓ_i + rowsum P̃;
    O_i ← α·O_i. ``masked``: S may hold −∞ logits, and a row that has seen no key yet keeps m_new = −∞; it is
    shifted by 0 instead (exp(−∞ − 0) = 0, never −∞ − (−∞)), so its P̃, ℓ and O stay 0."""
    xp.maximum(m_i, S.max(axis=1), out=m_new)
    ref = xp.where(xp.isneginf(m_new), 0.0, m_new) if masked else m_new
    S -= ref[:, None]
    xp.exp(S, out=S)
    alpha = m_i
    alpha -= ref
    xp.exp(alpha, out=alpha)
    l_i *= alpha
    l_i += S.sum(axis=1)
    O_i *= alpha[:, None]


def fa2_accumulate(O_i: Any, P: Any, V_j: Any, m_i: Any, m_new: Any) -> None:
    """Line 10, once V_j is in: O_i += P̃ V_j; m_i ← m_new (α's buffer becomes m_i again)."""
    O_i += P @ V_j
    m_i[...] = m_new


def fa2_finish(O_i: Any, m_i: Any, l_i: Any, xp: Any, masked: bool = False) -> None:
    """Lines 12–13: O_i ← O_i/ℓ_i; L_i = m_i + log ℓ_i (the logsumexp FA-2 keeps for its backward), in m_i's
    buffer. ``masked``: a row that saw no key (ℓ = 0, O = 0) keeps O = 0 and gets L = −∞."""
    if masked:
        empty = l_i == 0
        l_i[empty] = 1.0  # O_i is 0 there; m_i is −∞, so L = −∞
    O_i /= l_i[:, None]
    m_i += xp.log(l_i)


def fa1_update(S: Any, V_j: Any, O_i: Any, l_i: Any, m_i: Any, m_t: Any, l_t: Any, m_new: Any, l_new: Any, xp: Any) -> None:
    """FlashAttention Algorithm 1 lines 10–12 on the logits S: m̃ = rowmax S; P̃ = exp(S − m̃) in S's buffer;
    ℓ̃ = rowsum P̃; m_new = max(m_i, m̃); ℓ_new = e^{m_i − m_new}ℓ_i + e^{m̃ − m_new}ℓ̃;
    O_i ← diag(ℓ_new)⁻¹(diag(ℓ_i)e^{m_i − m_new}O_i + e^{m̃ − m_new}P̃ V_j) (e^{m_i − m_new} = 0 while m_i = −∞)."""
    S.max(axis=1, out=m_t)
    S -= m_t[:, None]
    xp.exp(S, out=S)
    S.sum(axis=1, out=l_t)
    xp.maximum(m_i, m_t, out=m_new)
    a_old = xp.exp(m_i - m_new)
    a_new = xp.exp(m_t - m_new)
    l_new[...] = a_old * l_i + a_new * l_t
    O_i *= (l_i * a_old)[:, None]
    O_i += a_new[:, None] * (S @ V_j)
    O_i /= l_new[:, None]


def bwd_tile(P: Any, dS: Any, Q_i: Any, K_j: Any, V_j: Any, dO_i: Any, D_i: Any, dQ_i: Any, dK_j: Any, dV_j: Any,
             scale: float, xp: Any) -> None:
    """One tile of the FlashAttention backward, given the probabilities P_ij (FlashAttention-2 Algorithm 2
    lines 12–16; FlashAttention Algorithm 4 lines 16–21): dV_j += P_ijᵀ dO_i; dP_ij = dO_i V_jᵀ (in dS's buffer);
    dS_ij = P_ij ∘ (dP_ij − D_i), times ``scale`` (folded in for the next two); dQ_i += dS_ij K_j;
    dK_j += dS_ijᵀ Q_i."""
    dV_j += P.T @ dO_i
    bwd_dS(P, dS, dO_i, V_j, D_i, scale, xp)
    dQ_i += dS @ K_j
    dK_j += dS.T @ Q_i


def bwd_probs(P: Any, Q_i: Any, K_j: Any, L_i: Any, scale: float, xp: Any) -> None:
    """P_ij = exp(scale·Q_i K_jᵀ − L_i) in P's buffer (FlashAttention-2 Algorithm 2 lines 10–11)."""
    scores(P, Q_i, K_j, scale, xp)
    P -= L_i[:, None]
    xp.exp(P, out=P)


def bwd_dS(P: Any, dS: Any, dO_i: Any, V_j: Any, D_i: Any, scale: float, xp: Any) -> None:
    """dP_ij = dO_i V_jᵀ in dS's buffer, then dS_ij = P_ij ∘ (dP_ij − D_i), times ``scale`` (FlashAttention-2
    Algorithm 2 lines 13–14, the scale of lines 15–16 folded in)."""
    xp.matmul(dO_i, V_j.T, out=dS)
    dS -= D_i[:, None]
    dS *= P
    dS *= scale


def softmax_stats(S: Any, m_i: Any, l_i: Any, m_new: Any, xp: Any) -> None:
    """The online row max and row sum of one logits tile (standard attention's pass 2): m_new = max(m_i, rowmax S);
    exp(S − m_new) in S's buffer; ℓ_i ← e^{m_i − m_new}ℓ_i + rowsum; m_i ← m_new."""
    xp.maximum(m_i, S.max(axis=1), out=m_new)
    S -= m_new[:, None]
    xp.exp(S, out=S)
    m_i -= m_new
    l_i *= xp.exp(m_i)
    l_i += S.sum(axis=1)
    m_i[...] = m_new


def logsumexp_into(A: Any, L_i: Any, xp: Any) -> None:
    """L_i ← logaddexp(L_i, row logsumexp of the logits tile A), computed in A's own buffer (Saha–Ye's d[i] += A_ij·1,
    kept stable). A row wholly masked in this tile adds exp(−∞) = 0: no change to L_i."""
    mx = A.max(axis=1)
    mx[~xp.isfinite(mx)] = 0.0
    A -= mx[:, None]
    xp.exp(A, out=A)
    with np.errstate(divide="ignore"):  # log 0 = −∞ for a wholly masked row
        xp.logaddexp(L_i, mx + xp.log(A.sum(axis=1)), out=L_i)
