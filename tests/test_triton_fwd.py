"""attnio's forward Triton kernels (attnio.triton.kernels: FA-2 per-head and grouped, square tiling) under
Triton's interpreter: counted global traffic == attnio's exact workload formula for the same schedule and
blocks, word for word and per tensor; outputs and logsumexps equal the float64 reference within the element
type's tolerance (docs/triton-kernels.md). Skipped without triton and torch.

Small workloads and few examples: every launch runs in the interpreter on the CPU.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest
from triton_env import import_triton

torch, triton = import_triton()

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import attnio.triton as at  # noqa: E402
from attnio.algorithms.reference import attention4 as reference  # noqa: E402
from attnio.algorithms.workloads import tiling as schedule_tiling  # noqa: E402
from attnio.bounds.costs import workload_cost  # noqa: E402
from attnio.core.errors import InvalidParameter  # noqa: E402
from attnio.core.workload import Workload  # noqa: E402
from attnio.triton.kernels import KERNELS, fa2_fwd, get, square_tiling  # noqa: E402
from attnio.triton.kernels.measure import inputs, measure  # noqa: E402

#: |o − reference| ≤ TOL · max(1, max|v|) (and |lse − reference| ≤ TOL · max(1, max|lse|)): 8 unit roundoffs
#: of fp16 (2⁻¹¹) and bf16 (2⁻⁸) — the output rounded once, P rounded to the element type before P·V — and
#: 1e-5 for fp32 (the interpreter's dot is an fp32 matmul; a GPU's default tf32 dot would need ~1e-3).
TOL = {"fp32": 1e-5, "fp16": 8 * 2.0**-11, "bf16": 8 * 2.0**-8}
FAST = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _ref_lse(q: np.ndarray, k: np.ndarray, causal: bool) -> np.ndarray:
    """Float64 logsumexp of each query row's scaled logits (bottom-right causal mask), K/V heads repeated."""
    g = q.shape[1] // k.shape[1]
    s = np.einsum("bhid,bhjd->bhij", q, np.repeat(k, g, axis=1)) / np.sqrt(q.shape[3])
    if causal:
        Nq, Nkv = q.shape[2], k.shape[2]
        s[..., np.arange(Nkv)[None, :] > np.arange(Nq)[:, None] + Nkv - Nq] = -np.inf
    top = s.max(axis=-1)
    return top + np.log(np.exp(s - top[..., None]).sum(axis=-1))


def _check_values(w: Workload, q, k, v, o, lse) -> None:
    q64, k64, v64 = (x.double().numpy() for x in (q, k, v))
    tol = TOL[w.dtype]
    ref = reference(q64, k64, v64, w.causal)
    err = np.max(np.abs(o.double().numpy() - ref))
    assert err <= tol * max(1.0, np.abs(v64).max()), (w, err)
    lref = _ref_lse(q64, k64, w.causal)
    lerr = np.max(np.abs(lse.double().numpy() - lref))
    assert lerr <= tol * max(1.0, np.abs(lref).max()), (w, lerr)


@st.composite
def workloads(draw, *, M_of, causal=None, dtype="fp32"):
    kv_heads = draw(st.integers(1, 2))
    g = draw(st.sampled_from([1, 2, 3]))
    causal = draw(st.booleans()) if causal is None else causal
    Nq = draw(st.integers(1, 9))
    Nkv = draw(st.integers(Nq if causal else 1, 11))
    d, dv = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    M = M_of(draw, g, d, dv)
    return Workload.build(batch=draw(st.integers(1, 2)), heads=g * kv_heads, kv_heads=kv_heads, Nq=Nq, Nkv=Nkv,
                          d=d, dv=dv, causal=causal, dtype=dtype, M=M)


def _fa2_M(draw, g, d, dv):  # M for 1 to 4 positions per head and block (so that causal blocks cross the diagonal)
    row = d + dv + 4
    return max(d, dv) + g * row * draw(st.integers(1, 4)) + draw(st.integers(0, g * row - 1))


def _square_M(draw, g, d, dv):  # the small cache: B = ⌊√(M/4)⌋ from 2 to 4, M < d² where d allows
    # B = 1 (M < 16) is one explicit small example: at B = 1 a drawn workload runs up to 20 s in the interpreter
    return draw(st.integers(16, 80))


