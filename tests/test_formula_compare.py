"""attnio.triton.formula_compare: a kernel formula against attnio's best lower bound, by z3 over a range of N.
The formula here is the FA-2 forward's (grouped, fitted and checked in tests/test_triton_formula.py; written out
so that this file needs no Triton)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from attnio.bounds.workloads import best_lower_bound
from attnio.core.workload import Workload
from attnio.triton import formula_basis as fb
from attnio.triton.formula import KernelFormula


def fa2(causal: bool, block=(64, 32), extra=None) -> KernelFormula:
    kv = "SE" if causal else "T_r*N_kv"
    co = {("q", "reads_bytes"): {("Z*H", "d", "N_q"): Fraction(4)}, ("k", "reads_bytes"): {("Z*H_kv", "d", kv): Fraction(4)},
          ("v", "reads_bytes"): {("Z*H_kv", "d_v", kv): Fraction(4)}, ("o", "writes_bytes"): {("Z*H", "d_v", "N_q"): Fraction(4)},
          ("L", "writes_bytes"): {("Z*H", "1", "N_q"): Fraction(4)}}
    if extra:
        co.update(extra)
    lengths = fb.LENGTHS_CAUSAL if causal else fb.LENGTHS_PLAIN
    return KernelFormula("fa2", causal, "fp32", block, fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, lengths, co, [], 0.0,
                         {"_fa2_fwd": 1}, {})


def _ratio(f, n, **kw):
    w = Workload.build(N=n, d=128, causal=f.causal, gpu="h100", **kw)
    return Fraction(f.total_bytes(N=n, d=128)) / (4 * best_lower_bound(w)[1])


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("causal", [False, True])
def test_tightest_constant_is_proved_and_sharp(causal):
    f = fa2(causal)
    c = f.compare(d=128, N_lo=1024, N_hi=1 << 16)
    t = c.tightest
    assert t["status"] == "proved", t
    const = Fraction(t["constant"])
    cex = int(t["counterexample"]["N"])  # c − precision fails here, evaluated exactly
    assert 1024 <= cex <= 1 << 16 and _ratio(f, cex) > const - Fraction(1, 100)
    assert all(_ratio(f, n) <= const for n in (1024, 1025, 4097, 65536, cex))
    assert c.threshold["status"] == "proved" and c.threshold["N0"] == 1024  # FA-2 at B_r = 64 is > 2x throughout


def test_a_tile_sum_without_closed_form_is_not_compared():
    f = fa2(True, block=(48, 32), extra={("x", "reads_bytes"): {("Z*H", "1", "ST"): Fraction(1)}})
    c = f.compare(d=128, N_lo=1024, N_hi=2048)
    assert c.tightest["status"] == "not encoded" and "not proved" in c.threshold["text"]


def test_bad_range_is_refused():
    from attnio.core.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="N_lo"):
        fa2(False).compare(N_lo=4096, N_hi=1024)


@pytest.mark.solver
def test_a_decode_formula_is_compared_at_its_n_q_with_ne_equal_to_s():
    """A split-K decode (fitted at N_q = 1 only, S = 4 splits): q read and partial outputs moved once per non-empty
    split, K and V once. It is compared at N_q = 1, N_kv = N (never at N_q = N_kv, where it was not fitted), with
    NE = S over the range; a range that reaches N_kv ≤ S(S − 1)·B_c is not encoded."""
    co = {("q", "reads_bytes"): {("Z*H", "d", "NE"): Fraction(4)}, ("k", "reads_bytes"): {("Z*H_kv", "d", "N_kv"): Fraction(4)},
          ("v", "reads_bytes"): {("Z*H_kv", "d_v", "N_kv"): Fraction(4)},
          ("p", "writes_bytes"): {("Z*H", "d_v", "NE"): Fraction(4)}, ("o", "writes_bytes"): {("Z*H", "d_v", "1"): Fraction(4)}}
    shapes = [{"Z": 1, "H": 1, "H_kv": 1, "N_q": 1, "N_kv": n, "d": 2, "d_v": 2} for n in (1, 40, 200)]
    f = KernelFormula("decode", False, "fp32", (1, 32), fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, ("1", "N_kv", "NE"), co,
                      shapes, 0.0, {"_decode": 1}, {}, splits=4)
    c = f.compare(d=128, N_lo=1024, N_hi=1 << 14)
    assert c.setting["N_q"] == 1 and c.tightest["status"] == "proved", c.tightest
    w = Workload.build(Nq=1, Nkv=4096, d=128, gpu="h100")
    ratio = Fraction(f.total_bytes(N_q=1, N_kv=4096, d=128)) / (4 * best_lower_bound(w)[1])
    assert 1 < ratio <= Fraction(c.tightest["constant"])  # the splits' partial outputs cost above the bound
    assert f.compare(d=128, N_lo=300, N_hi=2048).tightest["status"] == "not encoded"  # 300 ≤ 4·3·32: NE not S
