"""The z3 claims of masked attention and paged decode (solver/claims/masks.py, solver/claims/serving.py): each is
proved (z3; z3 and cvc5 in the cvc5 tier), a planted mutant of each is refuted with a valid integer counterexample,
and each claim's hypotheses hold at the counts of real block masks and real decode calls, so the facts a claim
assumes are facts of the masks and its regime is the family's (non-vacuous), with the expressions equal to the
numeric counts there."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from checks import assert_refuted_with_valid_counterexample, without_hypothesis
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnio.bounds.expr import ceil, eq, evaluate
from attnio.bounds.masks import (
    B1_UNIT,
    B2_UNIT,
    EMPTY,
    FLASH2_READS,
    FLASH2_WRITES,
    KV_ROWS,
    TRIVIAL_UNIT,
    BlockSparse,
    Causal,
    Document,
    PrefixLM,
    SlidingWindow,
    flash2_masked_words,
    masked_lower_bound,
    trivial_masked_words,
)
from attnio.bounds.serving import (
    DECODE_BYTES,
    PAGE,
    ROW_BLOCKS,
    UNITS,
    Decode,
    decode_count,
    decode_env,
    tensor_bytes,
)
from attnio.bounds.symbols import Nkv, d, dv, g
from attnio.core.errors import InvalidParameter
from attnio.core.workload import Workload
from attnio.solver import logic
from attnio.solver.claims import Implication
from attnio.solver.claims import masks as cm
from attnio.solver.claims import serving as cs
from attnio.solver.verify import verify_claim

CLAIMS = cm.CLAIMS + cs.CLAIMS


def test_each_named_family_has_a_claim_per_bound_and_every_claim_names_what_it_is_about():
    ids = {c.id for c in cm.CLAIMS}
    for fam in ("causal", "sliding-window", "sliding-window-left", "sliding-window-right", "prefix-lm", "document",
                "block-sparse"):
        assert {f"masks.{fam}.{b}-le-flash2" for b in ("trivial", "b1", "b2")} <= ids
    assert all(c.about for c in cm.CLAIMS) and cs.CLAIMS[0].meta and not cs.CLAIMS[0].about


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_claim_is_proved_by_z3(claim):
    v = verify_claim(claim)
    assert v.status == "proved" and v.ok, (v.status, v.reason)
    assert v.witness is not None


# cvc5 re-proves the B1_P/B2_P links of one family here (each spends its first stage's 12 s guard before the
# second stage proves it); the other families' are re-proved in the cvc5 record (reports/crosscheck.json, checked
# by tests/test_crosscheck_record.py), which covers every claim.
CVC5_HERE = [c for c in CLAIMS if not c.id.endswith(("b1-le-flash2", "b2-le-flash2")) or c.id.startswith("masks.causal.")]


@pytest.mark.parametrize("claim", CVC5_HERE, ids=lambda c: c.id)
def test_claim_is_proved_by_z3_and_by_cvc5_causal_links_and_every_other_claim(claim):
    pytest.importorskip("cvc5")
    v = verify_claim(claim, solver="both")
    assert v.status == "proved" and v.ok, (v.status, v.reason)


# mutants ------------------------------------------------------------------------------------------------------
def _mutants() -> list[Implication]:
    out = []
    for fam in cm.FAMILIES:
        for b in cm.BOUNDS:  # the cost without its K/V term (d + d_v)·kv_rows, at d = g = B_r = B_c = 1 (where z3 finds an
            # integer counterexample of every one at once; refuting the restriction refutes the mutant)
            m = cm.claim(fam, b, cost=cm.COST - KV_ROWS * (d + dv), suffix=".no-kv-term")
            out.append(replace(m, hyps=m.hyps + (eq(d, 1), eq(g, 1), eq(cm.B_r, 1), eq(cm.B_c, 1))))
        # the trivial bound × (1 + 1/64): the bound meets the count up to g·N_q words, so a larger one fails
        out.append(Implication(f"masks.{fam}.trivial-plus", "consistency", "the trivial bound × 65/64",
                               cm.hypotheses(fam, "trivial"), Fraction(65, 64) * TRIVIAL_UNIT <= cm.COST))
    for b in ("b1", "b2"):  # the links without the working set fitting in M
        link = cm.link(b)
        fit = [h for h in link.hyps if "mask_B_r·mask_B_c" in str(h) and "M" in str(h)]
        assert len(fit) == 1, [str(h) for h in link.hyps]  # the working set fitting in M, named, not by position
        out.append(replace(without_hypothesis(link, str(fit[0])), id=f"{link.id}.no-fit"))
    # the paged count with the partial last page read as a whole page of K
    whole = DECODE_BYTES - tensor_bytes("K") + UNITS * ROW_BLOCKS * ceil(Nkv / PAGE) * PAGE * d * cs.KV_BYTES
    out.append(cs.page_size_free(whole, suffix=".whole-last-page"))
    return out


@pytest.mark.parametrize("claim", _mutants(), ids=lambda c: c.id)
def test_mutant_is_refuted_with_a_valid_counterexample(claim):
    assert_refuted_with_valid_counterexample(claim, integer_point=True)


# the hypotheses at real block masks -------------------------------------------------------------------------
@st.composite
def family_masks(draw):
    kv, g = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    fam = draw(st.sampled_from(["causal", "window", "prefix", "document", "sparse"]))
    Nkv = draw(st.integers(1, 40))
    Nq = Nkv if fam == "document" else draw(st.integers(1, 40))
    d_ = draw(st.integers(1, 4))
    dv_ = draw(st.sampled_from([d_, draw(st.integers(1, 4))]))
    w = Workload.build(heads=g * kv, kv_heads=kv, Nq=Nq, Nkv=Nkv, d=d_, dv=dv_,
                       M=draw(st.integers(2 * d_ + 2 * dv_ + 8, 600)))
    params: dict[str, int] = {}
    if fam == "causal":
        mask = Causal()
    elif fam == "window":
        side = st.one_of(st.just(-1), st.integers(0, Nkv + 1))  # −1 (unbounded) as often as bounded
        left, right = draw(side), draw(side)
        assume(left >= 0 or right >= 0)  # (−1, −1) is no mask
        mask = SlidingWindow(left, right)
        params = {"mask_left": left, "mask_right": right}
    elif fam == "prefix":
        mask = PrefixLM(draw(st.integers(0, Nkv + 2)))
        params = {"mask_prefix": mask.prefix}
    elif fam == "document":
        cuts = sorted(draw(st.sets(st.integers(1, Nq - 1), max_size=4))) if Nq > 1 else []
        mask = Document([0, *cuts, Nq])
    else:
        bq, bk = draw(st.integers(1, 6)), draw(st.integers(1, 6))
        shape = (-(-Nq // bq), -(-Nkv // bk))
        lay = np.array(draw(st.lists(st.booleans(), min_size=shape[0] * shape[1], max_size=shape[0] * shape[1])))
        mask = BlockSparse(lay.reshape(shape).astype(bool), bq, bk)
        params = {"mask_block_q": bq, "mask_block_kv": bk, "mask_nnz": int(lay.sum())}
    return w, mask, params


def _families(mask) -> list[str]:
    if isinstance(mask, Causal):
        return ["causal", "sliding-window-left"]
    if isinstance(mask, SlidingWindow):
        left, right = mask.window_left, mask.window_right
        return ["sliding-window" if left >= 0 and right >= 0 else "sliding-window-left" if left < 0 else
                "sliding-window-right"]
    return {PrefixLM: ["prefix-lm"], Document: ["document"], BlockSparse: ["block-sparse"]}[type(mask)]


@settings(deadline=None)
@given(family_masks(), st.sampled_from(["per-head", "grouped"]))
def test_every_hypothesis_holds_at_real_block_masks_and_the_expressions_are_the_counts(case, schedule):
    """At the counts of the real block mask of the schedule's own tiling (the dense predicate counts rows and
    keys, independently of the closed forms), every hypothesis of the family's claims and links holds, and the
    claim's cost and bound expressions are flash2_masked_words and the masked bounds."""
    from attnio.algorithms.workloads import tiling

    w, mask, params = case
    try:
        t = tiling("flash2", w, schedule)
    except InvalidParameter:
        assume(False)
    if isinstance(mask, SlidingWindow):  # a side at −1 is the Python −1 of its family's claim, not the symbol
        params = {"mask_left": max(mask.window_left, 0), "mask_right": max(mask.window_right, 0)}
    g = w.groups if schedule == "grouped" else 1
    dense = mask.dense(w.Nq, w.Nkv)
    n = dense.sum(axis=1)
    bm = mask.blocks(w.Nq, w.Nkv, t.B_r, t.B_c)
    active = (bm.kinds != EMPTY).any(axis=1)
    rows = np.minimum(t.B_r, w.Nq - t.B_r * np.arange(active.size))
    env = {"Nq": w.Nq, "Nkv": w.Nkv, "d": w.d, "dv": w.dv, "M": w.M, "g": g, "mask_B_r": t.B_r, "mask_B_c": t.B_c,
           "mask_P": int(dense.sum()), "mask_q_rows": int((rows * active).sum()), "mask_kv_rows": bm.kv_rows,
           "mask_rows2": int((n >= 2).sum()), "mask_keys2": int(dense[n >= 2].any(axis=0).sum()),
           "mask_keys1": int(dense.any(axis=0).sum()), **params}
    units = w.kv_heads_total if schedule == "grouped" else w.query_heads_total
    reads, writes = flash2_masked_words(w, mask, t.B_r, t.B_c, grouped=schedule == "grouped")
    assert (units * evaluate(FLASH2_READS, env), units * evaluate(FLASH2_WRITES, env)) == (reads, writes)
    genv = {**env, "g": w.groups}
    assert w.kv_heads_total * evaluate(TRIVIAL_UNIT, genv) == trivial_masked_words(w, mask)
    best, value = masked_lower_bound(w, mask)
    unit = {"masks.trivial": TRIVIAL_UNIT, "masks.b1": B1_UNIT, "masks.b2": B2_UNIT}[best]
    assert value == w.kv_heads_total * evaluate(unit, genv) - (0 if best == "masks.trivial" else w.M)
    claims = {c.id: c for c in cm.CLAIMS}
    for fam in _families(mask):
        for b, (_, _, regime) in cm.BOUNDS.items():
            if not all(r.holds(env) for r in regime):
                continue
            c = claims[f"masks.{fam}.{b}-le-flash2"]
            failing = [logic.to_text(h) for h in c.hyps if not logic.holds(h, env)]
            assert not failing, (c.id, failing)
            assert logic.holds(c.goal, env)


