"""The float64 reference, written so plainly it is obviously right, and reused by every test.

``attention(Q, K, V, scale)`` = softmax(scale · QKᵀ) V, row-stabilised by subtracting the row max.
attnio's default scale is 1/√d (as in practice and in torch's ``scaled_dot_product_attention``);
Saha–Ye's definition is ``scale=1``. The scale changes no count.
"""

from __future__ import annotations

import math

import numpy as np

from attnio.algorithms.backend import to_numpy


def attention(Q: object, K: object, V: object, scale: float | None = None) -> np.ndarray:
    """Exact attention in float64 on the host.

    >>> import numpy as np
    >>> Q = K = np.zeros((2, 1)); V = np.array([[1.0], [3.0]])
    >>> attention(Q, K, V).tolist()
    [[2.0], [2.0]]
    """
    q, k, v = (np.asarray(to_numpy(x), dtype=np.float64) for x in (Q, K, V))
    s = (q @ k.T) * (1.0 / np.sqrt(q.shape[1]) if scale is None else scale)
    s -= s.max(axis=1, keepdims=True)
    p = np.exp(s)
    return (p @ v) / p.sum(axis=1, keepdims=True)


def default_scale(d: int, scale: float | None) -> float:
    """1/√d, or ``scale`` when given; defined for every integer d ≥ 1, Python ints beyond float range included
    (count-only runs take any size).

    >>> default_scale(4, None)
    0.5
    >>> abs(default_scale(10**400, None) / 1e-200 - 1) < 1e-12
    True
    """
    if scale is not None:
        return float(scale)
    try:
        return 1.0 / math.sqrt(d)
    except OverflowError:  # d beyond float range (count-only runs of any size): 1/√d = exp(−½·ln d)
        return math.exp(-0.5 * math.log(d))


# Backward pass --------------------------------------------------------------------------------------------


def attention_forward_saved(
    Q: object, K: object, V: object, scale: float | None = None, need: tuple[str, ...] | None = None
) -> dict[str, np.ndarray]:
    """What a forward pass leaves in slow memory for its backward, in float64 on the host: the output ``O``,
    the logsumexp ``L`` (FlashAttention-2, Saha–Ye), the row max ``m`` and the row sum ``ell`` of exp(S − m)
    (FlashAttention-1), the logits ``S`` and the probabilities ``P`` (standard attention). ``need``: the names
    wanted besides O (default all); the N×N ones are kept only when asked for.

    >>> import numpy as np
    >>> s = attention_forward_saved(np.zeros((2, 1)), np.zeros((2, 1)), np.array([[1.0], [3.0]]))
    >>> s["O"].tolist(), s["ell"].tolist(), s["m"].tolist(), s["P"].tolist()
    ([[2.0], [2.0]], [2.0, 2.0], [0.0, 0.0], [[0.5, 0.5], [0.5, 0.5]])
    """
    need = ("L", "m", "ell", "S", "P") if need is None else need
    q, k, v = (np.asarray(to_numpy(x), dtype=np.float64) for x in (Q, K, V))
    p = q @ k.T
    p *= 1.0 / np.sqrt(q.shape[1]) if scale is None else scale
    out: dict[str, np.ndarray] = {}
    if "S" in need:
        out["S"] = p.copy()
    m = p.max(axis=1)
    p -= m[:, None]
    np.exp(p, out=p)
    ell = p.sum(axis=1)
    p /= ell[:, None]
    out.update(O=p @ v, L=m + np.log(ell), m=m, ell=ell)
    if "P" in need:
        out["P"] = p
    return out


