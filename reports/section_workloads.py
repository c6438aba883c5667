"""The report's "Workloads" section: real models on each GPU preset (forward and training step), and decoding
(docs/workloads.md).

:func:`section` is the report's section function (one entry in ``reports/report.py``'s ``SECTIONS``).

Every count is the machine's (count-only ``attnio.algorithms.run.run``, equal to the exact formulas by
tests/test_workloads.py); the lower bounds are ``bounds.workloads.best_lower_bound`` (trivial, B1_P, B2_P).

>>> rows = model_rows(models=(("tiny", dict(heads=4, kv_heads=2, N=256, d=16)),), gpus=("a100",))
>>> rows[0]["best"].startswith("flash2"), rows[0]["ratio"] >= 1
(True, True)
"""

from __future__ import annotations

from typing import Any

from attnio.reports.compute import Context
from attnio.reports.render import Section

GPUS = ("a100", "h100", "h200")
MODELS: tuple[tuple[str, dict[str, int]], ...] = (
    ("GPT-2 medium", {"heads": 16, "kv_heads": 16, "N": 1024, "d": 64}),
    ("Llama-style GQA, N = 4096", {"heads": 32, "kv_heads": 8, "N": 4096, "d": 128}),
    ("Llama-style GQA, N = 32768", {"heads": 32, "kv_heads": 8, "N": 32768, "d": 128}),
)
DECODE_NQ = (1, 2, 4, 8, 16)
DECODE_NKV = 32768
# schedules that fit M (flash1 as published runs in audit mode: its working set exceeds M)
CANDIDATES = (("flash2", "per-head"), ("flash2", "grouped"), ("flash1-fit", "per-head"), ("standard", "per-head"), ("square_tiling", "per-head"))


def _counts(w: Any) -> dict[str, Any]:
    from attnio.algorithms.run import run

    from attnio.errors import InvalidParameter

    out = {}
    for alg, sched in CANDIDATES:
        if sched == "grouped" and w.groups == 1:
            continue  # one query head per K/V head: the grouped loop is the per-head loop
        try:
            out[f"{alg} ({sched})"] = run(alg, w, schedule=sched, count_only=True).measurement
        except InvalidParameter:  # M below the schedule's minimum
            continue
    return out


def _kv(m: Any) -> int:
    return m.per_array["K"].reads_words + m.per_array["V"].reads_words


def model_rows(models: tuple[tuple[str, dict[str, int]], ...] = MODELS, gpus: tuple[str, ...] = GPUS) -> list[dict[str, Any]]:
    """One row per (model, GPU): causal, bf16, batch 1 (one sequence, one layer's attention call), forward."""
    from attnio.bounds.workloads import best_lower_bound

    from attnio.workload import Workload

    rows = []
    for model, shape in models:
        for gpu in gpus:
            w = Workload.build(batch=1, causal=True, dtype="bf16", gpu=gpu, **shape)
            c = _counts(w)
            best = min(c, key=lambda k: (c[k].io_words, "grouped" in k, k))
            lb_id, lb = best_lower_bound(w)
            ph, gr = c.get("flash2 (per-head)"), c.get("flash2 (grouped)")
            rows.append(
                {
                    "model": model, "gpu": gpu, "M": w.M, "best": best, "best_bytes": w.io_bytes(c[best].io_words),
                    "bound": lb_id, "bound_bytes": float(lb) * w.bytes_per_word, "ratio": float(c[best].io_words / lb),
                    "kv_per_head_bytes": None if ph is None else w.io_bytes(_kv(ph)),
                    "kv_grouped_bytes": None if gr is None else w.io_bytes(_kv(gr)),
                }
            )
    return rows


def _kv_fwd(m: Any) -> int:
    return _kv(m)


def _kv_bwd(m: Any) -> int:
    """K/V words of a backward run: K, V read, partial dK, dV read back (per-head), dK, dV written."""
    return sum(m.per_array[a].reads_words + m.per_array[a].writes_words for a in ("K", "V", "dK", "dV"))


