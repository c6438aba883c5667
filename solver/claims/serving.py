"""z3 claims about decoding against a paged KV cache (docs/serving.md#claims).

``serving.paged.page-size-free``: the decode call's bytes (bounds/serving.py's ``DECODE_BYTES``, the expression
``decode_count`` evaluates) less the block table's bytes are the same at every page size p ≥ 1 as at p = 1, for
every number of units, splits, row blocks, packed rows, N_kv (a partial last page included: the table has
⌈N_kv/p⌉ entries per row block), widths, element sizes and every choice of fp8 scales, a V of its own or a slice
of K's row, and split partials. The split count s and the row blocks T_q are the schedule's (the block rule fixes
them from M, the page and the split request): the claim compares page sizes at equal s and T_q.
"""

from __future__ import annotations

from attnio.bounds.expr import eq, substitute
from attnio.bounds.serving import (
    DECODE_BYTES,
    FP8,
    KV_BYTES,
    OWN_V,
    PAGE,
    PAGED,
    Q_BYTES,
    ROW_BLOCKS,
    ROWS,
    SPLIT,
    SPLITS,
    UNITS,
    tensor_bytes,
)
from attnio.bounds.symbols import Nkv, d, dv
from attnio.solver.claims.types import Implication

DOC = "docs/serving.md#claims"

REGIME = (1 <= UNITS, 1 <= SPLITS, 1 <= ROW_BLOCKS, 1 <= ROWS, 1 <= Nkv, 1 <= d, 1 <= dv, 1 <= Q_BYTES,
          1 <= KV_BYTES, 1 <= PAGE, FP8 <= 1, OWN_V <= 1, SPLIT <= 1, eq(PAGED, 1))


def page_size_free(total=DECODE_BYTES, suffix: str = "") -> Implication:
    """The claim (``total``: the call's bytes; tests pass a mutant)."""
    no_table = total - tensor_bytes("BT")
    return Implication(
        f"serving.paged.page-size-free{suffix}",
        "identity",
        "[serving] A paged decode call's bytes less its block table's 4·units·T_q·⌈N_kv/p⌉ bytes are the same at "
        "every page size p as at p = 1 (the same K, V, scales, Q, O and partials), at the schedule's split count s "
        "and row blocks T_q, for every units, s, T_q, packed rows R, N_kv (a partial last page included), d, d_v, "
        "bytes per word of Q/O and of K/V, and every choice (0/1) of fp8 scales, a V of its own and split partials, "
        "where (" + ", ".join(str(r) for r in REGIME) + ").",
        REGIME,
        eq(no_table, substitute(no_table, {PAGE: 1})),
        provenance=DOC,
        meta="a fact of the paged decode schedule's count (bounds/serving.py), about no catalog bound: the catalog "
        "has no decode bound",
    )


CLAIMS: list[Implication] = [page_size_free()]
