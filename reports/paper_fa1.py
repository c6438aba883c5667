"""FlashAttention (Dao et al. 2022, arXiv 2205.14135) Figure 2, side by side with attnio's exact counts.

Figure 2 (left): GPT-2 medium attention on an A100 — sequence length 1024, head dimension 64, 16 heads,
batch 64 — forward + backward HBM reads + writes: standard attention 40.3 GB, FlashAttention 4.4 GB (arXiv v2;
a later printing gives 35.3 GB for standard attention, with a key-padding mask and no dropout). Figure 2
(middle): FlashAttention's forward HBM accesses fall as the block size B_c goes 64, 128, 256, 512 (values only
plotted). Nothing here is fitted to those numbers: every count is the machine's (count-only) and equals the
exact formulas (tests).

Assumptions (printed with the figure, :data:`ASSUMPTIONS`):

- fast memory M = 192 KiB (the paper's "192KB of on-chip SRAM per SM", §2.1) of fp16 words: 98,304 words;
- every array (Q, K, V, O, dO, dQ, dK, dV, S, P, dS, dP, statistics) moves as fp16, 2 bytes per word;
  GB = 10⁹ bytes;
- standard = attnio's ``standard`` forward (S and P materialised, tiled so each step fits M) and
  ``standard-bwd`` (FlashAttention Algorithm 3); FlashAttention = ``flash1`` (Algorithm 1, published blocks
  B_c = ⌈M/4d⌉, B_r = min(B_c, d)) and ``flash1-bwd`` (Algorithm 4); 64 × 16 = 1024 independent heads;
- left out by the model: dropout masks (the standard implementation writes and reads an N×N mask; FlashAttention
  regenerates it from the RNG state), key-padding masks, separate kernels re-reading their inputs
  (softmax, scaling, masking as separate passes), fp32 statistics, the L2 cache (40 MB: can absorb re-reads, so
  measured DRAM bytes can fall below a two-level count) and the sector granularity of DRAM accesses.

>>> f = fa1_fig2(sweep=False)
>>> f["workload"]["M"], f["rows"][0]["algorithm"]
(98304, 'standard')
"""

from __future__ import annotations

from typing import Any

PAPER = {
    "source": "Dao et al., FlashAttention, arXiv 2205.14135, Figure 2 (left and middle)",
    "standard_GB": 40.3,
    "standard_GB_later_printing": 35.3,
    "flash_GB": 4.4,
    "sweep_trend": "forward HBM accesses fall as B_c grows 64 → 512 (values only plotted)",
}

ASSUMPTIONS = (
    "M = 192 KiB per SM (paper §2.1) / 2 bytes = 98,304 fp16 words; every array moves as fp16 (2 B/word); GB = 10^9 B",
    "standard = attnio standard (S, P materialised, tiles fit M) + standard-bwd (FA Alg. 3); "
    "FlashAttention = flash1 (FA Alg. 1, published blocks B_c = ceil(M/4d), B_r = min(B_c, d)) + flash1-bwd (FA Alg. 4)",
    "64 x 16 = 1024 independent heads of N = 1024, d = 64; no causal mask (the figure's setting is not stated as causal)",
    "not modelled: dropout masks (standard: an N x N mask written and read), key-padding masks, separate kernels "
    "re-reading inputs, fp32 statistics, the 40 MB L2 cache (absorbs re-reads), DRAM sector granularity",
    "nothing is fitted to the paper's figures; counts are exact for the schedules named",
)

BLOCK_SIZES = (64, 128, 256, 512)


def workload() -> Any:
    from attnio.core.workload import Workload

    return Workload.build(batch=64, heads=16, N=1024, d=64, dtype="fp16", gpu="a100")


def _train(name: str, w: Any) -> dict[str, int]:
    from attnio.reports.figures import training_step

    ts = training_step(name, N=w.Nq, d=w.d, dv=w.dv, M=w.M)
    k = w.query_heads_total
    f, b = ts.forward.measurement, ts.backward.measurement
    return {
        "forward_words": k * f.io_words,
        "backward_words": k * b.io_words,
        "forward_overflowed": f.overflowed,
        "backward_overflowed": b.overflowed,
        "backward": ts.backward.algorithm,
    }


