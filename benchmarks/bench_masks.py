"""Masks (bounds/masks.py): block-mask and pair-count times against their targets, from one run; ratios < 1 are
within target. Also the decode and mask figures the closing notes quote.

0. The CLI's masked count at N = 2^17 (`attnio run flash2 --N 131072 --d 128 --M 65536 --mask window:4096,0
   --count-only`, io-optimal tiles 251 x 1): the run through `Mask.block_rows` (one Q block at a time) against the
   old path (the full T_r x T_c block mask, `Mask.blocks`), time and peak traced memory; target 1 s, 200 MB.
1. Named families, N = 2^17 (N_q = N_kv), 128 × 128 tiles: block mask + pair count + masked FA-2 count;
   target 1 s each.
2. An arbitrary FlexAttention mask_mod (vectorised NumPy), N = 16384, 128 × 128 tiles; target 10 s.
3. Split-KV ÷ no-split bytes at the heuristic's split count on the H200 (Llama-style GQA, N_kv = 32768, 131072).
4. FA-2 forward ÷ best masked lower bound under sliding-window and block-sparse masks (three configurations).
5. Kernel conventions (docs/masks.md, docs/serving.md): K rows per query row at attnio's tiles and FA-2's,
   whole-tile ÷ span loads, varlen ÷ packed documents, FA-2's split rule and FlashMLA's row blocks.

    .venv/bin/python benchmarks/bench_masks.py [5]
"""

from __future__ import annotations

import time

import numpy as np

from attnio.bounds.masks import (
    BlockSparse,
    Causal,
    Document,
    MaskMod,
    PrefixLM,
    SlidingWindow,
    flash2_masked_words,
    masked_lower_bound,
)
from attnio.bounds.serving import Decode, decode_count
from attnio.core.workload import Workload


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def peak(fn):
    """(result, seconds, peak MB of traced allocations) of one call."""
    import tracemalloc

    tracemalloc.start()
    out, t = timed(fn)
    mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, t, mb


def conventions() -> None:
    print("5. kernel conventions, d = 128, bf16, H100 preset")
    from attnio.algorithms.run import run
    from attnio.bounds.serving import mla

    w = Workload.build(N=32768, d=128, gpu="h100", dtype="bf16")
    win = SlidingWindow(4096, 0)
    for tiles in (None, "fa2"):
        r = run("flash2", w, mask=win, tiling=tiles, load="tile" if tiles else "span", count_only=True)
        print(f"   window (4096, 0), N = 32768, tiles {r.tiling.B_r} x {r.tiling.B_c} ({r.tiling.tiles}, {r.tiling.load}): "
              f"K rows per query row {r.measurement.per_array['K'].reads_words / (32768 * 128):.2f}")
    for n, left in ((131072, 1000), (32768, 100), (131072, 16)):
        wn = Workload.build(N=n, d=128, gpu="h100", dtype="bf16")
        s_, t_ = (flash2_masked_words(wn, SlidingWindow(left, 0), 128, 128, grouped=False, load=ld)[0] for ld in ("span", "tile"))
        print(f"   window ({left}, 0), N = {n}, 128 x 128: tile / span reads {t_ / s_:.3f}")
    for lens in ([1000, 3000, 500, 2500, 7000, 300, 2084], [100] * 300):
        cu = [0, *np.cumsum(lens).tolist()]
        wd = Workload.build(N=cu[-1], d=128, gpu="h100", dtype="bf16")
        v, p = (flash2_masked_words(wd, Document(cu), 128, 64, grouped=False, load="tile", documents=dd)[0] for dd in ("varlen", "packed"))
        print(f"   documents {len(lens)} sequences, N = {cu[-1]}, 128 x 64 whole tiles: varlen / packed reads {v / p:.3f}")
    wg = Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=32768, d=128, dtype="bf16", gpu="h200")
    own, fa2 = decode_count(wg, Decode(gpu="h200")), decode_count(wg, Decode(gpu="h200", split_rule="fa2"))
    print(f"   decode, H200 heuristic ({own.splits} splits): fa2 split rule / attnio's bytes {fa2.bytes_total / own.bytes_total:.5f}")
    wm, _ = mla("absorbed", batch=1, heads=128, Nq=2, Nkv=32768, M=Workload.build(N=1, d=1, gpu="h200", dtype="bf16").M)
    a, k = decode_count(wm, Decode(splits=1, shared_kv=True)), decode_count(wm, Decode(splits=1, shared_kv=True, row_block=64))
    print(f"   MLA 128 heads x 2 tokens: row blocks {a.T_q} (attnio) vs {k.T_q} (FlashMLA's 64): K bytes ratio "
          f"{k.words['K'][0] / a.words['K'][0]:.3f}")


