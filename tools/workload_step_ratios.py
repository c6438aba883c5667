"""The report's training-step table (reports/figures.py ``training_rows``: causal, bf16, batch 1, flash2 + flash2-bwd,
the cheaper of per-head and grouped) with the backward bound before and after the pair-count slot bounds
BWD-slots_P and BWD-slots-x_P (docs/bounds/bwd-slots-p.md). Run: ``python tools/workload_step_ratios.py``."""

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