def fa1_fig2(sweep: bool = True) -> dict[str, Any]:
    """attnio's forward + backward bytes for the figure's workload beside the paper's, and the B_c sweep."""
    w = workload()
    bpw = w.bytes_per_word
    rows = []
    for name, paper in (("standard", PAPER["standard_GB"]), ("flash1", PAPER["flash_GB"]), ("flash1-fit", None), ("flash2", None)):
        t = _train(name, w)
        total = bpw * (t["forward_words"] + t["backward_words"])
        rows.append(
            {
                "algorithm": name,
                "backward": t["backward"],
                "forward_bytes": bpw * t["forward_words"],
                "backward_bytes": bpw * t["backward_words"],
                "total_bytes": total,
                "total_GB": total / 1e9,
                "paper_GB": paper,
                "ratio_to_paper": None if paper is None else total / 1e9 / paper,
                "overflowed": t["forward_overflowed"] or t["backward_overflowed"],
            }
        )
    std = rows[0]
    std["ratio_to_later_printing"] = std["total_GB"] / PAPER["standard_GB_later_printing"]
    out: dict[str, Any] = {
        "workload": w.as_dict(),
        "paper": PAPER,
        "assumptions": list(ASSUMPTIONS),
        "rows": rows,
        "standard_over_flash1": {
            "attnio": rows[0]["total_bytes"] / rows[1]["total_bytes"],
            "paper": PAPER["standard_GB"] / PAPER["flash_GB"],
        },
    }
    if sweep:
        out["sweep"] = block_sweep(w)
    return out


def block_sweep(w: Any) -> list[dict[str, Any]]:
    """flash1 forward with B_c ∈ {64, 128, 256, 512} (B_r = min(B_c, d), which does not change the count)."""
    from attnio.algorithms.flash1 import Flash1Tiling
    from attnio.reports.figures import forward_count

    rows = []
    for bc in BLOCK_SIZES:
        m = forward_count("flash1", N=w.Nq, d=w.d, M=w.M, tiling=Flash1Tiling(min(bc, w.d), bc))
        words = w.query_heads_total * m.io_words
        rows.append(
            {
                "B_c": bc,
                "forward_bytes": w.bytes_per_word * words,
                "forward_GB": w.bytes_per_word * words / 1e9,
                "peak_fast_words": m.peak_fast_words,
                "fits_M": not m.overflowed,
            }
        )
    return rows


def render_text(f: dict[str, Any]) -> str:
    w = f["workload"]
    lines = [
        f"FlashAttention Figure 2, side by side ({f['paper']['source']})",
        f"workload: batch {w['batch']} x {w['heads']} heads, N = {w['Nq']}, d = {w['d']}, {w['dtype']} "
        f"({w['bytes_per_word']} B/word), M = {w['M']:,d} words ({w['memory']})",
        "",
        f"{'algorithm':<12} {'forward GB':>11} {'backward GB':>12} {'total GB':>9} {'paper GB':>9} {'ratio':>7}",
    ]
    for r in f["rows"]:
        paper = "" if r["paper_GB"] is None else f"{r['paper_GB']:.1f}"
        ratio = "" if r["ratio_to_paper"] is None else f"{r['ratio_to_paper']:.3f}"
        lines.append(
            f"{r['algorithm']:<12} {r['forward_bytes'] / 1e9:>11.3f} {r['backward_bytes'] / 1e9:>12.3f} {r['total_GB']:>9.3f} "
            f"{paper:>9} {ratio:>7}" + ("  (published blocks exceed M: audit mode)" if r["overflowed"] else "")
        )
    std = f["rows"][0]
    lines += [
        f"standard vs the later printing's {f['paper']['standard_GB_later_printing']} GB: ratio {std['ratio_to_later_printing']:.3f}",
        f"standard / FlashAttention: attnio {f['standard_over_flash1']['attnio']:.2f}x, paper {f['standard_over_flash1']['paper']:.2f}x",
    ]
    if "sweep" in f:
        lines += ["", "Figure 2 (middle): flash1 forward bytes by block size B_c (paper: " + f["paper"]["sweep_trend"] + ")"]
        prev = None
        for r in f["sweep"]:
            trend = "" if prev is None else ("  falls" if r["forward_GB"] < prev else "  does not fall")
            lines.append(
                f"  B_c = {r['B_c']:>3}: {r['forward_GB']:.3f} GB  peak {r['peak_fast_words']:,d} words"
                + ("" if r["fits_M"] else " > M") + trend
            )
            prev = r["forward_GB"]
    lines += ["", "assumptions:"] + [f"  - {a}" for a in f["assumptions"]]
    return "\n".join(lines)