def main() -> None:
    import sys

    if sys.argv[1:] == ["5"]:
        conventions()
        return
    N = 1 << 17
    print("0. the CLI's masked count, window (4096, 0), N = 2^17, d = 128, M = 65536 (target 1 s, 200 MB)")
    from attnio.algorithms.run import run

    w1 = Workload.build(N=N, d=128, M=65536)
    win = SlidingWindow(4096, 0)
    r, t_new, mb_new = peak(lambda: run("flash2", w1, count_only=True, mask=win))
    B_r, B_c = r.tiling.B_r, r.tiling.B_c
    bm, t_old, mb_old = peak(lambda: win.blocks(N, N, B_r, B_c))  # the old path's block mask alone
    assert bm.kv_rows == win.block_rows(N, N, B_r, B_c).kv_rows
    print(f"   tiles {B_r} x {B_c}: run {t_new:.2f} s, {mb_new:.0f} MB (time ratio to target {t_new:.2f}); "
          f"old path's block mask alone {t_old:.2f} s, {mb_old:.0f} MB; new / old: time {t_new / t_old:.3f}, "
          f"memory {mb_new / mb_old:.4f}")
    print("1. named families, N = 2^17, tiles 128 x 128 (target 1 s)")
    w = Workload.build(heads=32, kv_heads=8, N=N, d=128, dtype="bf16", gpu="h100")
    for name, m in (("causal", Causal()), ("window (4096, 0)", SlidingWindow(4096, 0)),
                    ("document x 16 & causal", Document(np.linspace(0, N, 17, dtype=int)) & Causal()),
                    ("prefix-LM 8192", PrefixLM(8192))):
        (_, t1) = timed(lambda m=m: m.blocks(N, N, 128, 128))
        (_, t2) = timed(lambda m=m: m.pairs(N, N))
        (_, t3) = timed(lambda m=m: flash2_masked_words(w, m, 128, 128, grouped=True))
        print(f"   {name:<24} block mask {t1:6.3f} s ({t1 / 1:.2f}), pairs {t2:6.3f} s ({t2:.2f}), FA-2 count {t3:6.3f} s ({t3:.2f})")
    n = 16384
    print(f"2. arbitrary mask_mod, N = {n} (target 10 s)")
    mod = MaskMod(lambda b, h, q, k: ((q - k) % 7 == 0) | (k <= q // 2))
    bm, t = timed(lambda: mod.blocks(n, n, 128, 128))
    print(f"   mask_mod block mask {t:.2f} s, ratio {t / 10:.2f}; {bm.counts}")
    print("3. split-KV / no-split bytes, H200 heuristic, H = 32, H_kv = 8, d = 128, bf16, batch 1")
    for nkv in (32768, 131072):
        w = Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=nkv, d=128, dtype="bf16", gpu="h200")
        c, one = decode_count(w, Decode(gpu="h200")), decode_count(w, Decode(1))
        print(f"   N_kv = {nkv}: {c.splits} splits, {c.bytes_total:,} / {one.bytes_total:,} = {c.bytes_total / one.bytes_total:.4f}")
    print("4. FA-2 forward (grouped) / best masked lower bound, H = 32, H_kv = 8, d = 128, bf16, H100 SM")
    from attnio.algorithms.workloads import tiling

    for nn, mask, name in ((8192, SlidingWindow(1024, 0), "window (1024, 0)"), (32768, SlidingWindow(4096, 0), "window (4096, 0)"),
                           (8192, None, "block-sparse band +-1 + global column, 128")):
        w = Workload.build(heads=32, kv_heads=8, N=nn, d=128, dtype="bf16", gpu="h100")
        if mask is None:
            T = nn // 128
            i, j = np.indices((T, T))
            mask = BlockSparse((np.abs(i - j) <= 1) | (j == 0), 128, 128)
        t = tiling("flash2", w, "grouped")
        r, wr = flash2_masked_words(w, mask, t.B_r, t.B_c, grouped=True)
        lb_id, lb = masked_lower_bound(w, mask)
        print(f"   N = {nn}, {name}: {r + wr:,} words / {lb_id} {float(lb):,.0f} = {float((r + wr) / lb):.3f}")
    conventions()


if __name__ == "__main__":
    main()
