"""z3 claims about masked attention (docs/masks.md#z3-claims): for each named mask family, every masked lower bound
(the trivial bound, B1_P, B2_P with the mask's pair count) is at most the exact count of FlashAttention-2's masked
forward, for every parameter of the family's regime and every tiling that fits in fast memory.

The masked FA-2 count is written in the block mask's counts (bounds/masks.py: ``FLASH2_READS``,
``FLASH2_WRITES``; the numeric ``flash2_masked_words`` evaluates the same expressions), so a claim is over symbols
for those counts, tied together by the facts every block mask has (:data:`BLOCK_FACTS`) and by the family's own:
its closed-form pair count where it has one (``window_pairs``, ``prefix_pairs`` of bounds/masks.py, the same
functions run on expressions), and what its definition fixes (the last query row of a causal or prefix-LM mask
sees every key; a document mask is square and every row sees its own key). The facts are statements about real
block masks, not proved here: tests/test_mask_claims.py evaluates every hypothesis of every claim at the counts of
real block masks of the family (Hypothesis examples), so each claim speaks about those masks.

Per unit (g query heads sharing K/V in the grouped schedule; g = 1 per query head in the per-head one); the
workload's count is units × this, and its bounds are units × the per-unit term (the trivial bound) or units × the
per-unit term − M (B1_P, B2_P), so a per-unit claim without the −M gives the workload claim.

Ids: ``masks.<family>.<bound>-le-flash2``. The masked bounds generalise the workload pair-count and trivial bounds
(docs/bounds/workloads.md), whose catalog ids the claims name in ``about``.
"""

from __future__ import annotations

from attnio.bounds import blocks
from attnio.bounds.expr import Expr, Rel, eq
from attnio.bounds.masks import (
    B1_UNIT,
    B2_UNIT,
    EXPR_OPS,
    FLASH2_READS,
    FLASH2_WRITES,
    KEYS1,
    KEYS2,
    KV_ROWS,
    PAIRS,
    Q_ROWS,
    ROWS2,
    TRIVIAL_UNIT,
    prefix_pairs,
    window_pairs,
)
from attnio.bounds.symbols import M, Nkv, Nq, d, dv, g, sym
from attnio.bounds.workloads import (
    B1_CAUSAL,
    B1_RECT,
    B2_CAUSAL,
    B2_RECT,
    DV_EQ_D,
    TRIVIAL,
    TRIVIAL_CAUSAL,
    conditions,
)
from attnio.solver.claims.types import Implication

DOC = "docs/masks.md#z3-claims"

B_r = sym("mask_B_r", doc="query positions per Q block of one head (FA-2 tile rows)")
B_c = sym("mask_B_c", doc="keys per K/V block (FA-2 tile columns)")
LEFT = sym("mask_left", lo=0, doc="window_left of a sliding window, bounded (≥ 0)")
RIGHT = sym("mask_right", lo=0, doc="window_right of a sliding window, bounded (≥ 0)")
PREFIX = sym("mask_prefix", lo=0, doc="prefix length of a prefix-LM mask")
BQ = sym("mask_block_q", doc="query rows per block of a block-sparse layout")
BKV = sym("mask_block_kv", doc="keys per block of a block-sparse layout")
NNZ = sym("mask_nnz", lo=0, doc="True blocks of a block-sparse layout")

COST: Expr = FLASH2_READS + FLASH2_WRITES
#: sizes, and the FA-2 forward's working set with a Q block of g·B_r rows (g heads × B_r positions) beside a K/V
#: block of B_c rows (bounds/blocks.py: rows·(d + d_v + 3) + B_c·max(d, d_v) + rows·B_c ≤ M)
BASE: tuple[Rel, ...] = (1 <= Nq, 1 <= Nkv, 1 <= d, 1 <= dv, 1 <= g, 1 <= B_r, 1 <= B_c,
                         blocks.flash2(d, dv).words(g * B_r, B_c) <= M)
#: what every block mask of one head has: each allowed pair lies in a non-empty tile, inside its key span, in one of
#: at most B_r query rows; a row that sees ≥ 2 keys is in an active Q block; every key some row sees is in a span
BLOCK_FACTS: tuple[Rel, ...] = (PAIRS <= B_r * KV_ROWS, ROWS2 <= Q_ROWS, Q_ROWS <= Nq, KEYS2 <= KEYS1,
                                KEYS1 <= KV_ROWS, KEYS1 <= Nkv, PAIRS <= Nq * Nkv)