# the paged claim at real decode calls -----------------------------------------------------------------------
@settings(deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), st.integers(1, 300), st.integers(1, 200),
       st.integers(1, 6), st.sampled_from(["fp32", "bf16"]), st.sampled_from([None, "fp8"]), st.booleans(),
       st.integers(1, 70))
def test_the_paged_claim_speaks_about_real_calls(batch, kv, g, Nkv, d_, splits, dtype, kv_dtype, shared, page):
    """At real paged decode calls every hypothesis of serving.paged.page-size-free holds and DECODE_BYTES (and the
    table's bytes) are decode_count's; at page 1 with the same effective splits and row blocks, the bytes less the
    table's are the same (what the claim states, measured on the numeric count)."""
    w = Workload.build(batch=batch, heads=g * kv, kv_heads=kv, Nq=1, Nkv=Nkv, d=d_, dv=d_, dtype=dtype, M=1 << 16)
    dec = Decode(splits=splits, page=page, kv_dtype=kv_dtype, shared_kv=shared)
    env = decode_env(w, dec)
    claim = cs.CLAIMS[0]
    assert all(logic.holds(h, env) for h in claim.hyps) and logic.holds(claim.goal, env)
    c = decode_count(w, dec)
    assert evaluate(DECODE_BYTES, env) == c.bytes_total
    assert evaluate(tensor_bytes("BT"), env) == c.words["BT"][0] * 4
    one = Decode(splits=splits, page=1, kv_dtype=kv_dtype, shared_kv=shared)
    e1 = decode_env(w, one)
    if (e1["dec_s"], e1["dec_Tq"]) == (env["dec_s"], env["dec_Tq"]):
        c1 = decode_count(w, one)
        assert c.bytes_total - 4 * c.words["BT"][0] == c1.bytes_total - 4 * c1.words["BT"][0]
