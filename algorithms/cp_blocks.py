"""The local arithmetic of context parallelism, on one rank: attention of local query rows against one block of
key rows with global positions (a partial output and its logsumexp), the merge of two partials, and the gradients
of one block given the final logsumexp. 4-D arrays (batch, heads, rows, width); K/V heads shared by groups of
g = H / H_kv query heads; causal means key position ≤ query position.

>>> import numpy as np
>>> q = np.zeros((1, 1, 2, 1)); k = np.zeros((1, 1, 2, 1)); v = np.array([1.0, 3.0]).reshape(1, 1, 2, 1)
>>> o, l = attend(q, k, v, np.array([0, 1]), np.array([0, 1]), causal=True, scale=1.0)
>>> o.ravel().tolist(), np.round(np.exp(l.ravel()), 6).tolist()
([1.0, 2.0], [1.0, 2.0])
>>> o1, l1 = attend(q, k[:, :, :1], v[:, :, :1], np.array([0, 1]), np.array([0]), True, 1.0)
>>> o2, l2 = attend(q, k[:, :, 1:], v[:, :, 1:], np.array([0, 1]), np.array([1]), True, 1.0)
>>> merge(o1, l1, o2, l2)[0].ravel().tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import numpy as np


def _logits(q: np.ndarray, k: np.ndarray, qpos: np.ndarray, kpos: np.ndarray, causal: bool, scale: float) -> np.ndarray:
    g = q.shape[1] // k.shape[1]
    s = np.einsum("bhid,bhjd->bhij", q, np.repeat(k, g, axis=1)) * scale
    if causal:
        s[..., np.asarray(kpos)[None, :] > np.asarray(qpos)[:, None]] = -np.inf
    return s


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, qpos: np.ndarray, kpos: np.ndarray, causal: bool,
           scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(O, L): the softmax-weighted V over this block's allowed keys and the logsumexp of the allowed logits; a row
    that sees no key of the block has O = 0 and L = −∞."""
    s = _logits(q, k, qpos, kpos, causal, scale)
    mx = s.max(axis=-1, keepdims=True)
    none = np.isneginf(mx)
    p = np.exp(s - np.where(none, 0.0, mx))
    ell = p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhij,bhjd->bhid", p, np.repeat(v, q.shape[1] // v.shape[1], axis=1)) / np.where(none, 1.0, ell)
    with np.errstate(divide="ignore"):
        lse = np.where(none, -np.inf, mx + np.log(np.where(none, 1.0, ell)))[..., 0]
    return o, lse


def merge(o1: np.ndarray, l1: np.ndarray, o2: np.ndarray, l2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two partials over disjoint key sets combined: L = log(e^L₁ + e^L₂), O = e^(L₁−L)·O₁ + e^(L₂−L)·O₂."""
    lse = np.logaddexp(l1, l2)
    dead = np.isneginf(lse)
    safe = np.where(dead, 0.0, lse)
    w1 = np.where(dead, 0.0, np.exp(l1 - safe))[..., None]
    w2 = np.where(dead, 0.0, np.exp(l2 - safe))[..., None]
    return w1 * o1 + w2 * o2, lse


def grads(q: np.ndarray, k: np.ndarray, v: np.ndarray, do: np.ndarray, lse: np.ndarray, D: np.ndarray,
          qpos: np.ndarray, kpos: np.ndarray, causal: bool, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """This block's share of (dQ, dK, dV), given the final logsumexp ``lse`` and D = rowsum(dO ∘ O): P = e^(S − L),
    dV = Pᵀ dO, dS = P ∘ (dO Vᵀ − D), dQ = scale·dS K, dK = scale·dSᵀ Q; dK, dV summed over each K/V head's group."""
    g = q.shape[1] // k.shape[1]
    s = _logits(q, k, qpos, kpos, causal, scale)
    p = np.exp(s - np.where(np.isneginf(lse), np.inf, lse)[..., None])
    vr = np.repeat(v, g, axis=1)
    dv = np.einsum("bhij,bhid->bhjd", p, do)
    ds = p * (np.einsum("bhid,bhjd->bhij", do, vr) - D[..., None])
    dq = scale * np.einsum("bhij,bhjd->bhid", ds, np.repeat(k, g, axis=1))
    dk = scale * np.einsum("bhij,bhid->bhjd", ds, q)
    b, hk = k.shape[0], k.shape[1]
    return dq, dk.reshape(b, hk, g, *dk.shape[2:]).sum(axis=2), dv.reshape(b, hk, g, *dv.shape[2:]).sum(axis=2)
