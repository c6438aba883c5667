"""attnio's Triton FA-2 backward (attnio/triton/kernels/fa2_bwd.py) in Triton's interpreter: gradients equal
torch autograd in float64, and the counted global traffic equals attnio's exact ``flash2-bwd`` workload formula
(grouped schedule) for the same workload and blocks, preprocess and main launches together.

Tolerances (max |x − autograd| / max |autograd| over dq, dk, dv, against the float64 autograd of the unrounded
inputs): float64 1e-10 (the sums differ only in order; measured ≤ 5e-16); float32 1e-5 (measured ≤ 3e-7: the
interpreter's tl.dot is exact float32, a GPU's default tf32 is not); float16 5e-3 (measured ≤ 7e-4) and
bfloat16 3e-2 (measured ≤ 1e-2): inputs rounded to 16 bits, tl.dot inputs and float16 dq's atomic adds in 16
bits, accumulators float32.
"""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # read by triton.jit when the kernels are built (first launch)

import pytest
from triton_env import import_triton

torch, _ = import_triton()

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from attnio.bounds.costs import workload_backward_cost  # noqa: E402
from attnio.core.errors import InvalidParameter  # noqa: E402
from attnio.core.workload import Workload  # noqa: E402
from attnio.triton import count_traffic  # noqa: E402
from attnio.triton.kernels import fa2_bwd  # noqa: E402


def count_launch(launch, **named):
    """``launch()`` under attnio's counter: (its result, the Traffic)."""
    with count_traffic(**named) as t:
        out = launch()
    return out, t


FEW = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def reference(q, k, v, do, causal: bool, scale: float):
    """Float64 O, logsumexp L and the autograd gradients of attention with K/V heads repeated over each group."""
    g = q.shape[1] // k.shape[1]
    q, k, v = (x.detach().double().clone().requires_grad_(True) for x in (q, k, v))
    s = scale * q @ k.repeat_interleave(g, 1).transpose(-1, -2)
    Nq, Nkv = q.shape[2], k.shape[2]
    if causal:
        s = s.masked_fill(torch.arange(Nkv)[None, :] > torch.arange(Nq)[:, None] + (Nkv - Nq), float("-inf"))
    o = torch.softmax(s, -1) @ v.repeat_interleave(g, 1)
    o.backward(do.double())
    return o.detach(), torch.logsumexp(s, -1).detach(), (q.grad, k.grad, v.grad)


def inputs(w: Workload, dtype, seed: int):
    gen = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64)  # noqa: E731
    q, k = r(w.batch, w.heads, w.Nq, w.d), r(w.batch, w.kv_heads, w.Nkv, w.d)
    v, do = r(w.batch, w.kv_heads, w.Nkv, w.dv), r(w.batch, w.heads, w.Nq, w.dv)
    o, lse, grads = reference(q, k, v, do, w.causal, w.d**-0.5)
    cast = [x.to(dtype) for x in (q, k, v, o, do)]
    return dict(zip(("q", "k", "v", "o", "do"), cast, strict=True)) | {"lse": lse.to(torch.float32 if dtype != torch.float64 else dtype)}, grads


def rel(x, ref) -> float:
    """max |x − ref| / max |ref|; the absolute error where ref is all zero (one key: dq = dk = 0)."""
    err, top = float((x.double() - ref).abs().max()), float(ref.abs().max())
    return err / top if top > 1e-12 else err


@st.composite
def workloads(draw):
    kv_heads = draw(st.sampled_from([1, 2]))
    heads = kv_heads * draw(st.sampled_from([1, 2]))
    causal = draw(st.booleans())
    Nkv = draw(st.integers(1, 12))
    Nq = draw(st.integers(1, Nkv)) if causal else draw(st.integers(1, 12))
    d, dv = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    lo = 4 * d + 3 * dv + 4  # one row of every tile (algorithms/workloads_bwd.py)
    M = draw(st.integers(lo, lo + 24 * (d + dv)))
    return Workload.build(batch=draw(st.sampled_from([1, 2])), heads=heads, kv_heads=kv_heads, Nq=Nq, Nkv=Nkv,
                          d=d, dv=dv, causal=causal, M=M)


def _launch(w: Workload, t: dict, **blocks):
    return fa2_bwd.fa2_backward(t["q"], t["k"], t["v"], t["o"], t["do"], t["lse"], causal=w.causal, **blocks)


def _params(w: Workload) -> dict:
    return dict(batch=w.batch, heads=w.heads, kv_heads=w.kv_heads, Nq=w.Nq, Nkv=w.Nkv, d=w.d, dv=w.dv, causal=w.causal)


