"""The same schedules on CuPy arrays: identical counts to NumPy, output within 1e-10 relative of the float64
reference. Skipped without CuPy and a CUDA device."""

from __future__ import annotations

import numpy as np
import pytest

from attnio.algorithms import registry
from attnio.algorithms.reference import attention
from attnio.algorithms.run import count, run

EXACT = ["flash2", "flash2-square", "flash1", "flash1-fit", "standard", "square_tiling", "kv_stationary", "split_v", "auto"]

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize(("N", "d", "dv"), [(1, 1, 1), (37, 8, 8), (64, 16, 40)])
def test_runs_on_cupy_with_the_numpy_counts(name: str, N: int, d: int, dv: int) -> None:
    import cupy

    rng = np.random.default_rng(N + d)
    Q, K, V = rng.standard_normal((N, d)), rng.standard_normal((N, d)), rng.standard_normal((N, dv))
    M = max(registry.get(name).tiling_cls.min_M(N, d, dv), 600)
    r = run(name, inputs=(cupy.asarray(Q), cupy.asarray(K), cupy.asarray(V)), M=M)
    assert r.backend == "cupy" and type(r.output).__module__.startswith("cupy")
    ref = attention(Q, K, V)
    assert float(np.max(np.abs(cupy.asnumpy(r.output) - ref))) <= 1e-10 * float(np.max(np.abs(ref)))
    assert r.measurement.io == count(name, N=N, d=d, dv=dv, M=M).io


def test_backend_option_runs_random_inputs_on_the_device() -> None:
    r = run("flash2", N=256, d=64, M=8192, seed=0, backend="cupy")
    assert r.backend == "cupy" and r.max_abs_error is not None and r.max_abs_error < 1e-10
