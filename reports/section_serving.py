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
    _table(s, figures.serving_split_rows(), {"GPU": "gpu", "N_kv": "Nkv", "splits (heuristic)": "splits", "bytes": "bytes",
                                             "no-split bytes": "no_split_bytes", "split ÷ no split": "split_over_no_split",
                                             "bytes ÷ bound": "over_bound"})
    s.p("Paged KV (batch 8, N_kv = 32768, H200 heuristic): the page size changes only the block table's bytes.")
    pages = [{**r, "page": r["page"] or "contiguous"} for r in figures.serving_page_rows()]
    _table(s, pages, {"page": "page", "splits": "splits", "bytes": "bytes", "block-table bytes": "table_bytes",
                      "bytes apart from the table": "apart_from_table"})
    s.p("MLA decode, 128 query heads, N_kv = 32768, on the H200 roofline (absorbed: one 576-wide latent row per "
        "token, V its first 512 channels; naive: per-head K (192) and V (128) cached). Fast memory is taken "
        "large here so that the 128 packed rows fit; with one SM's shared memory alone they do not, and the "
        "two-level schedule streams K/V once per row block (`attnio decode --mla absorbed`).")
    _table(s, figures.serving_mla_rows(), {"form": "form", "K/V type": "kv_dtype", "bytes": "bytes", "FLOPs": "flops",
                                           "FLOP/B": "intensity", "ridge FLOP/B": "ridge", "bound": "bound"})
    _table(s, mla_ridge_rows(), {"GPU": "gpu", "ridge FLOP/B (bf16)": "ridge_flops_per_byte", "MLA ridge in h_q·s_q": "ridge_hq_sq",
                                 "least compute-bound h_q (N_kv = 32768)": "least_hq_compute_bound"})
    s.p("Masks (docs/masks.md): FlashAttention-2's forward (grouped, io-optimal blocks) on a Llama-style GQA layer, "
        "N = 8192, bf16, M = one H100 SM, skipping empty tiles and loading each non-empty tile's needed key span; "
        "its exact words (the block-mask formula, equal to the causal workload formula under the causal mask) "
        "against the best masked lower bound (trivial, or B1_P/B2_P with the mask's pair count P).")
    _table(s, figures.serving_mask_rows(), {"mask": "mask", "pairs P (one head)": "pairs", "non-empty tiles": "nonzero_tiles",
                                            "FA-2 words": "words", "best bound": "bound", "bound words": "bound_words",
                                            "FA-2 ÷ bound": "ratio"})
    s.p("Published decode measurements (`attnio paper decode`): the published bandwidth is reproduced to its printed "
        "digits from attnio's compulsory bytes (Q + K + V + O once) and the published time; the schedule's exact "
        "bytes add the split partials and the block table.")
    s.table(["source", "GPU", "b", "H/H_kv", "N_kv", "page", "µs", "compulsory bytes", "schedule bytes",
             "published", "attnio", "match"],
            [[r["source"], r["gpu"], r["batch"], f"{r['heads']}/{r['kv_heads']}", r["Nkv"], r["page"] or "-", str(r["time_us"]),
              r["compulsory_bytes"], r["schedule_bytes"], "; ".join(r["published"].values()),
              "; ".join(r["attnio"].values()), "yes" if r["match"] else "NO"] for r in published_rows()])
    return s


def _table(s: Section, rows: list[dict], columns: dict[str, str]) -> None:
    """A table of ``rows`` with one column per header → row key of ``columns`` (in order)."""
    s.table(list(columns), [[r[k] for k in columns.values()] for r in rows])