def _count(spec_name: str, w: Workload, seed: int = 0):
    spec = get(spec_name)
    q, k, v = inputs(w, seed)
    outs = spec.buffers(w, q)
    with at.count_traffic(q=q, k=k, v=v, **outs) as t:
        spec.launcher()(q, k, v, causal=w.causal, M=w.M, **outs)
    return t, (q, k, v), outs


# ------------------------------------------------------------------------------------------- FA-2 forward
@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(M_of=_fa2_M), schedule=st.sampled_from(fa2_fwd.SCHEDULES))
@example(w=Workload.build(heads=3, kv_heads=1, Nq=5, Nkv=9, d=3, dv=2, M=3 + 3 * 2 * 9, causal=True), schedule="grouped")
def test_fa2_counted_equals_workload_formula(w: Workload, schedule: str) -> None:
    t, (q, k, v), outs = _count(f"flash2-{schedule}", w)
    assert t.io_count() == workload_cost("flash2", w, schedule)
    # per tensor, summed block by block: Q read once, K/V rows [0, E_i) once per Q block and unit, O and one
    # logsumexp per row written once
    B_r, _ = fa2_fwd.blocks(w, schedule)
    delta = w.Nkv - w.Nq
    E = [min(w.Nq, (i + 1) * B_r) + delta if w.causal else w.Nkv for i in range(-(-w.Nq // B_r))]
    units = w.kv_heads_total if schedule == "grouped" else w.query_heads_total
    assert t.reads_words["q"] == w.query_heads_total * w.Nq * w.d
    assert (t.reads_words["k"], t.reads_words["v"]) == (units * sum(E) * w.d, units * sum(E) * w.dv)
    assert (t.writes_words["o"], t.writes_words["lse"]) == (w.query_heads_total * w.Nq * w.dv, w.query_heads_total * w.Nq)
    assert t.writes_words.get("q", 0) == t.writes_words.get("k", 0) == t.writes_words.get("v", 0) == 0
    assert t.unattributed_bytes == 0
    _check_values(w, q, k, v, outs["o"], outs["lse"])


@settings(deadline=None, derandomize=True)
@given(w=workloads(M_of=_fa2_M), schedule=st.sampled_from(fa2_fwd.SCHEDULES))
def test_fa2_count_function_is_the_workload_formula(w: Workload, schedule: str) -> None:
    # no launch: the kernel's own count at the rule's B_r is attnio's formula (which the launches above meet)
    B_r, B_c = fa2_fwd.blocks(w, schedule)
    t = schedule_tiling("flash2", w, schedule)
    assert (B_r, B_c) == (t.B_r, t.B_c)
    assert fa2_fwd.traffic(w, B_r, schedule) == workload_cost("flash2", w, schedule)


@FAST
@given(w=workloads(M_of=lambda draw, g, d, dv: 10**6), B_r=st.integers(1, 5), B_c=st.integers(1, 6),
       schedule=st.sampled_from(fa2_fwd.SCHEDULES))
def test_fa2_explicit_blocks_count(w: Workload, B_r: int, B_c: int, schedule: str) -> None:
    """Blocks given, not from M: the count is the module's formula at that B_r, whatever B_c."""
    q, k, v = inputs(w, 1)
    outs = fa2_fwd.buffers(w, q)
    with at.count_traffic(q=q, k=k, v=v, **outs) as t:
        fa2_fwd.fa2_forward(q, k, v, causal=w.causal, block=(B_r, B_c), schedule=schedule, **outs)
    assert t.io_count() == fa2_fwd.traffic(w, B_r, schedule)
    _check_values(w, q, k, v, outs["o"], outs["lse"])


def test_fa2_causal_skips_the_blocks_above_the_diagonal() -> None:
    """N = 16, one row per Q block (B_r = 1 at M = 14, d = 2): K/V rows 1 + 2 + … + 16 = 136, not 16·16."""
    w = Workload.build(N=16, d=2, M=14, causal=True)
    t, *_ = _count("flash2-per-head", w)
    assert fa2_fwd.blocks(w, "per-head")[0] == 1
    assert (t.reads_words["k"], t.reads_words["v"]) == (136 * 2, 136 * 2)
    assert t.io_count() == workload_cost("flash2", w, "per-head")


def test_fa2_grouped_reads_each_kv_tile_once_for_the_group() -> None:
    """MQA, 4 query heads, N_q = 2, N_kv = 8, d = 2, M = 40 (a = 4 rows): grouped reads K twice for the group
    (⌊a/g⌋ = 1 position per head, T_r = 2), per-head once for each of the 4 heads (T_r = 1)."""
    w = Workload.build(heads=4, kv_heads=1, Nq=2, Nkv=8, d=2, M=40)
    reads = {s: _count(f"flash2-{s}", w)[0].reads_words["k"] for s in fa2_fwd.SCHEDULES}
    assert reads == {"grouped": 2 * 8 * 2, "per-head": 4 * 1 * 8 * 2}


def test_fa2_strided_views_count_the_same() -> None:
    """q, k, v as (batch, N, heads, d) storage viewed (batch, heads, N, d): the same words move."""
    w = Workload.build(batch=2, heads=2, kv_heads=1, Nq=5, Nkv=7, d=3, dv=4, M=60, causal=True)
    q, k, v = (x.transpose(1, 2).contiguous().transpose(1, 2) for x in inputs(w, 2))
    assert not q.is_contiguous()
    outs = fa2_fwd.buffers(w, q)
    with at.count_traffic(q=q, k=k, v=v, **outs) as t:
        fa2_fwd.fa2_forward(q, k, v, causal=True, M=w.M, **outs)
    assert t.io_count() == workload_cost("flash2", w, "grouped")
    _check_values(w, q, k, v, outs["o"], outs["lse"])


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("name", ["flash2-grouped", "square_tiling"])
def test_half_precision(name: str, dtype: str) -> None:
    w = Workload.build(heads=2, kv_heads=1, Nq=5, Nkv=7, d=4, dv=3, M=40 if name == "square_tiling" else 60,
                       causal=True, dtype=dtype)
    t, (q, k, v), outs = _count(name, w)
    assert t.io_count() == get(name).expected(w)
    assert t.reads_bytes["q"] == 2 * t.reads_words["q"]  # words × element size
    assert t.writes_bytes["lse"] == 4 * t.writes_words["lse"]  # statistics stay fp32
    _check_values(w, q, k, v, outs["o"], outs["lse"])


# ------------------------------------------------------------------------------------------- square tiling
@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(M_of=_square_M))
@example(w=Workload.build(heads=2, kv_heads=1, Nq=3, Nkv=5, d=3, dv=2, M=4, causal=True))  # B = 1, GQA, N_q < N_kv
def test_square_tiling_counted_equals_workload_formula(w: Workload) -> None:
    t, (q, k, v), outs = _count("square_tiling", w)
    assert t.io_count() == workload_cost("square_tiling", w)
    B = square_tiling.block(w)
    assert square_tiling.traffic(w, B) == t.io_count()
    rows = w.query_heads_total * w.Nq
    assert (t.reads_words["lse"], t.writes_words["lse"]) == (rows, rows)  # one logsumexp per row, out and back
    area = t.writes_words["s"]  # the logits written once ...
    assert t.reads_words["s"] == -(-w.dv // B) * area  # ... and read once per value-column tile
    if not w.causal:
        assert area == rows * w.Nkv
    assert t.unattributed_bytes == 0
    _check_values(w, q, k, v, outs["o"], outs["lse"])


def test_square_tiling_small_cache_example() -> None:
    """d = 8, M = 16 < d² = 64 (B = 2): the regime square tiling is for; N = 6, causal."""
    w = Workload.build(N=6, d=8, M=16, causal=True)
    m = measure("square_tiling", w)
    assert m.counted == m.formula == workload_cost("square_tiling", w)
    assert m.max_abs_error < 1e-5
    assert m.counted.io_words > m.bound_words  # a count never beats the proved bound


# ------------------------------------------------------------------------------------------- registry, input
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_registry_entries_measure_their_formula(name: str) -> None:
    """Every registered kernel, forward and backward: counted == its formula; every counted tensor is one the
    registry names or the kernel's own scratch with an attnio role (the backward's D)."""
    from attnio.triton.check import role_of

    spec = KERNELS[name]
    assert spec.formula(False).algorithm.startswith(spec.algorithm + "/" + spec.schedule)
    w = Workload.build(batch=1, heads=2, kv_heads=1, Nq=3, Nkv=6, d=4, M=36, causal=True)
    m = measure(name, w)
    assert m.counted == m.formula and m.counted_over_formula == 1
    assert set(spec.tensors) <= set(m.reads_words) and all(role_of(n) for n in m.reads_words)
    assert (set(m.reads_words) == set(spec.tensors)) == (spec.direction == "forward")  # D: the backward's own
    assert m.counted_over_bound >= 1 and m.max_abs_error < 1e-4


def test_bad_input() -> None:
    w = Workload.build(N=4, d=4, M=40)
    q, k, v = inputs(w)
    with pytest.raises(InvalidParameter, match="exactly one of M"):
        fa2_fwd.fa2_forward(q, k, v, M=40, block=(2, 2))
    with pytest.raises(InvalidParameter, match="M >= 16"):
        fa2_fwd.fa2_forward(q, k, v, M=15)
    with pytest.raises(InvalidParameter, match="v.shape"):
        fa2_fwd.fa2_forward(q, k, v[:, :, :3], M=40)
    with pytest.raises(InvalidParameter, match="k.dtype"):
        fa2_fwd.fa2_forward(q, k.double(), v, M=40)
    with pytest.raises(InvalidParameter, match="Nq"):  # causal needs N_q <= N_kv
        fa2_fwd.fa2_forward(q, k[:, :, :2], v[:, :, :2], M=40, causal=True)
    with pytest.raises(InvalidParameter, match="^o="):
        fa2_fwd.fa2_forward(q, k, v, M=40, o=torch.empty(1, 1, 4, 3))
    with pytest.raises(InvalidParameter, match="M=3"):
        square_tiling.square_tiling_forward(q, k, v, M=3)
    with pytest.raises(InvalidParameter, match="kernel"):
        get("flash3")


def test_gate_configurations_count_the_formula_in_bytes() -> None:
    """The gate pulls attnio's kernels at each spec's gate_workloads (nothing registered at import); one
    configuration counted through attnio.triton.check (o named, lse as the kernel's own argument) moves exactly
    4 × the formula's words."""
    from attnio.triton import gate

    ours = [e for e in gate.configurations() if "attnio" in e.tags]
    assert sorted((e.name, repr(e.build())) for e in ours) == sorted(
        (n, repr(Workload.build(dtype="fp32", **kw))) for n, spec in KERNELS.items() for kw in spec.gate_workloads)
    assert len(ours) == 7 and not [e for e in gate.registered() if "attnio" in e.tags]  # none registered at import
    ours = [e for e in ours if "backward" not in e.tags]
    [entry] = [e for e in ours if e.build().Nq < e.build().Nkv]  # the decode configuration: the quickest
    [(_, r)] = gate.measure([entry])
    assert r.outputs_ok
    assert r.total_bytes == entry.formula(entry.build()) == 4 * KERNELS[entry.name].expected(entry.build()).io_words
    # the kernel's own lse (counted as _fa2_fwd.L) is attnio's L: the grouped kernel is attnio's best, word for word
    assert "_fa2_fwd.L" in r.traffic.names
    assert r.dominates == "matches attnio's best schedule (flash2 (grouped)) word for word" and r.notes == []


def test_square_tiling_checked_matches_attnios_best_word_for_word() -> None:
    """Through attnio.triton.check: the logits and logsumexp scratch (_square_tiling.S, .L) are attnio's S and L."""
    from attnio.triton.check import check
    from attnio.triton.kernels import gate_launcher

    r = check(gate_launcher(KERNELS["square_tiling"]), Workload.build(N=6, d=8, M=16, causal=True))
    assert {"_square_tiling.S", "_square_tiling.L"} <= set(r.traffic.names) and r.outputs_ok
    assert r.best_schedule == "square_tiling (per-head)" and r.total_bytes == r.best_bytes
    assert r.dominates == "matches attnio's best schedule (square_tiling (per-head)) word for word"