def training_rows(models: tuple[tuple[str, dict[str, int]], ...] = MODELS, gpus: tuple[str, ...] = GPUS) -> list[dict[str, Any]]:
    """One row per (model, GPU): bytes per training step (forward + backward) of the cheapest flash2 + flash2-bwd
    workload schedule (per-head or grouped, causal, bf16, batch 1), against the forward bound + the backward bound,
    and the K/V bytes of both schedules (the GQA saving).

    >>> r = training_rows(models=(("tiny", dict(heads=4, kv_heads=2, N=256, d=16)),), gpus=("a100",))[0]
    >>> r["ratio"] >= 1, r["total_bytes"] == r["forward_bytes"] + r["backward_bytes"]
    (True, True)
    """
    from attnio.algorithms.run import run
    from attnio.bounds.workloads import best_backward_lower_bound, best_lower_bound

    from attnio.workload import Workload

    rows = []
    for model, shape in models:
        for gpu in gpus:
            w = Workload.build(batch=1, causal=True, dtype="bf16", gpu=gpu, **shape)
            steps = {s: run("flash2", w, pass_="step", schedule=s, count_only=True) for s in ("per-head", "grouped")}
            best = min(steps, key=lambda s: (steps[s].forward.measurement.io_words + steps[s].backward.measurement.io_words, s != "per-head"))
            f, b = steps[best].forward.measurement, steps[best].backward.measurement
            fid, flb = best_lower_bound(w)
            bid, blb = best_backward_lower_bound(w)
            ph, gr = steps["per-head"], steps["grouped"]
            kv_ph = _kv_fwd(ph.forward.measurement) + _kv_bwd(ph.backward.measurement)
            kv_gr = _kv_fwd(gr.forward.measurement) + _kv_bwd(gr.backward.measurement)
            rows.append(
                {
                    "model": model, "gpu": gpu, "M": w.M, "best": f"flash2 + flash2-bwd ({best})",
                    "forward_bytes": w.io_bytes(f.io_words), "backward_bytes": w.io_bytes(b.io_words),
                    "total_bytes": w.io_bytes(f.io_words + b.io_words),
                    "bound": f"{fid} + {bid}", "bound_bytes": float(flb + blb) * w.bytes_per_word,
                    "ratio": float((f.io_words + b.io_words) / (flb + blb)),
                    "fwd_ratio": float(f.io_words / flb), "bwd_ratio": float(b.io_words / blb),
                    "kv_fwd_per_head_bytes": w.io_bytes(_kv_fwd(ph.forward.measurement)),
                    "kv_fwd_grouped_bytes": w.io_bytes(_kv_fwd(gr.forward.measurement)),
                    "kv_step_per_head_bytes": w.io_bytes(kv_ph), "kv_step_grouped_bytes": w.io_bytes(kv_gr),
                    "step_per_head_bytes": w.io_bytes(ph.forward.measurement.io_words + ph.backward.measurement.io_words),
                    "step_grouped_bytes": w.io_bytes(gr.forward.measurement.io_words + gr.backward.measurement.io_words),
                }
            )
    return rows


def decode_rows(gpus: tuple[str, ...] = GPUS) -> list[dict[str, Any]]:
    """Llama-style GQA decoding: N_q = 1 … 16 new tokens against N_kv = 32768 cached, causal, bf16, per token."""
    from attnio.bounds.workloads import best_lower_bound

    from attnio.workload import Workload

    rows = []
    for gpu in gpus:
        for nq in DECODE_NQ:
            w = Workload.build(heads=32, kv_heads=8, Nq=nq, Nkv=DECODE_NKV, d=128, causal=True, dtype="bf16", gpu=gpu)
            c = _counts(w)
            ph, gr = c["flash2 (per-head)"], c["flash2 (grouped)"]
            best = min(c, key=lambda k: (c[k].io_words, "grouped" in k, k))
            lb_id, lb = best_lower_bound(w)
            rows.append(
                {
                    "gpu": gpu, "Nq": nq, "per_head_bytes_per_token": w.io_bytes(ph.io_words) / nq,
                    "grouped_bytes_per_token": w.io_bytes(gr.io_words) / nq, "best": best,
                    "bound_bytes_per_token": float(lb) * w.bytes_per_word / nq, "bound": lb_id,
                    "ratio": float(c[best].io_words / lb), "saving": ph.io_words / gr.io_words,
                }
            )
    return rows


def causal_half_rows(gpu: str = "h100") -> list[dict[str, Any]]:
    """Per-head flash2, one head (d = 128, bf16): causal ÷ non-causal words as N/B_r grows (FlashAttention-2 §3.1.1)."""
    from attnio.algorithms.run import run

    from attnio.workload import Workload

    rows = []
    for n in (1024, 4096, 32768, 131072):
        c = run("flash2", Workload.build(N=n, d=128, causal=True, dtype="bf16", gpu=gpu), schedule="per-head", count_only=True)
        f = run("flash2", Workload.build(N=n, d=128, dtype="bf16", gpu=gpu), schedule="per-head", count_only=True)
        T = -(-n // c.tiling.B_r)
        rows.append({"N": n, "T_r": T, "ratio": c.measurement.io_words / f.measurement.io_words,
                     "kv_ratio": c.measurement.per_array["K"].reads_words / f.measurement.per_array["K"].reads_words})
    return rows


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
        "the backward's best (trivial; BWD-SdP_P, min(4P·d²/M, P/2) − M for backward passes that recompute S, as "
        "flash2-bwd does; docs/bounds/workloads.md#backward): a bound for the forward and the backward run as two "
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