#: family → (the masks it speaks about, in words; the family's hypotheses)
FAMILIES: dict[str, tuple[str, tuple[Rel, ...]]] = {
    "causal": ("the bottom-right causal mask (k ≤ q + N_kv − N_q), its P the closed form of bounds/masks.py at "
               "window (−1, 0), the last query row seeing every key",
               (eq(PAIRS, window_pairs(Nq, Nkv, -1, 0, EXPR_OPS)), eq(KEYS1, Nkv))),
    "sliding-window": ("every sliding window bounded on both sides (window_left, window_right ≥ 0), its P the "
                       "closed form of bounds/masks.py",
                       (eq(PAIRS, window_pairs(Nq, Nkv, LEFT, RIGHT, EXPR_OPS)),)),
    "sliding-window-left": ("every sliding window unbounded on the left (window_left = −1, window_right ≥ 0; "
                            "causal is window_right = 0), its P the closed form of bounds/masks.py, the last query "
                            "row seeing every key",
                            (eq(PAIRS, window_pairs(Nq, Nkv, -1, RIGHT, EXPR_OPS)), eq(KEYS1, Nkv))),
    "sliding-window-right": ("every sliding window unbounded on the right (window_left ≥ 0, window_right = −1), "
                             "its P the closed form of bounds/masks.py",
                             (eq(PAIRS, window_pairs(Nq, Nkv, LEFT, -1, EXPR_OPS)),)),
    "prefix-lm": ("every prefix-LM mask (prefix ≥ 0), its P the closed form of bounds/masks.py, the last query row "
                  "seeing every key",
                  (eq(PAIRS, prefix_pairs(Nq, Nkv, PREFIX, EXPR_OPS)), eq(KEYS1, Nkv))),
    "document": ("every document mask (packed sequences, N_q = N_kv = N): each row sees its own key, so "
                 "N ≤ P ≤ N² and every key is seen",
                 (eq(Nq, Nkv), Nq <= PAIRS, eq(KEYS1, Nkv))),
    "block-sparse": ("every block-sparse layout of block_q × block_kv blocks with nnz True blocks: P ≤ "
                     "nnz·block_q·block_kv",
                     (PAIRS <= NNZ * BQ * BKV,)),
}

#: bound → (its name, its per-unit expression, its regime beyond BASE)
BOUNDS: dict[str, tuple[str, Expr, tuple[Rel, ...]]] = {
    "trivial": ("the masked trivial bound g(d·rows₂ + d_v·N_q) + d·keys₂ + d_v·keys₁", TRIVIAL_UNIT, ()),
    "b1": ("B1_P per unit without its −M, g·P·d²/M", B1_UNIT, B1_RECT.regime),
    "b2": ("B2_P per unit without its −M, 2g·P·d²/M", B2_UNIT, B2_RECT.regime),
}
assert B2_RECT.regime == (M >= 4 * d**2, DV_EQ_D) and B1_RECT.regime == (M >= 2 * d**2,)


def about(family: str, bound: str) -> tuple[str, ...]:
    """The workload bounds the masked bound generalises (the causal ones for the causal family)."""
    if bound == "trivial":
        return (TRIVIAL_CAUSAL.id,) if family == "causal" else (TRIVIAL.id,)
    pair = (B1_RECT, B1_CAUSAL) if bound == "b1" else (B2_RECT, B2_CAUSAL)
    return (pair[1].id,) if family == "causal" else tuple(b.id for b in pair)


def _kv_words(bound: str) -> Rel:
    """B1_P's or B2_P's per-unit term ≤ the K words the masked FA-2 forward reads, d·kv_rows."""
    return BOUNDS[bound][1] <= d * KV_ROWS


def link(bound: str) -> Implication:
    """``masks.any.<bound>-le-kv-words``: for every mask and every tiling that fits, the bound's per-unit term is at
    most d·kv_rows: g·P·(d + d_v) ≤ g·B_r·(d + d_v)·kv_rows ≤ M·kv_rows (each pair in a span of a tile of ≤ B_r
    rows; the Q block's g·B_r rows of d + d_v words fit in M), and d² ≤ d(d + d_v)/c (c = 1; c = 2 with d_v = d)."""
    what, _, regime = BOUNDS[bound]
    hyps = BASE + BLOCK_FACTS + regime
    return Implication(
        f"masks.any.{bound}-le-kv-words",
        "derivation",
        f"[masks] For every mask: {what} ≤ d·kv_rows, the K words the masked FA-2 forward reads, for every tiling "
        "B_r × B_c whose working set fits in M and every block-mask count with the facts every block mask has, "
        "where " + conditions(hyps) + ".",
        hyps,
        _kv_words(bound),
        provenance=DOC,
        about=about("any", bound),
    )


def hypotheses(family: str, bound: str) -> tuple[Rel, ...]:
    """The claim's regime; for B1_P and B2_P it restates the fact its link :func:`link` proves from a subset of it
    (BASE, BLOCK_FACTS and the bound's regime), so the regime is unchanged."""
    fact = (_kv_words(bound),) if bound != "trivial" else ()
    return BASE + BLOCK_FACTS + FAMILIES[family][1] + BOUNDS[bound][2] + fact


def claim(family: str, bound: str, cost: Expr = COST, suffix: str = "") -> Implication:
    """``masks.<family>.<bound>-le-flash2``: bound per unit ≤ ``cost`` (the masked FA-2 forward count per unit;
    tests pass a mutant)."""
    what, expr, _ = BOUNDS[bound]
    hyps = hypotheses(family, bound)
    return Implication(
        f"masks.{family}.{bound}-le-flash2{suffix}",
        "consistency",
        f"[masks] For {FAMILIES[family][0]}: {what} ≤ the masked FA-2 forward's count per unit "
        "g·d·q_rows + (d + d_v)·kv_rows + g·N_q(d_v + 1), for every tiling B_r × B_c whose working set fits in M and "
        "every block-mask count with the facts every block mask has, where " + conditions(hyps)
        + (f" (the last fact is masks.any.{bound}-le-kv-words)" if bound != "trivial" else "") + ".",
        hyps,
        expr <= cost,
        provenance=DOC,
        about=about(family, bound),
    )


CLAIMS: list[Implication] = [link("b1"), link("b2")] + [claim(f, b) for f in FAMILIES for b in BOUNDS]
