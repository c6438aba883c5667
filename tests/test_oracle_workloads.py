"""External oracle for workloads: causal masks and grouped K/V heads against torch's
scaled_dot_product_attention on CPU in float64 (``is_causal``, ``enable_gqa``, or an explicit bottom-right mask
where N_q < N_kv, since torch's ``is_causal`` is top-left aligned). Skipped without torch (extra ``oracle``).

Error measure: max|O − O_torch| / max|O_torch| ≤ 1e-10.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms import registry
from attnio.algorithms.reference import rel_error
from attnio.algorithms.run import random_inputs, run
from attnio.core.workload import Workload

pytestmark = pytest.mark.oracle
SCHEDULES = [(a, s) for s in registry.SCHEDULES for a in registry.with_schedule(s)]


def _has_enable_gqa() -> bool:
    import torch
    import torch.nn.functional as F

    z = torch.zeros(1, 2, 1, 1, dtype=torch.float64)
    try:
        F.scaled_dot_product_attention(z, z[:, :1], z[:, :1], enable_gqa=True)
        return True
    except TypeError:
        return False


def torch_workload(Q: np.ndarray, K: np.ndarray, V: np.ndarray, causal: bool) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    q, k, v = (torch.from_numpy(x).to(torch.float64) for x in (Q, K, V))
    Nq, Nkv = q.shape[2], k.shape[2]
    kw: dict = {}
    if _has_enable_gqa():
        kw["enable_gqa"] = True
    else:  # torch < 2.5: repeat the K/V heads by hand
        g = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    if causal and Nq == Nkv:
        kw["is_causal"] = True
    elif causal:  # bottom-right: query i sees keys j ≤ i + Nkv − Nq
        kw["attn_mask"] = torch.ones(Nq, Nkv, dtype=torch.bool).tril(diagonal=Nkv - Nq)
    with torch.no_grad():
        return F.scaled_dot_product_attention(q, k, v, **kw).numpy()


@pytest.mark.parametrize(("name", "schedule"), SCHEDULES)
@settings(max_examples=20)
@given(
    st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 24), st.integers(0, 24),
    st.integers(1, 8), st.booleans(), st.integers(0, 300), st.integers(0, 2**32 - 1),
)
def test_workloads_match_torch_sdpa_float64(name, schedule, batch, kv, g, Nq, extra_kv, d, causal, extra_M, seed) -> None:
    Nkv = Nq + extra_kv
    lo = {"flash2": 3 * d + 4 + (g if schedule == "grouped" else 1) * (2 * d + 4), "flash1-fit": 4 * d + 7}.get(name, 4)
    w = Workload.build(batch=batch, heads=kv * g, kv_heads=kv, Nq=Nq, Nkv=Nkv, d=d, causal=causal, M=lo + extra_M)
    Q, K, V = random_inputs(w, seed)
    r = run(name, w, schedule=schedule, inputs=(Q, K, V), check=False)
    ref = torch_workload(Q, K, V, causal)
    assert float(np.max(np.abs(r.output - ref)) / np.max(np.abs(ref))) <= 1e-10


def test_torch_is_causal_is_top_left_so_the_oracle_builds_the_bottom_right_mask() -> None:
    """Guard on the oracle itself: with N_q < N_kv torch's is_causal differs from attnio's convention."""
    import torch
    import torch.nn.functional as F

    w = Workload.build(Nq=3, Nkv=7, d=2, M=100, causal=True)
    Q, K, V = random_inputs(w, 0)
    q, k, v = (torch.from_numpy(x) for x in (Q, K, V))
    top_left = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    ours = run("flash2", w, schedule="per-head", inputs=(Q, K, V)).output
    assert not np.allclose(ours, top_left)
    assert np.allclose(ours, torch_workload(Q, K, V, True), rtol=0, atol=1e-12)


def torch_workload_backward(Q: np.ndarray, K: np.ndarray, V: np.ndarray, dO: np.ndarray, causal: bool) -> tuple[np.ndarray, ...]:
    """dQ, dK, dV by torch autograd through scaled_dot_product_attention in float64 (enable_gqa where torch has it,
    else K/V repeated by hand, whose autograd sums the repeated heads' gradients; bottom-right mask as above)."""
    import torch
    import torch.nn.functional as F

    q, k, v = (torch.from_numpy(x).to(torch.float64).requires_grad_(True) for x in (Q, K, V))
    Nq, Nkv = q.shape[2], k.shape[2]
    kw: dict = {}
    kk, vv = k, v
    if _has_enable_gqa():
        kw["enable_gqa"] = True
    else:
        g = q.shape[1] // k.shape[1]
        kk, vv = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    if causal and Nq == Nkv:
        kw["is_causal"] = True
    elif causal:
        kw["attn_mask"] = torch.ones(Nq, Nkv, dtype=torch.bool).tril(diagonal=Nkv - Nq)
    out = F.scaled_dot_product_attention(q, kk, vv, **kw)
    out.backward(torch.from_numpy(dO).to(torch.float64))
    return q.grad.numpy(), k.grad.numpy(), v.grad.numpy()


@pytest.mark.parametrize("schedule", ["per-head", "grouped"])
@settings(max_examples=20)
@given(
    st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 16), st.integers(0, 16),
    st.integers(1, 6), st.booleans(), st.integers(0, 300), st.integers(0, 2**32 - 1),
)
def test_workload_backward_matches_torch_autograd_float64(schedule, batch, kv, g, Nq, extra_kv, d, causal, extra_M, seed) -> None:

    w = Workload.build(batch=batch, heads=kv * g, kv_heads=kv, Nq=Nq, Nkv=Nq + extra_kv, d=d, causal=causal, M=7 * d + 4 + extra_M)
    Q, K, V = random_inputs(w, seed)
    dO = random_inputs(w, seed, grad=True)[3]
    r = run("flash2-bwd", w, schedule=schedule, inputs=(Q, K, V, dO), check=False)
    for ours, ref in zip(r.outputs, torch_workload_backward(Q, K, V, dO, causal), strict=True):
        assert rel_error(ours, ref) <= 1e-10