@FEW
@given(w=workloads(), seed=st.integers(0, 3))
def test_counted_equals_attnio_formula_and_gradients_equal_autograd(w: Workload, seed: int) -> None:
    t, grads = inputs(w, torch.float64, seed)
    out, c = count_launch(lambda: _launch(w, t, M=w.M), **t)
    formula = workload_backward_cost("flash2-bwd", w, schedule="grouped")
    assert c.io_count() == formula, (w, c, formula)
    pre = fa2_bwd.preprocess_count(batch=w.batch, heads=w.heads, Nq=w.Nq, d=w.d, dv=w.dv)
    assert c.per_launch["fa2_bwd_preprocess"].io_count() == pre
    assert c.launches == ["fa2_bwd_preprocess", "fa2_bwd_main"] and c.unattributed_bytes == 0
    # per tensor: K, V read once and dK, dV written once (grouped); O read once (the D pass)
    Hk, H = w.kv_heads_total, w.query_heads_total
    assert (c.reads_words["k"], c.reads_words["v"], c.reads_words["o"]) == (Hk * w.Nkv * w.d, Hk * w.Nkv * w.dv, H * w.Nq * w.dv)
    # every visited row moves d words of Q, d_v of dO (after the D pass's one read) and 1 of L
    main_rows = c.reads_words["lse"]
    assert (c.reads_words["q"], c.reads_words["do"]) == (main_rows * w.d, main_rows * w.dv + H * w.Nq * w.dv)
    for x, ref in zip(out, grads, strict=True):
        assert rel(x, ref) < 1e-10, (w, rel(x, ref))


@FEW
@given(w=workloads(), B_r=st.integers(1, 9), B_c=st.integers(1, 9))
def test_counted_equals_exact_count_for_explicit_blocks(w: Workload, B_r: int, B_c: int) -> None:
    t, grads = inputs(w, torch.float64, 0)
    out, c = count_launch(lambda: _launch(w, t, B_r=B_r, B_c=B_c), **t)
    want = fa2_bwd.exact_count(**_params(w), B_c=B_c)
    assert c.io_count() == want
    for x, ref in zip(out, grads, strict=True):
        assert rel(x, ref) < 1e-10


@settings(deadline=None, derandomize=True)
@given(w=workloads())
def test_exact_count_is_attnio_formula_at_the_block_rule(w: Workload) -> None:
    """The docstring's count at attnio's rule's B_c is attnio's workload formula (no kernel launched)."""
    B_r, B_c = fa2_bwd.block_sizes(**_params(w), M=w.M)
    assert fa2_bwd.exact_count(**_params(w), B_c=B_c) == workload_backward_cost("flash2-bwd", w)


@pytest.mark.parametrize(("dtype", "tol"), [("float32", 1e-5), ("float16", 5e-3), ("bfloat16", 3e-2)])
def test_low_precision_gradients_within_documented_tolerance(dtype: str, tol: float) -> None:
    w = Workload.build(heads=2, kv_heads=1, Nq=7, Nkv=10, d=4, dv=4, causal=True, M=80)
    t, grads = inputs(w, getattr(torch, dtype), 1)
    out, c = count_launch(lambda: _launch(w, t, M=w.M), **t)
    f = workload_backward_cost("flash2-bwd", w)
    assert c.io_count() == f
    for x, ref in zip(out, grads, strict=True):
        assert x.dtype == (torch.float32 if dtype == "bfloat16" and x is out[0] else getattr(torch, dtype))
        assert rel(x, ref) < tol, (dtype, rel(x, ref))


def test_causal_skips_blocks_above_the_diagonal() -> None:
    """Causal moves fewer Q-side words than the same workload without the mask (blocks above the diagonal)."""
    w = Workload.build(Nq=8, Nkv=8, d=2, causal=True, M=30)
    t, _ = inputs(w, torch.float64, 0)
    _, causal = count_launch(lambda: _launch(w, t, B_r=2, B_c=2), **t)
    w0 = Workload.build(Nq=8, Nkv=8, d=2, causal=False, M=30)
    _, full = count_launch(lambda: _launch(w0, t, B_r=2, B_c=2), **t)
    # K/V blocks start at keys 0, 2, 4, 6: R = 8 + 6 + 4 + 2 = 20 visited rows with the mask, 4·8 = 32 without;
    # each skipped row saves 2d + d_v + 2 = 8 reads (Q, dO, dQ, L, D) and d = 2 writes (dQ)
    assert full.io_count().reads_words - causal.io_count().reads_words == 12 * 8
    assert full.io_count().writes_words - causal.io_count().writes_words == 12 * 2


def test_strided_views_count_and_gradients() -> None:
    """(batch, N, heads, width) storage seen as (batch, heads, N, width) views: same words, same gradients."""
    w = Workload.build(heads=2, kv_heads=1, Nq=5, Nkv=9, d=3, dv=2, causal=True, M=40)
    t, grads = inputs(w, torch.float64, 2)
    views = {n: x.transpose(1, 2).contiguous().transpose(1, 2) if x.dim() == 4 else x for n, x in t.items()}
    assert not views["q"].is_contiguous()
    out, c = count_launch(lambda: _launch(w, views, M=w.M), **views)
    assert c.io_count() == workload_backward_cost("flash2-bwd", w) and c.unattributed_bytes == 0
    for x, ref in zip(out, grads, strict=True):
        assert rel(x, ref) < 1e-10


