"""Counting Triton kernels at production shape: the full interpreter run (every program) against
attnio.triton.scale's fast count, per kernel. Prints times and agreement measured in one run; asserts nothing.
Targets: attnio's FA-2 forward and backward at production shape in ≤ 60 s each, a paged decode of 64 sequences ×
128k tokens in ≤ 30 s (2 cores).

    .venv/bin/python benchmarks/bench_triton_scale.py [--only fa2_fwd,decode,...] [--skip-production]

Per kernel: a small shape where both run (the fast count compared with the full run per tensor and field) and a
production shape where only the fast count runs (compared with the kernel's exact formula where it has one).
Kernels (fp16 for attnio's, fp32 for the shipped-shape kernels of tests/kernels_shipped, whose tl.dot mixes
fp32 and the input type; d = 128, 32 heads, 8 K/V heads at production):

- fa2_fwd: attnio's FA-2 forward, causal, blocks 64×64; small 1×4 heads (2 K/V), N = 512; production 8 × N = 32768
  (formula attnio.triton.kernels.fa2_fwd.traffic);
- fa2_bwd: attnio's FA-2 backward (preprocess + main), causal, blocks 64×64; small as above; production
  8 × N = 32768 (formula fa2_bwd.exact_count; K/V block j's program visits the query blocks from j on, so the
  main launch's fit runs from the cheap right end: program 0, the one long program, runs once);
- square: attnio's square tiling (two launches, S in slow memory), causal, B = 64; small as above; production
  8 × N = 4096 (formula square_tiling.traffic; the witness's S, 1 GiB, is allocated by torch.empty and only the programs run touch it);
- dense, varlen, paged (page 16), token_pool, split (split-KV + combine, under a fake GPU of 10^6 SMs): the
  shipped-shape kernels, non-causal, blocks 16; small 1×4 heads (2 K/V), N = 256; production 8 × N = 4096;
- decode: the shipped paged kernel with N_q = 1, page 16, length step 1024; small 2 × 4 heads (2 K/V),
  N_kv = 4096 (fast along N_kv compared with the full run); production 64 sequences × 131072 tokens
  (formula: per program q's 128 words of its one row, ⌈N_kv/16⌉ block-table words, one seq_lens word and
  N_kv·(d + d_v) K and V words; writes 128);
- sglang_prefill, flag_gems_sdpa, sage_causal: third-party causal forward prefill kernels as they ship, fetched
  and run through benchmarks/kernel_gallery.py's adapters and pins (sglang 0.5.23's packed-batch
  ``context_attention_fwd``, one sequence of N tokens per batch; FlagGems 5.0.2's
  ``scaled_dot_product_attention_forward``, BLOCK_M 64, BLOCK_N 32 pinned; SageAttention 1.0.6's causal int8
  forward, its two quantization launches (Q, K) counted with the attention launch); all three take GQA, so the
  shapes are fa2_fwd's: small 1×4 heads (2 K/V), N = 512; production 8 × 32 heads (8 K/V), N = 32768, fp16
  (formula: the gallery's hand-derived per-tensor bytes, compared tensor by tensor). When a package cannot be
  fetched (no network, no cache) its row prints one line saying so and the others run.

Times are CPU seconds (``time.process_time``, the process's own: both cores' worth when torch uses two) and wall
seconds of one run each; the machine's load changes the wall times. BLAS runs one thread (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, MKL_NUM_THREADS default to 1 here): the interpreter's ``tl.dot`` is a small numpy matmul
whose OpenBLAS threads, spinning on a loaded machine, cost far more CPU than the product.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ["TRITON_INTERPRET"] = "1"
# one BLAS thread (module docstring)
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from attnio.core.counts import IOCount  # noqa: E402
from attnio.core.workload import Workload  # noqa: E402
from attnio.triton import scale  # noqa: E402
from attnio.triton.fake_gpu import fake_gpu  # noqa: E402

BLOCK = (64, 64)


def timed(f):  # noqa: ANN001, ANN201
    c, t = time.process_time(), time.perf_counter()
    out = f()
    return out, time.process_time() - c, time.perf_counter() - t


def _bwd(q, k, v, o, do, lse, dq, dk, dv, causal):  # noqa: ANN001, ANN202
    from attnio.triton.kernels.fa2_bwd import fa2_backward

    fa2_backward(q, k, v, o, do, lse, causal=causal, B_r=BLOCK[0], B_c=BLOCK[1], dq=dq, dk=dk, dv=dv)


def _square(q, k, v, o, lse, causal):  # noqa: ANN001, ANN202
    from attnio.triton.kernels.square_tiling import square_tiling_forward

    square_tiling_forward(q, k, v, causal=causal, B=BLOCK[0], o=o, lse=lse)


def _wl(batch: int, heads: int, kv: int, N: int, causal: bool, dtype: str, Nq: int | None = None) -> Workload:
    return Workload.build(batch=batch, heads=heads, kv_heads=kv, Nq=Nq if Nq is not None else N, Nkv=N, d=128,
                          causal=causal, dtype=dtype, M=10**5)


def kernels() -> dict[str, dict[str, Any]]:
    """name -> small and production workloads, count() keywords and the exact formula (or None)."""
    from kernels_shipped import launchers as L

    from attnio.triton.kernels import fa2_bwd, fa2_fwd, square_tiling

    def bwd_formula(w: Workload) -> IOCount:
        return fa2_bwd.exact_count(batch=w.batch, heads=w.heads, kv_heads=w.kv_heads, Nq=w.Nq, Nkv=w.Nkv, d=w.d,
                                   dv=w.dv, causal=w.causal, B_c=BLOCK[1])

    def decode_formula(w: Workload) -> IOCount:
        per = w.d + -(-w.Nkv // 16) + 1 + w.Nkv * (w.d + w.dv)
        return IOCount(w.batch * w.heads * per, w.batch * w.heads * w.dv)

    names = {"query": "q", "key": "k", "value": "v", "out": "o", "softmax_scale": "sm_scale"}
    shipped = {"dense": {"launch": L.attention, "args": names}, "varlen": {"launch": L.varlen},
               "paged": {"launch": L.paged, "page_size": 16}, "token_pool": {"launch": L.token_pool, "page_size": 1},
               "split": {"launch": L.by_sm_count}}
    out: dict[str, dict[str, Any]] = {
        "fa2_fwd": {"small": _wl(1, 4, 2, 512, True, "fp16"), "prod": _wl(8, 32, 8, 32768, True, "fp16"),
                    "kw": {"block": BLOCK}, "formula": lambda w: fa2_fwd.traffic(w, BLOCK[0])},
        "fa2_bwd": {"small": _wl(1, 4, 2, 512, True, "fp16"), "prod": _wl(8, 32, 8, 32768, True, "fp16"),
                    "kw": {"launch": _bwd}, "formula": bwd_formula},
        "square": {"small": _wl(1, 4, 2, 512, True, "fp16"), "prod": _wl(8, 32, 8, 4096, True, "fp16"),
                   "kw": {"launch": _square}, "formula": lambda w: square_tiling.traffic(w, BLOCK[0])},
    }
    for name, kw in shipped.items():
        out[name] = {"small": _wl(1, 4, 2, 256, False, "fp32"), "prod": _wl(8, 32, 8, 4096, False, "fp32"),
                     "kw": kw, "formula": None}
    out["decode"] = {"small": _wl(2, 4, 2, 4096, False, "fp32", Nq=1), "prod": _wl(64, 32, 8, 131072, False, "fp32", Nq=1),
                     "kw": {"launch": L.paged, "page_size": 16, "length_step": 1024}, "formula": decode_formula}
    for name, entry in GALLERY_ROWS.items():
        out[name] = {"small": _wl(1, 4, 2, 512, True, "fp16"), "prod": _wl(8, 32, 8, 32768, True, "fp16"),
                     "gallery": entry, "formula": None}
    return out


#: third-party rows: bench name -> benchmarks/kernel_gallery.py entry (module docstring)
GALLERY_ROWS = {"sglang_prefill": "sglang-prefill", "flag_gems_sdpa": "flag-gems-sdpa",
                "sage_causal": "sage-int8-per-block-causal"}


def gallery_row(k: dict[str, Any]) -> dict[str, Any] | str:
    """A third-party row made runnable: its gallery kernel fetched, loaded and bound to its adapter (``kw``), its
    pins and fake GPU (``context``) and its hand formula (``hand``: workload -> tensor -> (read, written)
    bytes); or one line saying why the package could not be fetched."""
    import contextlib
    import subprocess

    import kernel_gallery as g

    from attnio.triton import pin_config

    kern = next(x for x in g.GALLERY if x.name == k["gallery"])
    try:
        root = g.fetch(kern.package, kern.version)
    except subprocess.CalledProcessError as e:  # pip printed why above
        return f"skipped: {kern.package}=={kern.version} could not be fetched (pip download exited {e.returncode})"
    except (OSError, RuntimeError) as e:
        return f"skipped: {kern.package}=={kern.version} could not be fetched ({type(e).__name__}: {str(e)[:200]})"
    launch = g.bind(kern, [g.load_file(root, f, kern.fakes) for f in kern.files])

    def context() -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        if kern.fake_gpu is not None:
            stack.enter_context(fake_gpu(arch=kern.fake_gpu))
        for kfn, cfg in kern.pins.items():
            stack.enter_context(pin_config(g._attr(launch, kfn), **cfg))
        return stack

    def hand(w: Workload) -> dict[str, tuple[int, int]]:
        base = {"heads": w.heads, "kv_heads": w.kv_heads, "d": w.d, "dv": w.dv, "causal": w.causal, "dtype": w.dtype}
        packed = "cu_seqlens" in inspect.signature(kern.adapter).parameters
        shape = base | ({"N": w.Nq, "seqlens": [w.Nq] * w.batch} if packed else
                        {"batch": w.batch, "Nq": w.Nq, "Nkv": w.Nkv})
        names = g.variables(kern, shape, g.workload_of(shape))
        return {n: (g.evaluate(r, names), g.evaluate(x, names)) for n, (r, x) in kern.formula.items()}

    return k | {"kw": {"launch": launch, "args": kern.args}, "context": context, "hand": hand,
                "label": f"{kern.package}=={kern.version} {kern.function}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    table = kernels()
    ap.add_argument("--only", default=None, help="comma-separated kernels (default all): " + ", ".join(table))
    ap.add_argument("--skip-production", action="store_true")
    ap.add_argument("--skip-small", action="store_true")
    a = ap.parse_args()
    chosen = a.only.split(",") if a.only else list(table)
    bad = [n for n in chosen if n not in table]
    if bad:
        ap.error(f"--only {bad[0]}: one of {', '.join(table)}")
    for name in chosen:
        k = table[name]
        if "gallery" in k:
            k = gallery_row(k)
            if isinstance(k, str):
                print(f"{name}: {k}", flush=True)
                continue
        # the split-KV launcher splits below half the SMs; a gallery kernel runs as the gallery runs it
        with k["context"]() if "context" in k else fake_gpu("cuda", 90, sm_count=10**6):
            bench(name, k, not a.skip_small, not a.skip_production)


def bench(name: str, k: dict[str, Any], small: bool, production: bool) -> None:
    """One kernel's lines (module docstring)."""
    kw = dict(k["kw"])
    full_kw = {x: v for x, v in kw.items() if x != "length_step"}
    if small:
        s = k["small"]
        f, fc, fw = timed(lambda: scale.full_count(s, **full_kw))
        r, rc, rw = timed(lambda: scale.count(s, **kw))
        agree = all(getattr(r, x) == {n: v for n, v in getattr(f, x).items() if v or n in getattr(r, x)}
                    for x in scale.FIELDS)
        print(f"{name} small ({s.batch}x{s.heads} heads, {s.kv_heads} kv, Nq={s.Nq} Nkv={s.Nkv}, {s.dtype})"
              + (f" [{k['label']}]" if "label" in k else "") + ":")
        print(f"  full run   {fc:8.2f} CPU-s {fw:8.2f} s   {f.io_count()}")
        print(f"  fast       {rc:8.2f} CPU-s {rw:8.2f} s   {r.io_count()}  ({r.programs_run}/{r.programs_total} "
              f"programs)")
        print(f"  per tensor and field equal: {agree}; full/fast CPU time {fc / rc:.2f}x", flush=True)
    if production:
        p = k["prod"]
        r, rc, rw = timed(lambda: scale.count(p, **kw))
        print(f"{name} production ({p.batch}x{p.heads} heads, {p.kv_heads} kv, Nq={p.Nq} Nkv={p.Nkv}, {p.dtype}):")
        print(f"  fast       {rc:8.2f} CPU-s {rw:8.2f} s   {r.io_count()}  ({r.programs_run}/{r.programs_total} "
              f"programs)")
        if k["formula"] is not None:
            want = k["formula"](p)
            print(f"  equals the exact formula {want}: {r.io_count() == want}")
        if "hand" in k:
            want = k["hand"](p)
            got = {n: (r.reads_bytes.get(n, 0), r.writes_bytes.get(n, 0)) for n in set(r.reads_bytes) | set(want)}
            miss = [f"{n} counted {got[n]} formula {want.get(n, (0, 0))}" for n in sorted(got)
                    if got[n] != want.get(n, (0, 0))]
            print(f"  equals the gallery's hand formula per tensor ({sum(map(sum, want.values())):,d} bytes): "
                  f"{not miss}" + ("; " + "; ".join(miss) if miss else ""))
        print(f"  method: {r.method[:400]}{' …' if len(r.method) > 400 else ''}", flush=True)


if __name__ == "__main__":
    main()
