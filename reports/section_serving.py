"""The report's "Serving" section: decoding against a KV cache — split-KV, paged KV, fp8 K/V, MLA, the roofline
of each GPU preset, and published decode measurements beside attnio's bytes (docs/serving.md).

:func:`section` is the report's section function (one entry in ``reports/report.py``'s ``SECTIONS``). Every
count is ``attnio.bounds.serving.decode_count``, equal to the decode schedule's machine count per tensor
(tests/test_serving.py).

>>> rows = split_rows(nkvs=(4096,), gpus=("h200",))
>>> rows[0]["splits"], rows[0]["split_over_no_split"] > 1
(17, True)
"""

from __future__ import annotations

from typing import Any

from attnio.reports.compute import Context
from attnio.reports.render import Section

LLAMA = {"heads": 32, "kv_heads": 8, "d": 128}  # a Llama-style GQA layer, batch 1, one new token


def split_rows(nkvs: tuple[int, ...] = (4096, 32768, 131072), gpus: tuple[str, ...] = ("h100", "h200", "b200")) -> list[dict[str, Any]]:
    """Flash-Decoding's split heuristic on each preset: bytes with the heuristic's splits against one split."""
    from attnio.bounds.serving import Decode, decode_count, lower_bound_bytes, resolve

    from attnio.workload import Workload

    rows = []
    for gpu in gpus:
        for n in nkvs:
            w = Workload.build(**LLAMA, Nq=1, Nkv=n, dtype="bf16", gpu=gpu)
            dec = resolve(w, Decode(gpu=gpu))
            c, one = decode_count(w, dec), decode_count(w, Decode(1))
            rows.append({"gpu": gpu, "Nkv": n, "splits": dec.splits, "bytes": c.bytes_total, "no_split_bytes": one.bytes_total,
                         "split_over_no_split": c.bytes_total / one.bytes_total,
                         "over_bound": c.bytes_total / lower_bound_bytes(w, dec)})
    return rows


def page_rows(pages: tuple[int | None, ...] = (None, 1, 16, 256), Nkv: int = 32768) -> list[dict[str, Any]]:
    from attnio.bounds.serving import Decode, decode_count

    from attnio.workload import Workload

    w = Workload.build(batch=8, **LLAMA, Nq=1, Nkv=Nkv, dtype="bf16", gpu="h200")
    rows = []
    for p in pages:
        c = decode_count(w, Decode(gpu="h200", page=p))
        bt = c.words.get("BT", (0, 0))[0] * c.bpw.get("BT", 0)
        rows.append({"page": p, "splits": c.splits, "bytes": c.bytes_total, "table_bytes": bt, "apart_from_table": c.bytes_total - bt})
    return rows


def mla_rows(Nkv: int = 32768, heads: int = 128, gpu: str = "h200") -> list[dict[str, Any]]:
    from attnio.bounds.serving import decode_count, mla, roofline

    rows = []
    for form in ("absorbed", "naive"):
        for kv in (None, "fp8"):
            w, dec = mla(form, batch=1, heads=heads, Nq=1, Nkv=Nkv, kv_dtype=kv, M=10**7)
            r = roofline(w, dec, gpu)
            rows.append({"form": form, "kv_dtype": kv or "bf16", "bytes": decode_count(w, dec).bytes_total,
                         "flops": r.flops, "intensity": r.intensity, "ridge": r.ridge, "bound": r.bound})
    return rows


