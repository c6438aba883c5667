"""A fitted kernel formula (:mod:`attnio.triton.formula`) against attnio's best lower bound, proved by z3 over a
range of sequence lengths (docs/triton-formula.md#solver).

At fixed d, d_v, batch, heads, M and the formula's pinned blocks, with N_q = N_kv = N symbolic (a decode
kernel, every fit shape of one N_q: that N_q fixed and N_kv = N):

- the formula is an attnio expression in N (:func:`attnio.triton.formula_basis.square_form`): each ⌈N/B⌉
  stays a ceiling, which the one translator (solver/translator.py) encodes as a fresh variable t with
  B·t ≥ N and B·t ≤ N + B − 1 (an integer in the exact re-check: B(t − 1) < N ≤ B·t);
- the bound is the largest of the bounds ``bounds.workloads.best_lower_bound`` chooses from (the trivial one
  and every pair-count bound whose regime holds at the workload; for a backward kernel, one that names do, dq,
  dk or dv, those of ``best_backward_lower_bound``, with the bounds that assume S recomputed only when the
  kernel reads no S, P or unnamed tensor, as attnio.triton.check decides), each over the whole workload as
  ``workload_value`` computes it, in bytes: ``max(...)`` in the translator. Their regimes do not involve N
  here (N_q = N_kv ≥ 2), so the same set applies across the range; the expression is checked equal to
  ``best_lower_bound`` at both ends;
- **tightest c**: ``formula ≤ c × bound for N_lo ≤ N ≤ N_hi``, the least c on a grid of ``precision``, by the
  solver's own bisection of a :class:`attnio.solver.claims.types.Tightest` claim (``verify_claim``: non-vacuity,
  definedness, c proved and c − precision refuted at an integer counterexample);
- **threshold**: where formula > t × bound at N_hi, the least N₀ (found by exact evaluation, assuming the
  ratio crosses t once) with ``formula > t × bound for N₀ ≤ N ≤ N_hi`` proved by ``attnio.solver.engine.prove``,
  and ratio ≤ t at N₀ − 1 evaluated exactly.

Anything but ``proved`` (unknown within the solver's resource limit, an error) is reported as "not proved".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from attnio.core.errors import InvalidParameter
from attnio.triton import formula_basis as fb


@dataclass
class Comparison:
    """What :func:`compare` returns."""

    setting: dict[str, Any]
    bounds: list[str]
    sampled_max_ratio: str
    tightest: dict[str, Any]
    threshold: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"setting": self.setting, "bounds": self.bounds, "sampled_max_ratio": self.sampled_max_ratio,
                "tightest": self.tightest, "threshold": self.threshold, "notes": self.notes}

    def lines(self) -> list[str]:
        s = self.setting
        rng = f"{s['N_lo']} ≤ N ≤ {s['N_hi']}"
        lengths = "N_q = N_kv = N" if s.get("N_q") is None else f"N_q = {s['N_q']}, N_kv = N"
        head = (f"  solver (z3), {lengths}, {rng}, Z={s['Z']} H={s['H']} H_kv={s['H_kv']} d={s['d']} "
                f"d_v={s['d_v']} M={s['M']:,d}; bound = max({', '.join(self.bounds)})")
        t = self.tightest
        out = [head]
        if t.get("status") == "proved":
            out.append(f"    formula ≤ {t['constant']} × bound for {rng}: proved; {t['reason']}")
        else:
            out.append(f"    formula ≤ c × bound for {rng}: not proved ({t.get('status')}: {t.get('reason')})")
        th = self.threshold
        out.append(f"    {th['text']}")
        out += [f"    note: {n}" for n in self.notes]
        return out


def _bound_expr(w: Any, N: Any, backward: bool = False, recomputes_S: bool = True,
                N_q: int | None = None) -> tuple[Any, list[str]]:
    """max over the bounds best_lower_bound (backward: best_backward_lower_bound) considers at ``w``, each as
    workload_value builds it, in N (N_kv = N; N_q = N, or ``N_q`` when given)."""
    from attnio.bounds.expr import const, maximum, substitute
    from attnio.bounds.symbols import M, Nkv, Nq, d, dv, g
    from attnio.bounds.workloads import BOUNDS, BWD_BOUNDS, BWD_RECOMPUTE_S, BWD_TRIVIAL, _trivial, applies

    if backward:
        chosen = [BWD_TRIVIAL] + [b for b in BWD_BOUNDS if b.slack is not None and applies(b, w)
                                  and (recomputes_S or b.id not in BWD_RECOMPUTE_S)]
    else:
        chosen = [b for b in BOUNDS if b is _trivial(w) or (b.slack is not None and applies(b, w))]
    parts = []
    for b in chosen:
        gg = w.groups if "g" in b.symbols else 1
        sub = {Nq: N if N_q is None else const(N_q), Nkv: N, d: const(w.d), dv: const(w.dv), M: const(w.M), g: const(gg)}
        e = substitute(b.expr, sub)
        if "g" in b.symbols and b.slack is None:
            parts.append(w.kv_heads_total * e)
            continue
        slack = substitute(b.slack, sub)
        units = w.kv_heads_total if "g" in b.symbols else w.query_heads_total
        parts.append(units * (e - slack) + slack)
    return (maximum(*parts) if len(parts) > 1 else parts[0]), [b.id for b in chosen]


def _direction(f: Any) -> tuple[bool, bool]:
    """(backward, recomputes S) as attnio.triton.check decides them: a backward names do, dq, dk or dv; it
    recomputes S unless it reads a tensor whose role is S or P, or one with no role (it could hold S or P)."""
    from attnio.triton.check import role_of

    backward = any(t in ("do", "dq", "dk", "dv") for t in f.tensors)
    reads_sp = [t for t in f.tensors if f.coefficients.get((t, "reads_words")) and role_of(t) in ("S", "P", None)]
    return backward, not reads_sp


def _formula_expr(f: Any, consts: dict[str, int], N: Any, N_q: int | None = None) -> Any:
    from attnio.bounds.expr import const

    total = const(0)
    for (u, w, ln), c in f._total_terms().items():
        x = fb.square_form("length", ln, consts, N, N_q)
        if x is None:
            return None
        total = total + c * fb.value(fb.UNIT[u], consts) * fb.value(fb.WIDTH[w], consts) * x
    return total


def compare(f: Any, *, d: int = 128, d_v: int | None = None, Z: int = 1, H: int = 1, H_kv: int | None = None,
            M: int | None = None, smem: int | str | None = None, gpu: str = "h100", N_lo: int = 1024, N_hi: int = 1 << 20,
            precision: Fraction | str = Fraction(1, 100), threshold: Fraction | int = 2) -> Comparison:
    """The two verdicts of the module docstring for the formula ``f`` (a KernelFormula). When every fit shape
    of ``f`` has the same N_q (a decode kernel fitted at N_q = 1), N_q stays there and only N_kv = N varies:
    the form holds nowhere else."""
    from attnio.bounds.expr import evaluate
    from attnio.bounds.symbols import N
    from attnio.bounds.workloads import best_backward_lower_bound, best_lower_bound
    from attnio.core.workload import Workload
    precision, threshold = Fraction(precision), Fraction(threshold)
    if not (2 <= N_lo <= N_hi):
        raise InvalidParameter("N_lo", (N_lo, N_hi), "2 ≤ N_lo ≤ N_hi")
    if precision <= 0 or threshold <= 0:
        raise InvalidParameter("precision", (precision, threshold), "precision > 0 and threshold > 0")
    H_kv = H if H_kv is None else H_kv
    d_v = d if d_v is None else d_v
    fixed = {s["N_q"] for s in getattr(f, "fit_shapes", ())}  # none given: N_q = N_kv
    N_q = fixed.pop() if len(fixed) == 1 else None

    def work(n: int) -> Any:
        return Workload.build(batch=Z, heads=H, kv_heads=H_kv, Nq=n if N_q is None else N_q, Nkv=n, d=d, dv=d_v, causal=f.causal, dtype=f.dtype,
                              M=M, smem=smem, gpu=None if (M is not None or smem is not None) else gpu)

    w_lo, w_hi = work(N_lo), work(N_hi)
    bpw = int(w_lo.bytes_per_word)
    consts = {"Z": Z, "H": H, "H_kv": H_kv, "d": d, "d_v": d_v, "B_r": f.block[0], "B_c": f.block[1],
              "N_lo": N_lo, **({} if f.splits is None else {"S": f.splits})}
    setting = {"N_q": N_q, "Z": Z, "H": H, "H_kv": H_kv, "d": d, "d_v": d_v, "M": w_lo.M, "N_lo": N_lo, "N_hi": N_hi,
               "block": list(f.block), "causal": f.causal, "dtype": f.dtype, "bytes_per_word": bpw}
    backward, recomputes_S = _direction(f)
    setting["direction"] = "backward" if backward else "forward"
    bound_words, ids = _bound_expr(w_lo, N, backward, recomputes_S, N_q)
    if _bound_expr(w_hi, N, backward, recomputes_S, N_q)[1] != ids:
        raise InvalidParameter("N_lo", (N_lo, N_hi), "a range over which the same lower bounds apply")
    bound = bpw * bound_words
    F = _formula_expr(f, consts, N, N_q)
    if F is None:
        return Comparison(setting, ids, "", {"status": "not encoded", "reason": "a tile sum has no closed form "
                          "at these blocks (formula_basis.square_form)"},
                          {"text": "threshold: not proved (not encoded)"})
    for n, w in ((N_lo, w_lo), (N_hi, w_hi)):  # the symbolic forms reproduce the exact values at both ends
        best = best_backward_lower_bound(w, recomputes_S=recomputes_S) if backward else best_lower_bound(w)
        assert evaluate(bound_words, {"N": n}) == best[1], (n, ids)
        assert evaluate(F, {"N": n}) == f.total_bytes(Z=Z, H=H, H_kv=H_kv, N_q=n if N_q is None else N_q, N_kv=n,
                                                      d=d, d_v=d_v), n

    from attnio.solver.claims.types import Tightest
    from attnio.solver.engine import prove
    from attnio.solver.verify import verify_claim

    def ratio(n: int) -> Fraction:
        return Fraction(evaluate(F, {"N": n})) / Fraction(evaluate(bound, {"N": n}))

    B = max(f.block)
    samples = {N_lo, N_hi} | {min(N_hi, max(N_lo, x)) for k in range(10, 21) for x in (1 << k, (1 << k) + 1,
                                                                                       (1 << k) - B + 1)}
    samples |= {min(N_hi, max(N_lo, N_lo + i * B + 1)) for i in range(8)}
    rmax = max(ratio(n) for n in samples)
    hyps = (N_lo <= N, N <= N_hi)
    lo = (rmax / precision).__floor__() * precision - precision
    claim = Tightest(
        id=f"formula.{f.name}.{'causal' if f.causal else 'plain'}.tightest",
        description=f"{f.name}'s fitted traffic ≤ c × attnio's best lower bound, "
                    f"{'N_q = N_kv = N' if N_q is None else f'N_q = {N_q}, N_kv = N'} in [{N_lo}, {N_hi}]",
        hyps=hyps, f=F, g=bound, extra=F * 0, precision=precision, lo=max(Fraction(0), lo), hi=lo + 8 * precision,
        meta="a fitted kernel formula against attnio's best lower bound (attnio kernel --formula), not a catalog claim",
    )
    v = verify_claim(claim)
    tight = {"status": v.status, "constant": v.constant, "reason": v.reason, "seconds": round(v.seconds, 2),
             "counterexample": v.counterexample}
    th: dict[str, Any] = {"t": str(threshold)}
    if ratio(N_hi) <= threshold:
        th.update(status="does not apply", text=f"formula ≤ {threshold} × bound at N = {N_hi}: no threshold above it")
    else:
        lo_n, hi_n = N_lo - 1, N_hi  # ratio(hi_n) > t; find the least n with ratio > t (one crossing assumed)
        if ratio(N_lo) > threshold:
            hi_n = N_lo
        while hi_n - lo_n > 1:
            mid = (lo_n + hi_n) // 2
            if ratio(mid) > threshold:
                hi_n = mid
            else:
                lo_n = mid
        n0 = hi_n
        o = prove((n0 <= N, N <= N_hi), threshold * bound < F)
        th.update(status=o.status, N0=n0, seconds=round(o.seconds, 2))
        sharp = f"; at N = {n0 - 1} the ratio is {float(ratio(n0 - 1)):.4f} (exact evaluation)" if n0 > N_lo else ""
        if o.status == "proved":
            th["text"] = f"formula > {threshold} × bound for {n0} ≤ N ≤ {N_hi}: proved{sharp}"
        else:
            th["text"] = f"formula > {threshold} × bound for {n0} ≤ N ≤ {N_hi}: not proved ({o.status}: {o.reason})"
    notes = [f"sampled max ratio {float(rmax):.4f} (exact evaluation at {len(samples)} N)"]
    return Comparison(setting, ids, str(rmax), tight, th, notes)
