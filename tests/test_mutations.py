"""Deliberately wrong claims must be refuted, each with a valid (integer, non-spurious) counterexample that is
re-evaluated here, independently of the solver."""

from __future__ import annotations

from fractions import Fraction

import pytest
from checks import assert_refuted_with_valid_counterexample

from attnio.bounds.costs import FORMULAS, WORKLOAD_FORMULAS
from attnio.bounds.expr import eq, minimum, sqrt
from attnio.bounds.symbols import M, N, d, g
from attnio.bounds.workloads import B2_RECT, DV_EQ_D, PAIRS_RECT
from attnio.solver import logic
from attnio.solver.claims import Implication

F2 = FORMULAS["flash2"].with_dv_equal_d()
_F2G = WORKLOAD_FORMULAS[("flash2", "grouped", False)]
LARGE_D = (64 <= d, 4 * d**2 <= M, M <= N * d) + F2.valid
SMALL = N**2 * d / sqrt(M)
LARGE = N**2 * d**2 / M

MUTANTS = [
    # wrong exponent: d instead of d² in FlashAttention's shape (true: ≤ 24·N²d²/M + 4Nd, tight.flash2)
    Implication("mut.exponent", "inequality", "flash2 ≤ 24·N²d/M + 4Nd", (d <= M, M <= N * d) + F2.valid,
                F2.io <= 24 * N**2 * d / M + 4 * N * d),
    # swapped regimes: the small-cache branch claimed for the large cache
    Implication("mut.swapped", "branch", "min takes N²d/√M for M ≥ d²", (d**2 <= M,),
                eq(minimum(SMALL, LARGE), SMALL)),
    # too-small constant: flash2's leading constant is 4, and rounding pushes it to 67/16 at d ≥ 64
    Implication("mut.constant", "inequality", "flash2 ≤ 4·N²d²/M + 4Nd for d ≥ 64", LARGE_D,
                F2.io <= 4 * LARGE + 4 * N * d),
    # missing +Nd term: the proved constant 67/16 without the additive 4Nd fails near M = Nd
    Implication("mut.missing-Nd", "inequality", "flash2 ≤ (67/16)·N²d²/M", LARGE_D,
                F2.io <= Fraction(67, 16) * LARGE),
    # wrong crossover: square tiling's leading cost beats flash2's exactly below M = d² (true boundary ≈ 0.223 d²)
    Implication("mut.crossover", "iff", "8N²d/√M + N² < 4N²d²/M ⇔ M < d²", (),
                logic.Iff(8 * SMALL + N**2 < 4 * LARGE, M < d**2)),
    # Saha–Ye's meeting point typed wrongly as M = d
    Implication("mut.meet", "identity", "formulas meet at M = d", (eq(M, d),), eq(SMALL, LARGE)),
    # B2_P's earlier encoding: its regime without d_v = d (grouped flash2 moves less than 2g·P·d²/M at d_v < d)
    Implication("mut.b2p-without-dv", "consistency", "grouped flash2 unit ≥ 2g·N_q·N_kv·d²/M where M ≥ 4d² (any d_v)",
                (1 <= g,) + _F2G.valid + tuple(r for r in B2_RECT.regime if r != DV_EQ_D),
                _F2G.io >= g * 2 * PAIRS_RECT * d**2 / M),
]


@pytest.mark.parametrize("claim", MUTANTS, ids=lambda c: c.id)
def test_wrong_claim_is_refuted_with_a_valid_counterexample(claim):
    assert_refuted_with_valid_counterexample(claim, integer_point=True)
