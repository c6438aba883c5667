"""The CUDA kernels (algorithms/cuda): launch plans on CPU, nvcc compiles, the kernel source run on the CPU
emulator (counts, numerics, shared-memory bounds, races), and, on a GPU only, the real thing.

What runs where:
- always: launch-parameter logic (blocks, shared-memory budget, grid) against the model;
- ``nvcc`` (auto-skipped without nvcc): the CUDA text CuPy compiles, built for sm_80 and sm_90, both builds;
- g++ present (skipped otherwise, with the reason): the same kernel text run by the CPU emulator, whose
  in-kernel counter must equal the machine's count and whose output must match the float64 reference;
- ``gpu`` (auto-skipped without CuPy and a device): the CuPy kernels on the device.
"""

from __future__ import annotations

import math
import re
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms.cuda import emulate, kernels
from attnio.algorithms.cuda import launch as L
from attnio.algorithms.flash2 import Flash2Tiling
from attnio.algorithms.reference import attention
from attnio.algorithms.run import count
from attnio.algorithms.square_tiling import SquareTiling
from attnio.bounds.costs import cost
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter, Unsupported

TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
"""Relative error ‖O − ref‖/‖ref‖ allowed, by input dtype, where ref is the float64 reference on the
dtype-rounded inputs. float32: accumulation rounding only; float16/bfloat16 add one rounding of O
(2⁻¹¹ and 2⁻⁸ relative) plus accumulation."""

needs_gxx = pytest.mark.skipif(
    emulate.compiler() is None, reason="no C++20 compiler (g++): CPU emulator tests skipped"
)


def _inputs(N: int, d: int, dv: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(s).astype(np.float32) for s in ((N, d), (N, d), (N, dv)))  # type: ignore[return-value]


def _rounded(x: np.ndarray, dtype: str) -> np.ndarray:
    return emulate.widen(emulate.storage(x, dtype), dtype).astype(np.float64)


def _logsumexp_rows(Q: np.ndarray, K: np.ndarray, scale: float) -> np.ndarray:
    s = (Q @ K.T) * scale
    mx = s.max(axis=1)
    return mx + np.log(np.exp(s - mx[:, None]).sum(axis=1))


# launch plans (CPU) -----------------------------------------------------------------------------------

shapes = st.tuples(st.integers(1, 300), st.integers(1, 64), st.integers(1, 64)).flatmap(
    lambda t: st.tuples(
        st.just(t[0]), st.just(t[1]), st.just(t[2]), st.integers(Flash2Tiling.min_M(t[0], t[1], t[2]), 6000)
    )
)


@given(shapes)
def test_flash2_plan_uses_the_model_tiling_and_fits_M(s):
    N, d, dv, M = s
    p = L.flash2_plan(N, d, M, dv=dv)
    t = Flash2Tiling.default(N, d, M, dv)
    (ln,) = p.launches
    assert p.tiling == t
    assert ln.grid == (math.ceil(N / t.B_r), 1, 1)
    assert ln.shared_words == Flash2Tiling.fast_words(t.B_r, t.B_c, d, dv) <= M
    assert ln.shared_bytes == 4 * ln.shared_words
    assert ln.block == (L.DEFAULT_THREADS, 1, 1)


@given(shapes, st.data())
def test_flash2_plan_words_equal_the_machine_count_per_array(s, data):
    """The plan's closed-form global words equal the machine's count-only run, array by array, for any tiling
    that fits (not only the default)."""
    N, d, dv, M = s
    B_r = data.draw(st.integers(1, N))
    B_c = data.draw(st.integers(1, N))
    t = Flash2Tiling(B_r, B_c)
    if Flash2Tiling.fast_words(B_r, B_c, d, dv) > M:
        with pytest.raises(InvalidParameter):
            L.flash2_plan(N, d, M, dv=dv, tiling=t)
        t = Flash2Tiling.default(N, d, M, dv)
    p = L.flash2_plan(N, d, M, dv=dv, tiling=t)
    m = count("flash2", N=N, d=d, M=M, dv=dv, tiling=t)
    assert p.words() == m.per_array
    assert p.total_words() == m.io


@given(shapes)
def test_flash2_plan_default_words_equal_the_cost_formula(s):
    N, d, dv, M = s
    assert L.flash2_plan(N, d, M, dv=dv).total_words() == cost("flash2", N=N, d=d, M=M, dv=dv)


