"""Run the CUDA kernel source on the CPU (emulate.cpp): the CI stand-in for a GPU, for counts and numerics.

The kernels' own text is compiled with g++ (``ATTNIO_HOST_EMULATION``): each CUDA thread of a block becomes a
``std::thread``, ``__syncthreads`` a ``std::barrier``, and blocks run one after another. Two builds:

- ``"asan"``: AddressSanitizer + UndefinedBehaviorSanitizer. Shared memory is a heap array of exactly the
  plan's words, so an access past the M-word budget aborts the run.
- ``"tsan"``: ThreadSanitizer: two threads touching one shared word between barriers (a missing
  ``__syncthreads``) aborts the run.

Both are instrumented (``-DATTNIO_COUNT_IO``); ``"plain"`` is the timed build (no counter, no sanitizer),
used to check the counter does not change the arithmetic. What this does not check: warp scheduling,
memory coalescing, GPU speed, NVRTC-specific compilation (the nvcc and GPU tests cover those).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnio.algorithms.cuda.launch import KernelPlan
from attnio.core.counts import IOCount
from attnio.core.errors import Unsupported

HERE = Path(__file__).resolve().parent
SOURCES = ("attnio_common.cu", "flash2.cu", "square_tiling.cu", "emulate.cpp")
FLAGS = {
    "asan": [
        "-O1",
        "-g",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=undefined",
        "-DATTNIO_COUNT_IO",
    ],
    "tsan": ["-O1", "-g", "-fsanitize=thread", "-DATTNIO_COUNT_IO"],
    "plain": ["-O2"],
}
DTYPE_CODE = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def compiler() -> str | None:
    return shutil.which(os.environ.get("CXX", "g++"))


def _paths(variant: str) -> tuple[list[str], Path]:
    cxx = compiler()
    if cxx is None:
        raise Unsupported("the CUDA emulator needs a C++20 compiler (g++); none on PATH")
    flags = FLAGS[variant]
    h = hashlib.sha256(" ".join([cxx, *flags]).encode())
    for name in SOURCES:
        h.update((HERE / name).read_bytes())
    exe = Path(tempfile.gettempdir()) / f"attnio-emulate-{h.hexdigest()[:16]}" / f"emulate_{variant}"
    return [cxx, "-std=c++20", "-pthread", *flags, f"-I{HERE}", str(HERE / "emulate.cpp")], exe


@functools.cache
def build(variant: str) -> Path:
    """Compile the emulator (cached under the temp dir by source hash and flags) and return the executable.
    The first call compiles every variant not yet cached, in parallel."""
    todo = []
    for v in FLAGS:
        cmd, exe = _paths(v)
        if not exe.exists():
            exe.parent.mkdir(parents=True, exist_ok=True)
            tmp = exe.with_name(f".{exe.name}.{os.getpid()}")
            todo.append(
                (
                    cmd + ["-o", str(tmp)],
                    tmp,
                    exe,
                    subprocess.Popen(
                        cmd + ["-o", str(tmp)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                    ),
                )
            )
    for cmd, tmp, exe, proc in todo:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"emulator build failed ({' '.join(cmd)}):\n{err[-4000:]}")
        os.replace(tmp, exe)
    return _paths(variant)[1]


@dataclass(frozen=True)
class EmulatedRun:
    O: np.ndarray  # N×dv in the storage dtype (uint16 bit patterns for float16/bfloat16)
    stat: np.ndarray  # L: the logsumexp of each row of scale·QKᵀ (both kernels), float32
    io: IOCount  # in-kernel counter (zero in the "plain" build)
    stderr: str


def storage(x: np.ndarray, dtype: str) -> np.ndarray:
    """The bit patterns the kernel reads for ``x`` in ``dtype`` (float16 by NumPy; bfloat16 rounded to
    nearest even by hand, as the kernel's own conversion does)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if dtype == "float32":
        return x
    if dtype == "float16":
        return x.astype(np.float16).view(np.uint16)
    u = x.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def widen(bits: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values of storage-dtype data (inverse of :func:`storage` up to rounding)."""
    if dtype == "float32":
        return bits.astype(np.float32)
    if dtype == "float16":
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def run(
    plan: KernelPlan, Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float, *, variant: str = "asan"
) -> EmulatedRun:
    """Run ``plan``'s kernels on the CPU over float32 data ``Q, K, V`` (converted to ``plan.dtype``)."""
    exe = build(variant)
    N, d, dv = plan.N, plan.d, plan.dv
    assert Q.shape == (N, d) and K.shape == (N, d) and V.shape == (N, dv)
    if plan.algorithm == "flash2":
        kernel, b1, b2 = "flash2", plan.tiling.B_r, plan.tiling.B_c  # type: ignore[union-attr]
    else:
        kernel, b1, b2 = "square", plan.tiling.B, 0  # type: ignore[union-attr]
    threads = plan.launches[0].block[0]
    with tempfile.TemporaryDirectory(prefix="attnio-emu-") as tmp:
        fin, fout = Path(tmp) / "in.bin", Path(tmp) / "out.bin"
        with open(fin, "wb") as f:
            for x in (Q, K, V):
                storage(x, plan.dtype).tofile(f)
        words = max(ln.shared_words for ln in plan.launches)  # the plan's budget, allocated exactly
        args = [
            str(exe),
            kernel,
            DTYPE_CODE[plan.dtype],
            str(N),
            str(d),
            str(dv),
            str(b1),
            str(b2),
            repr(float(scale)),
            str(threads),
            str(words),
            str(fin),
            str(fout),
        ]
        env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66", ASAN_OPTIONS="detect_leaks=0")
        r = subprocess.run(args, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"emulated {plan.algorithm} failed (exit {r.returncode}):\n{r.stderr[-6000:]}")
        raw = fout.read_bytes()
    item = 4 if plan.dtype == "float32" else 2
    o_bytes = N * dv * item
    O = np.frombuffer(raw[:o_bytes], dtype=np.float32 if item == 4 else np.uint16).reshape(N, dv).copy()
    stat = np.frombuffer(raw[o_bytes : o_bytes + 4 * N], dtype=np.float32).copy()
    reads, writes = (int(v) for v in np.frombuffer(raw[o_bytes + 4 * N :], dtype=np.uint64))
    return EmulatedRun(O, stat, IOCount(reads, writes), r.stderr)
