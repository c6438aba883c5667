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


def compulsory_io_words(N: int, d: int, dv: int | None = None) -> int:
    """Words every exact algorithm must move: read Q, K (N·d each) and V (N·dv), write O (N·dv)."""
    dv = d if dv is None else dv
    return 2 * N * d + 2 * N * dv