@given(st.integers(1, 400), st.integers(1, 80), st.integers(1, 80), st.integers(4, 5000))
def test_square_plan_mirrors_the_model(N, d, dv, M):
    p = L.square_tiling_plan(N, d, M, dv=dv)
    B = p.tiling.B
    assert p.tiling == SquareTiling.default(N, d, M, dv)
    assert B == math.isqrt(M // 4) and 4 * B * B <= M < 4 * (B + 1) ** 2  # B = ⌊√(M/4)⌋ by its definition
    assert [(ln.kernel, ln.grid[0], ln.shared_words) for ln in p.launches] == [
        ("square_tiling_phase1", math.ceil(N / B), 3 * B * B + B),
        ("square_tiling_phase2", math.ceil(N / B), 3 * B * B + B),
    ]
    assert p.total_words() == cost("square_tiling", N=N, d=d, M=M, dv=dv)


@settings(max_examples=40)
@given(st.integers(1, 120), st.integers(1, 40), st.integers(4, 3000))
def test_square_plan_words_equal_the_machine_count_per_array(N, d, M):
    p = L.square_tiling_plan(N, d, M)
    m = count("square_tiling", N=N, d=d, M=M)
    assert p.words() == m.per_array


@pytest.mark.parametrize("N,d,M", [(1024, 128, 4096), (1024, 64, 4096), (4096, 256, 16384)])
def test_square_plan_matches_saha_ye_closed_form_when_B_divides(N, d, M):
    """4N²d/B + N² + Nd + 2N (Saha–Ye Thm 3.5's count), an independent formula, when B | N and B | d."""
    p = L.square_tiling_plan(N, d, M)
    B = p.tiling.B
    assert N % B == 0 and d % B == 0
    assert p.total_words().io_words == 4 * N * N * d // B + N * N + N * d + 2 * N


def test_bytes_use_the_dtype_for_inputs_and_float32_for_scratch():
    p32 = L.flash2_plan(100, 16, 2000)
    p16 = L.flash2_plan(100, 16, 2000, dtype="float16")
    w = p32.words()
    io_words = sum(c.io_words for k, c in w.items() if k != "L")
    assert p32.bytes().io_words == 4 * io_words + 4 * 100
    assert p16.bytes().io_words == 2 * io_words + 4 * 100  # L stays float32
    sq = L.square_tiling_plan(100, 16, 400, dtype="bfloat16")
    ws = sq.words()
    assert sq.bytes().io_words == 2 * sum(ws[k].io_words for k in "QKVO") + 4 * (
        ws["S"].io_words + ws["L"].io_words
    )


def test_shared_memory_check_against_device_limit():
    limit = 232448  # H100/H200 opt-in limit per block
    assert L.max_M_words(limit) == 58112
    fits = L.flash2_plan(4096, 64, 58112)
    assert fits.shared_bytes <= limit
    L.check_shared_memory(fits, limit)
    with pytest.raises(Unsupported, match="use M <= 58112"):
        L.check_shared_memory(L.flash2_plan(4096, 64, 65536), limit)
    sq = L.square_tiling_plan(4096, 64, 4 * 120 * 120)  # B = 120: 3·120² + 120 = 43,320 words = 173,280 bytes
    assert sq.tiling.B == 120 and sq.shared_bytes == 173280
    L.check_shared_memory(sq, limit)
    with pytest.raises(Unsupported):
        L.check_shared_memory(sq, 48 * 1024)
    assert L.flash2_plan(64, 8, 300).launches[0].needs_opt_in is False
    assert fits.launches[0].needs_opt_in is True


@pytest.mark.parametrize(
    "kw,name",
    [
        (dict(threads=100), "threads"),
        (dict(threads=2048), "threads"),
        (dict(dtype="float64"), "dtype"),
        (dict(M=3), "M"),
        (dict(N=0), "N"),
        (dict(tiling=Flash2Tiling(8, 8)), "tiling"),
    ],
)
def test_flash2_plan_rejects_bad_parameters(kw, name):
    args = dict(N=16, d=8, M=200) | kw
    with pytest.raises(InvalidParameter) as e:
        L.flash2_plan(**args)
    assert e.value.name == name


def test_square_plan_rejects_M_below_4():
    with pytest.raises(InvalidParameter, match="M >= 4"):
        L.square_tiling_plan(16, 8, 3)


# the CUDA text itself --------------------------------------------------------------------------------


def test_every_name_expression_is_instantiated_in_the_source():
    """CuPy's name_expressions and the explicit instantiations nvcc compiles list the same kernels."""
    src = kernels.source()
    for k in kernels.KERNELS:
        assert re.search(rf"template ATTNIO_GLOBAL void {k}<T>", src), k
    for t in kernels.CUDA_TYPE.values():
        assert f"ATTNIO_INSTANTIATE_FLASH2({t})" in src and f"ATTNIO_INSTANTIATE_SQUARE({t})" in src
    assert len(kernels.NAME_EXPRESSIONS) == len(kernels.KERNELS) * len(kernels.CUDA_TYPE) == 9


def _kernels_in(text: str) -> list[tuple[str, list[str], list[str]]]:
    """(name, global pointer parameters, body lines) of each ``ATTNIO_GLOBAL`` kernel definition."""
    out = []
    for m in re.finditer(r"ATTNIO_GLOBAL void (\w+)\(([^)]*)\)\s*\{", text):
        params = [p.strip() for p in m.group(2).split(",")]
        ptrs = [re.findall(r"(\w+)$", p)[0] for p in params if "*" in p and "io_counter" not in p]
        depth, k = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        out.append((m.group(1), ptrs, text[m.end() : k].splitlines()))
    return out


def test_global_accesses_go_through_the_counting_macros():
    """Every line of a kernel that touches a global array (a pointer parameter, or a pointer derived from one)
    does it through ATTNIO_LOAD/ATTNIO_STORE, so no access escapes the counter. A source check, weaker than a
    run: the emulator tests check that the counts are right."""
    found = set()
    for name in ("flash2.cu", "square_tiling.cu"):
        for kernel, ptrs, body in _kernels_in((emulate.HERE / name).read_text()):
            found.add(kernel)
            glob = set(ptrs)
            for line in body:
                code = line.split("//")[0]
                d = re.match(r"\s*(?:const )?T\* (\w+) = (\w+) \+", code)
                if d and d.group(2) in glob:
                    glob.add(d.group(1))  # a derived global pointer: no access on this line
                    continue
                used = [g for g in glob if re.search(rf"\b{g}\b", code)]
                if used:
                    assert "ATTNIO_LOAD" in code or "ATTNIO_STORE" in code, (
                        f"{name}:{kernel}: uncounted access: {line.strip()}"
                    )
    assert found == set(kernels.KERNELS)


C_TYPES = {"int": np.int32, "float": np.float32}
STORAGE = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16}


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_wrapper_arguments_match_the_kernel_signatures(dtype):
    """Each argument the CuPy wrappers pass has the C parameter's exact type: scalars as np.int32/np.float32
    (a Python float would go as a double), pointers as arrays of the pointee's dtype (T = the storage dtype)."""
    sigs = {}
    for name in ("flash2.cu", "square_tiling.cu"):
        text = (emulate.HERE / name).read_text()
        for m in re.finditer(r"ATTNIO_GLOBAL void (\w+)\(([^)]*)\)\s*\{", text):
            sigs[m.group(1)] = [
                p.replace("__restrict__", "").replace("const", "").split() for p in m.group(2).split(",")
            ]
    N, d, dv = 10, 4, 3
    store = STORAGE[dtype]
    Q, K, V, O = (
        np.zeros((N, d), store),
        np.zeros((N, d), store),
        np.zeros((N, dv), store),
        np.zeros((N, dv), store),
    )
    Lse, S, ctr = np.zeros(N, np.float32), np.zeros((N, N), np.float32), np.zeros(2, np.uint64)
    fp = L.flash2_plan(N, d, 200, dv=dv, dtype=dtype)
    sp = L.square_tiling_plan(N, d, 64, dv=dv, dtype=dtype)
    calls = {
        "flash2_fwd": kernels.flash2_args(fp, Q, K, V, O, Lse, 0.5, ctr),
        "square_tiling_phase1": kernels.square_phase1_args(sp, Q, K, S, Lse, 0.5, ctr),
        "square_tiling_phase2": kernels.square_phase2_args(sp, S, Lse, V, O, ctr),
    }
    assert set(calls) == set(sigs) == set(kernels.KERNELS)
    for kernel, args in calls.items():
        params = sigs[kernel]
        assert len(args) == len(params), kernel
        for arg, (ctype, *_name) in zip(args, params, strict=True):
            if ctype.endswith("*"):
                want = {"T*": store, "float*": np.float32}[ctype]
                assert isinstance(arg, np.ndarray) and arg.dtype == want, (kernel, ctype, _name)
            elif ctype == "unsigned":  # unsigned long long* io_counter
                assert isinstance(arg, np.ndarray) and arg.dtype == np.uint64, (kernel, _name)
            else:
                assert type(arg) is C_TYPES[ctype], (kernel, ctype, _name, type(arg))
    assert calls["flash2_fwd"][8:10] == (fp.tiling.B_r, fp.tiling.B_c)
    assert calls["square_tiling_phase1"][6] == sp.tiling.B == calls["square_tiling_phase2"][6]