def _mask_cases(N: int) -> list[tuple[str, Any]]:
    import numpy as np
    from attnio.bounds.masks import BlockSparse, Causal, Document, PrefixLM, SlidingWindow

    T = -(-N // 128)
    i, j = np.indices((T, T))
    local_global = (np.abs(i - j) <= 1) | (j == 0)  # a band of three 128-blocks and a global first block
    return [
        ("none", SlidingWindow(-1, -1)),
        ("causal", Causal()),
        ("sliding window (1024, 0)", SlidingWindow(1024, 0)),
        ("sliding window (4096, 0)", SlidingWindow(4096, 0)),
        ("document, 4 sequences, causal", Document([0, N // 4, N // 2, 3 * N // 4, N]) & Causal()),
        ("prefix-LM, prefix 1024", PrefixLM(1024)),
        ("block-sparse 128: band ±1 + global column", BlockSparse(local_global, 128, 128)),
    ]


def mask_rows(N: int = 8192, gpu: str = "h100") -> list[dict[str, Any]]:
    """FA-2 forward (grouped, io-optimal blocks) under each mask: its exact words (the block-mask formula) and
    the best masked lower bound, for a Llama-style GQA layer in bf16 on one SM's shared memory."""
    from attnio.algorithms.workloads import tiling
    from attnio.bounds.masks import flash2_masked_words, masked_lower_bound

    from attnio.workload import Workload

    w = Workload.build(**LLAMA, N=N, dtype="bf16", gpu=gpu)
    t = tiling("flash2", w, "grouped")
    rows = []
    for name, mask in _mask_cases(N):
        bm = mask.blocks(N, N, t.B_r, t.B_c)
        r, wr = flash2_masked_words(w, mask, t.B_r, t.B_c, grouped=True)
        lb_id, lb = masked_lower_bound(w, mask)
        rows.append({"mask": name, "pairs": mask.pairs(N, N), "nonzero_tiles": bm.nonzero_fraction, "words": r + wr,
                     "bound": lb_id, "bound_words": float(lb), "ratio": float((r + wr) / lb)})
    return rows


def section(ctx: Context) -> Section:
    from attnio.bounds.serving import mla_ridge_rows
    from attnio.reports.paper_decode import published_rows

    s = Section("Serving")
    s.p("Decoding one new token against a KV cache (docs/serving.md): Flash-Decoding's split-KV with GQA packing "
        "(each K/V word read once per split for the whole query-head group), a paged cache with an int32 block "
        "table, fp8 K/V with fp32 scales, and DeepSeek's MLA. Bytes are exact per tensor in its own type; the "
        "lower bound reads K/V and Q once and writes O once.")
    s.table(["GPU", "N_kv", "splits (heuristic)", "bytes", "no-split bytes", "split ÷ no split", "bytes ÷ bound"],
            [[r["gpu"], r["Nkv"], r["splits"], r["bytes"], r["no_split_bytes"], r["split_over_no_split"], r["over_bound"]]
             for r in split_rows()])
    s.p("Paged KV (batch 8, N_kv = 32768, H200 heuristic): the page size changes only the block table's bytes.")
    s.table(["page", "splits", "bytes", "block-table bytes", "bytes apart from the table"],
            [[r["page"] or "contiguous", r["splits"], r["bytes"], r["table_bytes"], r["apart_from_table"]] for r in page_rows()])
    s.p("MLA decode, 128 query heads, N_kv = 32768, on the H200 roofline (absorbed: one 576-wide latent row per "
        "token, V its first 512 channels; naive: per-head K (192) and V (128) cached). Fast memory is taken "
        "large here so that the 128 packed rows fit; with one SM's shared memory alone they do not, and the "
        "two-level schedule streams K/V once per row block (`attnio decode --mla absorbed`).")
    s.table(["form", "K/V type", "bytes", "FLOPs", "FLOP/B", "ridge FLOP/B", "bound"],
            [[r["form"], r["kv_dtype"], r["bytes"], r["flops"], r["intensity"], r["ridge"], r["bound"]] for r in mla_rows()])
    s.table(["GPU", "ridge FLOP/B (bf16)", "MLA ridge in h_q·s_q", "least compute-bound h_q (N_kv = 32768)"],
            [[r["gpu"], r["ridge_flops_per_byte"], r["ridge_hq_sq"], r["least_hq_compute_bound"]] for r in mla_ridge_rows()])
    s.p("Masks (docs/masks.md): FlashAttention-2's forward (grouped, io-optimal blocks) on a Llama-style GQA layer, "
        "N = 8192, bf16, M = one H100 SM, skipping empty tiles and loading each non-empty tile's needed key span; "
        "its exact words (the block-mask formula, equal to the causal workload formula under the causal mask) "
        "against the best masked lower bound (trivial, or B1_P/B2_P with the mask's pair count P).")
    s.table(["mask", "pairs P (one head)", "non-empty tiles", "FA-2 words", "best bound", "bound words", "FA-2 ÷ bound"],
            [[r["mask"], r["pairs"], r["nonzero_tiles"], r["words"], r["bound"], r["bound_words"], r["ratio"]]
             for r in mask_rows()])
    s.p("Published decode measurements (`attnio paper decode`): the published bandwidth is reproduced to its printed "
        "digits from attnio's compulsory bytes (Q + K + V + O once) and the published time; the schedule's exact "
        "bytes add the split partials and the block table.")
    s.table(["source", "GPU", "b", "H/H_kv", "N_kv", "page", "µs", "compulsory bytes", "schedule bytes",
             "published", "attnio", "match"],
            [[r["source"], r["gpu"], r["batch"], f"{r['heads']}/{r['kv_heads']}", r["Nkv"], r["page"] or "-", str(r["time_us"]),
              r["compulsory_bytes"], r["schedule_bytes"], "; ".join(r["published"].values()),
              "; ".join(r["attnio"].values()), "yes" if r["match"] else "NO"] for r in published_rows()])
    return s