def test_measure_against_formula_bound_and_reference() -> None:
    """The backward is measured like its siblings (attnio.triton.kernels.measure)."""
    from attnio.triton.kernels.measure import measure

    w = Workload.build(heads=2, kv_heads=1, Nq=6, Nkv=9, d=3, causal=True, M=40)
    m = measure("flash2-bwd", w, seed=3)
    assert m.counted_over_formula == 1 and m.counted == m.formula == workload_backward_cost("flash2-bwd", w)
    assert m.counted_over_bound > 1 and m.bound_id.startswith("workloads.bwd")
    assert m.max_abs_error < 1e-4, m.max_abs_error  # float32 inputs against attnio's float64 reference


def test_check_and_gate_configurations() -> None:
    """attnio.triton.check on the adapter: counted bytes == the formula's (fp32), gradients within its tolerance;
    the gate pulls the backward's configurations from the registry (nothing registered at import)."""
    from attnio.triton import gate
    from attnio.triton.check import check
    from attnio.triton.kernels import KERNELS

    spec = KERNELS["flash2-bwd"]
    w = Workload.build(heads=2, kv_heads=1, Nq=5, Nkv=8, d=4, causal=True, M=60)
    r = check(fa2_bwd.check_launch, w)
    assert r.direction == "backward" and r.total_bytes == spec.formula_bytes(w) == 4 * workload_backward_cost("flash2-bwd", w).io_words
    assert max(r.max_abs_error.values()) <= r.tolerance, r.max_abs_error
    # D (the preprocess's fa2_bwd_preprocess.D) and lse are attnio's D and L: no excess is invented
    # attnio's best backward is now the fused schedule (no D pass): the kernel's D pass re-reads dO, and says so
    assert r.dominates.startswith("dO is read") and "flash2-fused-bwd (grouped)" in r.dominates and r.notes == []
    entries = [e for e in gate.configurations() if e.name == "flash2-bwd"]
    assert [e.build().M for e in entries] == sorted(c["M"] for c in spec.gate_workloads)
    assert len(entries) == len(spec.gate_workloads) == 2 and not [e for e in gate.registered() if "attnio" in e.tags]
    assert all("backward" in e.tags and e.formula(e.build()) == spec.formula_bytes(e.build()) for e in entries)


def test_check_applies_the_recompute_S_bounds_only_to_a_kernel_that_reads_no_S_or_P() -> None:
    """BWD-slots_P assumes S recomputed: the adapter (reads q, k, v, o, do, lse, D) is set beside it, labelled;
    the same kernel with its D tensor declared P (a kernel that reads the forward's P) gets only the bounds that
    hold for every backward, with a note naming the tensor, and no label."""
    from attnio.bounds.workloads import best_backward_lower_bound
    from attnio.triton.check import check

    w = Workload.build(heads=2, kv_heads=1, Nq=32, Nkv=32, d=4, causal=True, M=64)
    r = check(fa2_bwd.check_launch, w)
    assert r.lower_bound_id == best_backward_lower_bound(w)[0] == "workloads.bwd-slots-x.causal"
    assert r.lower_bound_assumes.startswith("assumes S recomputed") and r.as_dict()["lower_bound"]["assumes"]
    assert any("assumes S recomputed" in line for line in r.lines())
    p = check(fa2_bwd.check_launch, w, roles={"fa2_bwd_preprocess.D": "P"})
    assert p.lower_bound_id == best_backward_lower_bound(w, recomputes_S=False)[0] == "workloads.bwd.trivial"
    assert p.lower_bound_assumes == "" and any("reads P" in n for n in p.notes), p.notes


def test_bad_input_names_the_parameter() -> None:
    w = Workload.build(N=4, d=2, M=30)
    t, _ = inputs(w, torch.float64, 0)
    with pytest.raises(InvalidParameter, match="M="):
        _launch(w, t, M=30, B_r=1, B_c=1)
    with pytest.raises(InvalidParameter, match="B_r, B_c"):
        _launch(w, t, B_r=1)
    with pytest.raises(InvalidParameter, match="M=17"):
        _launch(w, t, M=17)  # below one row of every tile: 4d + 3d_v + 4 = 18
    with pytest.raises(InvalidParameter, match="lse.shape"):
        fa2_bwd.fa2_backward(t["q"], t["k"], t["v"], t["o"], t["do"], t["lse"][..., :3], M=30)
    with pytest.raises(InvalidParameter, match="N_q=4"):
        fa2_bwd.fa2_backward(t["q"], t["k"][:, :, :3], t["v"][:, :, :3], t["o"], t["do"], t["lse"], causal=True, M=30)
