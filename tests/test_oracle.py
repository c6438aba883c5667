"""External oracle: every exact algorithm against torch.nn.functional.scaled_dot_product_attention on CPU in
float64 (an implementation attnio did not write). Skipped without torch (extra ``oracle``).

Error measure: max|O − O_torch| / max|O_torch| ≤ 1e-10.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms import registry
from attnio.algorithms.run import run

EXACT = ["flash2", "flash2-square", "flash1", "flash1-fit", "standard", "square_tiling", "square_tiling-io", "kv_stationary", "split_v", "auto"]

pytestmark = pytest.mark.oracle


def torch_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float | None = None) -> np.ndarray:
    import torch

    q, k, v = (torch.from_numpy(x).to(torch.float64)[None, None] for x in (Q, K, V))
    with torch.no_grad():
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale)
    return out[0, 0].numpy()


def rel_err(out: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(out - ref)) / max(float(np.max(np.abs(ref))), 1e-300))


@pytest.mark.parametrize("name", EXACT)
@settings(max_examples=20)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(1, 16), st.integers(0, 200), st.integers(0, 2**32 - 1))
def test_matches_torch_sdpa_float64(name: str, N: int, d: int, dv: int, extra: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    Q, K, V = rng.standard_normal((N, d)), rng.standard_normal((N, d)), rng.standard_normal((N, dv))
    M = registry.get(name).tiling_cls.min_M(N, d, dv) + extra
    r = run(name, inputs=(Q, K, V), M=M, check=False)
    assert rel_err(np.asarray(r.output), torch_attention(Q, K, V)) <= 1e-10


@pytest.mark.parametrize("name", EXACT)
def test_matches_torch_sdpa_with_logits_of_1e4(name: str) -> None:
    rng = np.random.default_rng(11)
    N, d = 24, 8
    Q, K, V = rng.standard_normal((N, d)), rng.standard_normal((N, d)), rng.standard_normal((N, d))
    scale = 1e4 / float(np.max(np.abs(Q @ K.T)))
    M = max(registry.get(name).tiling_cls.min_M(N, d, d), 200)
    r = run(name, inputs=(Q, K, V), M=M, scale=scale, check=False)
    ref = torch_attention(Q, K, V, scale=scale)
    assert np.all(np.isfinite(r.output)) and rel_err(np.asarray(r.output), ref) <= 1e-10