def attention_backward(
    Q: object, K: object, V: object, dO: object, scale: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The analytic gradient of O = softmax(scale·QKᵀ)V, in float64: ``(dQ, dK, dV)`` for the output gradient
    ``dO``. With P = softmax(S): dV = PᵀdO, dP = dO·Vᵀ, D = rowsum(dO ∘ O) (= rowsum(P ∘ dP)),
    dS = P ∘ (dP − D), dQ = scale·dS·K, dK = scale·dSᵀ·Q (FlashAttention, arXiv 2205.14135, Appendix B.2).

    One key, one query: softmax is constant 1, so dQ = dK = 0 and dV = dO.

    >>> import numpy as np
    >>> dQ, dK, dV = attention_backward(np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 3)), np.full((1, 3), 2.0))
    >>> dQ.tolist(), dK.tolist(), dV.tolist()
    ([[0.0, 0.0]], [[0.0, 0.0]], [[2.0, 2.0, 2.0]])
    """
    q, k, v, do = (np.asarray(to_numpy(x), dtype=np.float64) for x in (Q, K, V, dO))
    sc = 1.0 / np.sqrt(q.shape[1]) if scale is None else float(scale)
    saved = attention_forward_saved(q, k, v, sc, need=("P",))
    p, o = saved["P"], saved["O"]
    dv = p.T @ do
    dp = do @ v.T
    D = (do * o).sum(axis=1)
    ds = p * (dp - D[:, None])
    return sc * (ds @ k), sc * (ds.T @ q), dv


# Workloads (4-D: batch, heads, rows, width; K/V heads shared by groups of g query heads) -----------------


def attention4(Q: np.ndarray, K: np.ndarray, V: np.ndarray, causal: bool, scale: float | None = None,
               allowed: np.ndarray | None = None) -> np.ndarray:
    """Float64 attention of a 4-D workload, K/V heads repeated over their groups, bottom-right causal mask.
    ``allowed``: a boolean N_q × N_kv mask (pairs that are False get no weight); a row with no allowed key has a
    zero output (FlexAttention's convention).

    >>> Q = np.zeros((1, 2, 2, 1)); K = np.zeros((1, 1, 2, 1)); V = np.arange(2.0).reshape(1, 1, 2, 1)
    >>> attention4(Q, K, V, causal=True)[0, :, :, 0].tolist()   # row 0 sees key 0 only; row 1 averages
    [[0.0, 0.5], [0.0, 0.5]]
    >>> attention4(Q, K, V + 1, False, allowed=np.array([[False, False], [False, True]]))[0, 0, :, 0].tolist()
    [0.0, 2.0]
    """
    return attention4_saved(Q, K, V, causal, scale, allowed)[0]


def _probabilities(Q: np.ndarray, K: np.ndarray, causal: bool, scale: float | None, allowed: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray, int]:
    """P = softmax of the masked logits, row by row, and the logsumexp L; a row with no allowed key has P = 0 and
    L = −∞ (its max and sum are taken as 0 and 1 so that no −∞ − (−∞) or 0/0 arises)."""
    q, k = (np.asarray(x, dtype=np.float64) for x in (Q, K))
    g = q.shape[1] // k.shape[1]
    s = np.einsum("bhid,bhjd->bhij", q, np.repeat(k, g, axis=1)) * default_scale(q.shape[3], scale)
    Nq, Nkv = q.shape[2], k.shape[2]
    if causal:
        s[..., np.arange(Nkv)[None, :] > np.arange(Nq)[:, None] + (Nkv - Nq)] = -np.inf
    if allowed is not None:
        s[..., ~np.asarray(allowed, dtype=bool)] = -np.inf
    mx = s.max(axis=-1, keepdims=True)
    none = np.isneginf(mx)
    p = np.exp(s - np.where(none, 0.0, mx))
    ell = p.sum(axis=-1, keepdims=True)
    p /= np.where(none, 1.0, ell)
    with np.errstate(divide="ignore"):
        L = np.where(none, -np.inf, mx + np.log(np.where(none, 1.0, ell)))[..., 0]
    return p, L, g


def attention4_saved(Q: np.ndarray, K: np.ndarray, V: np.ndarray, causal: bool, scale: float | None = None,
                     allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Float64 O (batch, H, N_q, d_v) and logsumexp L (batch, H, N_q) of a 4-D workload (K/V heads repeated);
    the plain one-head case is batch = H = 1. ``allowed``: as :func:`attention4` (L = −∞ on a row with no key)."""
    p, L, g = _probabilities(Q, K, causal, scale, allowed)
    O = np.einsum("bhij,bhjd->bhid", p, np.repeat(np.asarray(V, dtype=np.float64), g, axis=1))
    return O, L


def attention4_backward(Q: np.ndarray, K: np.ndarray, V: np.ndarray, dO: np.ndarray, causal: bool,
                       scale: float | None = None, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Float64 (dQ, dK, dV) of a 4-D workload: dK, dV of a K/V head are the sums over its g query heads.
    ``allowed``: as :func:`attention4`; a row with no allowed key (output constant 0) has zero gradients.

    One query head on one key: softmax is 1, so dQ = dK = 0 and dV = dO; two heads sharing it: dV = dO₁ + dO₂.

    >>> z = np.zeros((1, 2, 1, 1)); dO = np.array([1.0, 2.0]).reshape(1, 2, 1, 1)
    >>> [x.ravel().tolist() for x in attention4_backward(z, z[:, :1], z[:, :1], dO, causal=True)]
    [[0.0, 0.0], [0.0], [3.0]]
    """
    p, _, g = _probabilities(Q, K, causal, scale, allowed)
    sc = default_scale(np.shape(Q)[3], scale)
    q, k, v, do = (np.asarray(x, dtype=np.float64) for x in (Q, K, V, dO))
    kr, vr = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    o = np.einsum("bhij,bhjd->bhid", p, vr)
    dv = np.einsum("bhij,bhid->bhjd", p, do)
    dp = np.einsum("bhid,bhjd->bhij", do, vr)
    ds = p * (dp - (do * o).sum(axis=-1)[..., None])
    dq = sc * np.einsum("bhij,bhjd->bhid", ds, kr)
    dk = sc * np.einsum("bhij,bhid->bhjd", ds, q)
    B, Hk = k.shape[0], k.shape[1]
    return dq, dk.reshape(B, Hk, g, *dk.shape[2:]).sum(axis=2), dv.reshape(B, Hk, g, *dv.shape[2:]).sum(axis=2)


def rel_error(x: np.ndarray, ref: np.ndarray) -> float:
    """max|x − ref| / max|ref|; the absolute error where ref is all zero (dQ = dK = 0 with one key)."""
    scale_ = float(np.max(np.abs(ref))) if ref.size else 0.0
    err = float(np.max(np.abs(x - ref))) if ref.size else 0.0
    return err / scale_ if scale_ > 1e-12 else err