def test_bfloat16_rounding_is_nearest_even():
    # hand-checked: bf16 keeps 7 mantissa bits; 1 + 2⁻⁸ is a tie between 1 (even) and 1 + 2⁻⁷;
    # 1 + 3·2⁻⁸ is a tie between 1 + 2⁻⁷ (odd) and 1 + 2·2⁻⁷ (even)
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -2.0, np.inf, np.nan], dtype=np.float32)
    assert kernels.to_bfloat16_bits(x).tolist()[:5] == [0x3F80, 0x3F80, 0x3F82, 0xC000, 0x7F80]
    assert kernels.to_bfloat16_bits(x)[5] == 0x7FC0
    assert emulate.storage(x[:5], "bfloat16").tolist() == [0x3F80, 0x3F80, 0x3F82, 0xC000, 0x7F80]
    assert kernels.from_bfloat16_bits(np.array([0x3F82], dtype=np.uint16)).tolist() == [1 + 2**-6]


# nvcc (CI) --------------------------------------------------------------------------------------------


def _nvcc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["nvcc", "-std=c++17", *args], capture_output=True, text=True, timeout=180)


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_cuda_source_compiles_with_nvcc(arch, tmp_path):
    """The exact text CuPy hands NVRTC compiles to machine code for the arch (nvcc to PTX, ptxas to cubin), in
    both builds, with all 9 kernels and no spills; the timed build has no 64-bit atomics (the counter is
    compiled away), the instrumented one has two per kernel (reads, writes)."""
    src = tmp_path / "attnio_kernels.cu"
    src.write_text(kernels.source())
    for count_io in (True, False):
        flags = [f for f in kernels.compile_options(count_io) if f != "-std=c++17"]
        ptx = tmp_path / f"k_{arch}_{int(count_io)}.ptx"
        r = _nvcc(f"-arch={arch}", "-ptx", *flags, str(src), "-o", str(ptx))
        assert r.returncode == 0, r.stderr
        atomics = ptx.read_text().count("atom.global.add.u64")
        assert atomics == (2 * 9 if count_io else 0)
        r = subprocess.run(
            ["ptxas", f"-arch={arch}", "-v", str(ptx), "-o", str(ptx.with_suffix(".cubin"))],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert r.returncode == 0, r.stderr
        entries = re.findall(r"Compiling entry function '(\w+)' for '(\w+)'", r.stderr)
        assert len(entries) == 9 and {a for _, a in entries} == {arch}, entries
        assert not re.search(r"[1-9]\d* bytes spill", r.stderr), r.stderr


# CPU emulator: the kernel text, run --------------------------------------------------------------------

def _assert_matches_reference(r, Q, K, V, dtype: str, scale: float) -> None:
    """The emulated run's O is within TOL[dtype] (relative Frobenius) of the float64 reference on the inputs rounded
    to ``dtype``, finite, and its saved row statistic is the rows' logsumexp."""
    q, k, v = (_rounded(x, dtype) for x in (Q, K, V))
    ref = attention(q, k, v, scale=scale)
    out = emulate.widen(r.O, dtype).astype(np.float64)
    assert np.isfinite(out).all()
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < TOL[dtype]
    np.testing.assert_allclose(r.stat, _logsumexp_rows(q, k, scale), rtol=1e-5, atol=1e-5)


FLASH2_CASES = [
    # (N, d, dv, M, tiling or None, dtype, threads)
    (37, 8, 8, 200, None, "float32", 32),  # ragged last Q block and K/V block
    (64, 16, 16, 2000, None, "float32", 64),
    (50, 8, 12, 300, None, "float32", 32),  # dv ≠ d
    (33, 16, 16, 1200, Flash2Tiling(5, 7), "float32", 32),  # a non-default tiling
    (40, 8, 8, 14 * 8, None, "float32", 32),  # tiny M: B_r small, many Q blocks
    (48, 16, 16, 900, None, "float16", 64),
    (48, 16, 16, 900, None, "bfloat16", 32),
]


@needs_gxx
@pytest.mark.parametrize("N,d,dv,M,tiling,dtype,threads", FLASH2_CASES)
def test_emulated_flash2_counts_equal_the_model_and_output_matches_reference(
    N, d, dv, M, tiling, dtype, threads
):
    p = L.flash2_plan(N, d, M, dv=dv, dtype=dtype, tiling=tiling, threads=threads)
    Q, K, V = _inputs(N, d, dv, seed=N * 1000 + M)
    scale = 1 / math.sqrt(d)
    r = emulate.run(p, Q, K, V, scale, variant="asan")
    model = count("flash2", N=N, d=d, M=M, dv=dv, tiling=p.tiling)
    assert r.io == model.io
    if tiling is None:
        assert r.io == cost("flash2", N=N, d=d, M=M, dv=dv)
    _assert_matches_reference(r, Q, K, V, dtype, scale)


SQUARE_CASES = [
    (37, 8, 8, 100, "float32", 32),  # B = 5: ragged in N and d
    (64, 16, 16, 256, "float32", 64),  # B = 8 divides N and d
    (30, 10, 6, 64, "float32", 32),  # dv ≠ d, B = 4
    (40, 16, 16, 400, "float16", 64),
    (40, 16, 16, 400, "bfloat16", 32),
    (20, 3, 3, 4, "float32", 32),  # B = 1
]


@needs_gxx
@pytest.mark.parametrize("N,d,dv,M,dtype,threads", SQUARE_CASES)
def test_emulated_square_tiling_counts_equal_the_model_and_output_matches_reference(
    N, d, dv, M, dtype, threads
):
    p = L.square_tiling_plan(N, d, M, dv=dv, dtype=dtype, threads=threads)
    Q, K, V = _inputs(N, d, dv, seed=N * 7 + M)
    scale = 1 / math.sqrt(d)
    r = emulate.run(p, Q, K, V, scale, variant="asan")
    assert (
        r.io == count("square_tiling", N=N, d=d, M=M, dv=dv).io == cost("square_tiling", N=N, d=d, M=M, dv=dv)
    )
    _assert_matches_reference(r, Q, K, V, dtype, scale)


@needs_gxx
@settings(max_examples=15, deadline=None)  # each example is a process run: kept small on purpose
@given(st.integers(1, 60), st.integers(1, 20), st.integers(0, 400), st.sampled_from([32, 64]))
def test_emulated_flash2_count_equals_model_on_random_shapes(N, d, extra_M, threads):
    M = Flash2Tiling.min_M(N, d) + extra_M
    p = L.flash2_plan(N, d, M, threads=threads)
    r = emulate.run(p, *_inputs(N, d, d, seed=extra_M), 1 / math.sqrt(d), variant="asan")
    assert r.io == cost("flash2", N=N, d=d, M=M)


@needs_gxx
@settings(max_examples=15, deadline=None)
@given(
    st.integers(1, 40), st.integers(1, 20), st.integers(16, 600), st.sampled_from([32, 64])
)  # B >= 2; B = 1 is a fixed case
def test_emulated_square_tiling_count_equals_model_on_random_shapes(N, d, M, threads):
    p = L.square_tiling_plan(N, d, M, threads=threads)
    r = emulate.run(p, *_inputs(N, d, d, seed=M), 1 / math.sqrt(d), variant="asan")
    assert r.io == cost("square_tiling", N=N, d=d, M=M)


@needs_gxx
@pytest.mark.parametrize("algorithm", ["flash2", "square_tiling"])
def test_emulated_kernels_have_no_shared_memory_race(algorithm):
    """ThreadSanitizer over the emulated threads: a missing barrier between a write and a read of a shared
    word by different threads fails the run."""
    N, d, M = (45, 16, 1500) if algorithm == "flash2" else (45, 12, 150)
    p = L.plan(algorithm, N, d, M, threads=32)
    r = emulate.run(p, *_inputs(N, d, d, seed=3), 0.25, variant="tsan")
    assert "ThreadSanitizer" not in r.stderr
    assert r.io == cost(algorithm, N=N, d=d, M=M)


@needs_gxx
@pytest.mark.parametrize("algorithm", ["flash2", "square_tiling"])
def test_timed_build_computes_the_same_output_and_counts_nothing(algorithm):
    N, d, M = 41, 8, 400
    p = L.plan(algorithm, N, d, M, threads=32)
    args = (*_inputs(N, d, d, seed=5), 1 / math.sqrt(d))
    counted = emulate.run(p, *args, variant="asan")
    timed = emulate.run(p, *args, variant="plain")
    assert timed.io == IOCount(0, 0) and counted.io.io_words > 0
    np.testing.assert_allclose(timed.O, counted.O, rtol=1e-6, atol=1e-7)


# on a GPU --------------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("algorithm", ["flash2", "square_tiling"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_gpu_kernel_counts_equal_model_and_output_matches(algorithm, dtype):
    import cupy

    N, d, M = (300, 64, 16384) if algorithm == "flash2" else (300, 64, 4096)
    Q, K, V = _inputs(N, d, d, seed=11)
    args = [kernels.as_dtype(cupy.asarray(x), dtype) for x in (Q, K, V)]
    r = kernels.forward(algorithm, *args, M=M, dtype=dtype, count_io=True, poison=True)
    assert r.io == cost(algorithm, N=N, d=d, M=M)
    q, k, v = (_rounded(x, dtype) for x in (Q, K, V))
    ref = attention(q, k, v)
    out = np.asarray(kernels.to_float32(r.O, dtype).get(), dtype=np.float64)
    assert np.isfinite(out).all()
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 4 * TOL[dtype]  # GPU expf/logf: a few ulp
    timed = kernels.forward(algorithm, *args, M=M, dtype=dtype, count_io=False)
    assert timed.io is None
    assert cupy.array_equal(timed.O, r.O)


# the GPU check script's pure parts (it cannot run here; these keep its report code honest) ---------------


def _gpu_check_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"
    spec = importlib.util.spec_from_file_location("attnio_gpu_check", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_gpu_check_parses_ncu_csv_and_skips_the_units_row():
    g = _gpu_check_module()
    text = (
        "==PROF== Connected to process 1\n"
        '"ID","Process ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum"\n'
        '"","","","byte","byte"\n'
        '"0","1","void flash2_fwd<float>(...)","1,048,576","65536"\n'
        '"1","1","void square_tiling_phase1<float>(...)","2097152","4096"\n'
    )
    rows = g._parse_ncu_csv(text)
    assert [r["ID"] for r in rows] == ["0", "1"]
    assert float(rows[0]["dram__bytes_read.sum"]) == 1048576.0
    assert g._parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM") == []


def test_gpu_check_summary_renders_every_section():
    g = _gpu_check_module()
    res = {
        "sections": {
            "env": {
                "status": "ok",
                "device": "NVIDIA H200",
                "compute_capability": "90",
                "sms": 132,
                "l2_bytes": 60 * 2**20,
                "shared_optin_bytes": 232448,
                "max_M_words": 58112,
                "cuda_runtime": 13000,
                "cupy": "14.2.0",
                "torch": None,
                "copy_bytes_per_s": 4.3e12,
                "fp16_tensor_flops": 7.9e14,
                "fp32_matmul_flops": 5e13,
            },
            "counts": {"status": "fail", "rows": [{"equal": True}, {"equal": False}]},
            "accuracy": {"status": "error", "error": "RuntimeError: x"},
            "timing": {
                "status": "measured",
                "rows": [
                    {
                        "N": 4096,
                        "d": 64,
                        "dtype": "float16",
                        "kernel": "flash2",
                        "ms": 1.5,
                        "cupy_standard_ratio": 2.0,
                        "torch_sdpa_ratio": None,
                        "fraction_of_copy_bw": 0.1,
                        "fraction_of_tensor_peak": 0.001,
                    },
                    {"N": 8192, "d": 64, "dtype": "float16", "skipped": "time budget"},
                ],
            },
            "ncu": {"status": "counters not permitted", "detail": "ERR_NVGPUCTRPERM"},
        }
    }
    text = g.summary(res)
    assert "**counts**: fail (1/2 cases)" in text
    assert "RuntimeError: x" in text
    assert "| 4096 | 64 | float16 | flash2 | 1.500 | 2.00 | — | 0.100 | 0.0010 |" in text
    assert "counters not permitted" in text


def test_gpu_check_without_a_gpu_says_so_and_exits_2(tmp_path, monkeypatch):
    g = _gpu_check_module()
    monkeypatch.setenv("ATTNIO_FORCE_CPU", "1")
    from attnio.algorithms.backend import gpu_available

    gpu_available.cache_clear()
    try:
        assert g.main(["--out", str(tmp_path)]) == 2
    finally:
        gpu_available.cache_clear()
    import json

    assert json.loads((tmp_path / "results.json").read_text())["status"].startswith("no GPU")
