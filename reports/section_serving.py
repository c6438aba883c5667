"""The report's "Serving" section: decoding against a KV cache — split-KV, paged KV, fp8 K/V, MLA, the roofline
of each GPU preset, and published decode measurements beside attnio's bytes (docs/serving.md).

:func:`section` is the report's section function (one entry in ``reports/report.py``'s ``SECTIONS``). Every
count is ``attnio.bounds.serving.decode_count``, equal to the decode schedule's machine count per tensor
(tests/test_serving.py).

Its figures are computed in :mod:`attnio.reports.figures` (``serving_*``), the one place the report's figures
come from.
"""

from __future__ import annotations

from attnio.reports import figures
from attnio.reports.compute import Context
from attnio.reports.render import Section


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
             for r in figures.serving_split_rows()])
    s.p("Paged KV (batch 8, N_kv = 32768, H200 heuristic): the page size changes only the block table's bytes.")
    s.table(["page", "splits", "bytes", "block-table bytes", "bytes apart from the table"],
            [[r["page"] or "contiguous", r["splits"], r["bytes"], r["table_bytes"], r["apart_from_table"]] for r in figures.serving_page_rows()])
    s.p("MLA decode, 128 query heads, N_kv = 32768, on the H200 roofline (absorbed: one 576-wide latent row per "
        "token, V its first 512 channels; naive: per-head K (192) and V (128) cached). Fast memory is taken "
        "large here so that the 128 packed rows fit; with one SM's shared memory alone they do not, and the "
        "two-level schedule streams K/V once per row block (`attnio decode --mla absorbed`).")
    s.table(["form", "K/V type", "bytes", "FLOPs", "FLOP/B", "ridge FLOP/B", "bound"],
            [[r["form"], r["kv_dtype"], r["bytes"], r["flops"], r["intensity"], r["ridge"], r["bound"]] for r in figures.serving_mla_rows()])
    s.table(["GPU", "ridge FLOP/B (bf16)", "MLA ridge in h_q·s_q", "least compute-bound h_q (N_kv = 32768)"],
            [[r["gpu"], r["ridge_flops_per_byte"], r["ridge_hq_sq"], r["least_hq_compute_bound"]] for r in mla_ridge_rows()])
    s.p("Masks (docs/masks.md): FlashAttention-2's forward (grouped, io-optimal blocks) on a Llama-style GQA layer, "
        "N = 8192, bf16, M = one H100 SM, skipping empty tiles and loading each non-empty tile's needed key span; "
        "its exact words (the block-mask formula, equal to the causal workload formula under the causal mask) "
        "against the best masked lower bound (trivial, or B1_P/B2_P with the mask's pair count P).")
    s.table(["mask", "pairs P (one head)", "non-empty tiles", "FA-2 words", "best bound", "bound words", "FA-2 ÷ bound"],
            [[r["mask"], r["pairs"], r["nonzero_tiles"], r["words"], r["bound"], r["bound_words"], r["ratio"]]
             for r in figures.serving_mask_rows()])
    s.p("Published decode measurements (`attnio paper decode`): the published bandwidth is reproduced to its printed "
        "digits from attnio's compulsory bytes (Q + K + V + O once) and the published time; the schedule's exact "
        "bytes add the split partials and the block table.")
    s.table(["source", "GPU", "b", "H/H_kv", "N_kv", "page", "µs", "compulsory bytes", "schedule bytes",
             "published", "attnio", "match"],
            [[r["source"], r["gpu"], r["batch"], f"{r['heads']}/{r['kv_heads']}", r["Nkv"], r["page"] or "-", str(r["time_us"]),
              r["compulsory_bytes"], r["schedule_bytes"], "; ".join(r["published"].values()),
              "; ".join(r["attnio"].values()), "yes" if r["match"] else "NO"] for r in published_rows()])
    return s
