"""External oracle for the backward pass: dQ, dK, dV of every backward schedule against torch autograd through
torch.nn.functional.scaled_dot_product_attention on CPU in float64 (an implementation attnio did not write).
Skipped without torch (extra ``oracle``).

Error measure: max|X − X_torch| / max(max|X_torch|, 10⁻³·μ_X), μ_X the size of the products summed into X
(see tests/test_backward.py; the floor only matters where the exact gradient vanishes, N = 1).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms import registry
from attnio.algorithms.run import run

BACKWARD = ["flash2-bwd", "flash2-fused-bwd", "flash2-2pass-bwd", "flash2-square-bwd", "flash1-bwd", "flash1-fit-bwd", "standard-bwd",
            "square_tiling-bwd", "square_tiling-io-bwd", "auto-bwd"]

pytestmark = pytest.mark.oracle


def torch_gradients(Q, K, V, dO, scale=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import torch

    q, k, v = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (Q, K, V))
    out = torch.nn.functional.scaled_dot_product_attention(q[None, None], k[None, None], v[None, None], scale=scale)
    out[0, 0].backward(torch.from_numpy(dO).to(torch.float64))
    return q.grad.numpy(), k.grad.numpy(), v.grad.numpy()


def errors(outs, refs, Q, K, V, dO, scale) -> list[float]:
    sc = 1.0 / np.sqrt(Q.shape[1]) if scale is None else scale
    base = abs(sc) * np.max(np.abs(dO)) * np.max(np.abs(V))
    mus = (base * np.max(np.abs(K)), base * np.max(np.abs(Q)), float(np.max(np.abs(dO))))
    return [
        float(np.max(np.abs(np.asarray(x) - r)) / max(float(np.max(np.abs(r))), 1e-3 * mu, 1e-300))
        for x, r, mu in zip(outs, refs, mus, strict=True)
    ]


@pytest.mark.parametrize("name", BACKWARD)
@settings(max_examples=20)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(1, 16), st.integers(0, 200), st.integers(0, 2**32 - 1))
def test_gradients_match_torch_autograd_float64(name: str, N: int, d: int, dv: int, extra: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    Q, K, V, dO = rng.standard_normal((N, d)), rng.standard_normal((N, d)), rng.standard_normal((N, dv)), rng.standard_normal((N, dv))
    M = registry.get(name).tiling_cls.min_M(N, d, dv) + extra
    r = run(name, inputs=(Q, K, V, dO), M=M, check=False)
    assert max(errors(r.outputs, torch_gradients(Q, K, V, dO), Q, K, V, dO, None)) <= 1e-10


@pytest.mark.parametrize("name", BACKWARD)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_gradients_match_torch_autograd_with_logits_of_1e4(name: str, sign: float) -> None:
    rng = np.random.default_rng(11)
    N, d = 24, 8
    Q, K, V, dO = (rng.standard_normal((N, d)) for _ in range(4))
    scale = sign * 1e4 / float(np.max(np.abs(Q @ K.T)))
    M = max(registry.get(name).tiling_cls.min_M(N, d, d), 300)
    r = run(name, inputs=(Q, K, V, dO), M=M, scale=scale, check=False)
    assert all(np.all(np.isfinite(x)) for x in r.outputs)
    assert max(errors(r.outputs, torch_gradients(Q, K, V, dO, scale), Q, K, V, dO, scale)) <= 1e-10
