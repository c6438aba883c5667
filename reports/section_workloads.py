"""The report's "Workloads" section: real models on each GPU preset (forward and training step), and decoding
(docs/workloads.md).

:func:`section` is the report's section function (one entry in ``reports/report.py``'s ``SECTIONS``). Layout
only: the rows come from :mod:`attnio.reports.figures` (``model_rows``, ``training_rows``, ``decode_rows``,
``causal_half_rows``; re-exported here). Every count is the machine's (count-only workload runs, equal to the
exact formulas by tests/test_workloads.py); the lower bounds are ``bounds.workloads.best_lower_bound``
(trivial, B1_P, B2_P).
"""

from __future__ import annotations

from typing import Any

from attnio.reports.compute import Context
from attnio.reports.figures import DECODE_NKV, causal_half_rows, decode_rows, model_rows, training_rows
from attnio.reports.render import Section

__all__ = ["build", "causal_half_rows", "decode_rows", "model_rows", "section", "training_rows"]


def section(ctx: Context) -> Section:
    """The report's section function: real models on each GPU preset, and decoding."""
    return build(Section)


def build(section_cls: Any) -> Any:
    """The section, built with the given section-builder class."""
    s = section_cls("Workloads")
    s.p(
        "Real shapes (docs/workloads.md): one attention call of one layer, batch 1, causal (bottom-right), bf16 "
        "(2 bytes/word), M = one SM's shared memory of each GPU preset (a100 192 KiB, h100/h200 228 KiB) in bf16 "
        "words. First the forward pass, then the training step (forward + backward). Counts are "
        "the machine's (count-only) and equal the exact formulas; the forward lower bound is the best of the trivial "
        "bound (K/V once per K/V head) and B1_P/B2_P with the causal pair count (docs/bounds/workloads.md)."
    )
    rows = model_rows()
    s.table(
        ["model", "GPU", "M (words)", "best schedule", "bytes", "best lower bound", "bound bytes", "best ÷ bound",
         "K/V bytes per-head", "K/V bytes grouped"],
        [[r["model"], r["gpu"], r["M"], r["best"], r["best_bytes"], r["bound"], r["bound_bytes"], r["ratio"],
          r["kv_per_head_bytes"], r["kv_grouped_bytes"]] for r in rows],
    )
    s.p(
        "Grouped-query attention saves K/V traffic in full only when one Q block holds the rows of every query "
        "head of a group. In long prefill a Q block of ⌊a/g⌋ positions × g heads needs about as many K/V passes "
        "as g per-head blocks of a positions, so the two schedules' K/V bytes (last two columns) differ only "
        "through the ceilings ⌈N/⌊a/g⌋⌉ against g·⌈N/a⌉ and, with the causal mask, the smaller diagonal blocks of "
        "the grouped schedule (docs/costs.md#workloads). GPT-2 medium has one query head per K/V head: no grouped "
        "schedule."
    )
    t = training_rows()
    s.p(
        "Training step: forward + backward per attention call (`attnio run flash2 --backward --causal --heads 32 "
        "--kv-heads 8 ...`), the cheaper of flash2 + flash2-bwd per-head and grouped (the backward keeps a K/V "
        "block resident while every query head of its group streams past, dK_j and dV_j accumulated in fast memory; "
        "the per-head backward sums the heads' dK, dV in slow memory). Lower bound: the forward's best bound plus "
        "the backward's best (trivial; BWD-SdP_P, min(4P·d²/M, P/2) − M, and the slot bounds BWD-slots_P, "
        "BWD-slots-x_P for backward passes that recompute S, as flash2-bwd does; docs/bounds/workloads.md#backward, "
        "docs/bounds/bwd-slots-p.md): a bound for the forward and the backward run as two "
        "calculations, as flash2 and flash2-bwd are, not for a fused one."
    )
    s.table(
        ["model", "GPU", "best schedule", "forward bytes", "backward bytes", "training-step bytes", "lower bound",
         "bound bytes", "best ÷ bound", "forward ÷ its bound", "backward ÷ its bound"],
        [[r["model"], r["gpu"], r["best"], r["forward_bytes"], r["backward_bytes"], r["total_bytes"], r["bound"],
          r["bound_bytes"], r["ratio"], r["fwd_ratio"], r["bwd_ratio"]] for r in t],
    )
    s.p("K/V traffic (K, V reads; in the backward also dK, dV writes and the per-head schedule's partial-sum reads), "
        "per-head against grouped, bytes:")
    s.table(
        ["model", "GPU", "forward per-head", "forward grouped", "training step per-head", "training step grouped",
         "step total per-head ÷ grouped"],
        [[r["model"], r["gpu"], r["kv_fwd_per_head_bytes"], r["kv_fwd_grouped_bytes"], r["kv_step_per_head_bytes"],
          r["kv_step_grouped_bytes"], r["step_per_head_bytes"] / r["step_grouped_bytes"]] for r in t],
    )
    d = decode_rows()
    s.p(f"Decoding: N_q new tokens against N_kv = {DECODE_NKV} cached keys, Llama-style GQA (H = 32, H_kv = 8, d = 128), per token.")
    s.table(
        ["GPU", "N_q", "flash2 per-head bytes/token", "flash2 grouped bytes/token", "per-head ÷ grouped",
         "best lower bound bytes/token", "best ÷ bound"],
        [[r["gpu"], r["Nq"], r["per_head_bytes_per_token"], r["grouped_bytes_per_token"], r["saving"],
          r["bound_bytes_per_token"], r["ratio"]] for r in d],
    )
    s.p(
        "In decoding the grouped schedule reads each K/V head once per group instead of once per query head (the "
        "z3 identity workloads.grouped.decode): close to g = 4 times fewer bytes, and within a few percent of the "
        "trivial bound, which is itself K/V-dominated."
    )
    h = causal_half_rows()
    s.p(
        "FlashAttention-2's causal claim (§3.1.1, about half of the blocks skipped), proved as "
        "workloads.causal.half.lower/upper: non-causal/2 ≤ causal ≤ non-causal/2 + (3/2)N(d + d_v) + N/2. Per-head "
        "flash2, one head, d = 128, bf16, H100 preset:"
    )
    s.table(["N", "T_r", "causal ÷ non-causal (all words)", "causal ÷ non-causal (K words)"],
            [[r["N"], r["T_r"], r["ratio"], r["kv_ratio"]] for r in h])
    from attnio.reports.paper_fa1 import fa1_fig2

    f = fa1_fig2(sweep=False)
    s.p(
        "Published figures, side by side (`attnio paper fa1-fig2`, assumptions in docs/workloads.md): FlashAttention "
        "Figure 2, GPT-2 medium on an A100 (N = 1024, d = 64, 16 heads, batch 64), forward + backward, fp16, "
        "M = 192 KiB / 2 B = 98,304 words. Not fitted to the paper."
    )
    s.table(
        ["algorithm", "attnio forward GB", "attnio backward GB", "attnio total GB", "paper GB", "attnio ÷ paper"],
        [[r["algorithm"], r["forward_bytes"] / 1e9, r["backward_bytes"] / 1e9, r["total_GB"], r["paper_GB"], r["ratio_to_paper"]]
         for r in f["rows"]],
    )
    return s
