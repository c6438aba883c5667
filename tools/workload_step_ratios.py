"""The report's training-step table (reports/figures.py ``training_rows``: causal, bf16, batch 1, the flash2 forward
with the cheaper of flash2-bwd and flash2-fused-bwd, the cheaper of per-head and grouped) with the backward bound
before and after the pair-count slot bounds BWD-slots_P and BWD-slots-x_P (docs/bounds/bwd-slots-p.md); then the
schedule side, before (flash2 + flash2-bwd only) → after (flash2-fused-bwd allowed), against today's best bounds,
and which rows meet step ÷ bound ≤ 1.5 (docs/workloads.md). Run: ``python tools/workload_step_ratios.py``."""

from attnio.bounds.workloads import BWD_SLOTS_P, best_backward_lower_bound
from attnio.core.workload import Workload
from attnio.reports.figures import training_rows

NEW = frozenset(b.id for b in BWD_SLOTS_P)

print(f"{'model':<28}{'GPU':<6}{'M/d²':>6}  {'backward bound before':<26}{'step÷':>6}{'bwd÷':>6}  "
      f"{'backward bound after':<30}{'step÷':>6}{'bwd÷':>6}")
for r in training_rows():
    shape = next(s for m, s in __import__("attnio.reports.figures", fromlist=["MODELS"]).MODELS if m == r["model"])
    w = Workload.build(batch=1, causal=True, dtype="bf16", gpu=r["gpu"], **shape)
    bpw = w.bytes_per_word
    fwd_words = r["forward_bytes"] / bpw
    bwd_words = r["backward_bytes"] / bpw
    fwd_bound = r["bound_bytes"] / bpw - float(best_backward_lower_bound(w)[1])
    cols = []
    for excl in (NEW, frozenset()):
        bid, blb = best_backward_lower_bound(w, exclude=excl)
        cols.append((bid, (fwd_words + bwd_words) / (fwd_bound + float(blb)), bwd_words / float(blb)))
    (b0, s0, k0), (b1, s1, k1) = cols
    print(f"{r['model']:<28}{r['gpu']:<6}{w.M / w.d**2:>6.2f}  {b0:<26}{s0:>6.2f}{k0:>6.2f}  {b1:<30}{s1:>6.2f}{k1:>6.2f}")

print()
print(f"{'model':<28}{'GPU':<6}{'schedule after':<46}{'step÷ before':>13}{'after':>7}{'fwd÷':>6}"
      f"{'bwd÷ before':>12}{'after':>7}  ≤ 1.5")
for r0, r1 in zip(training_rows(backwards=("flash2-bwd",)), training_rows(), strict=True):
    print(f"{r1['model']:<28}{r1['gpu']:<6}{r1['best']:<46}{r0['ratio']:>13.2f}{r1['ratio']:>7.2f}{r1['fwd_ratio']:>6.2f}"
          f"{r0['bwd_ratio']:>12.2f}{r1['bwd_ratio']:>7.2f}  {'yes' if r1['ratio'] <= 1.5 else 'no'}")
