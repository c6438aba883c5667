"""BSPV-cap (docs/bounds/bspv-cap.md): BSPV's count with the cap kept, value width d_v, at every M.

Its claims are appended to ``solver/claims/bspv.py``'s ``CLAIMS``, so tests/test_bspv.py's parametrised z3 and cvc5
tests prove every one of them (step claims and consistency links); here: the claims exist and name the bound, a
tightened step refuted with a counterexample, the encoded expression is the max of the proved rearrangement at
c ∈ {1, 2, 4}, the doc page names every step, the bound is below every covered schedule's exact count on grids
with d_v ≠ d, the chains cover every formula but flash1 (audit mode: its working set exceeds M, and the bound is
above its count at M = 1, d_v = 1), the constants table's rows that move, and the ratio script.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms import registry
from attnio.bounds import constants
from attnio.bounds.catalog import all_bounds
from attnio.bounds.constants import BSPV, BSPV_CAP, BSPV_CAP_CS, BSPV_NEAR, bspv_cap_form
from attnio.bounds.costs import FORMULAS
from attnio.bounds.expr import Max, evaluate, substitute
from attnio.bounds.proofs import PROOF_STEPS
from attnio.bounds.symbols import M, N, d, dv
from attnio.reports.sources import constants_rows
from attnio.solver.claims import all_claims, by_id
from attnio.solver.claims import bspv as cb
from attnio.solver.claims import constants as cc
from attnio.solver.verify import verify_claim

ROOT = Path(__file__).resolve().parent.parent
AUDIT = frozenset(n for n in registry.names() if registry.get(n).audit)
CAP_IDS = [c.id for c in cb.CAP_STEP_CLAIMS] + [c.id for c in cb.cap_consistency_claims()]


def _float(e, env) -> float:
    return float(evaluate(e, env))


def test_the_record() -> None:
    assert BSPV_CAP in all_bounds() and BSPV_CAP in constants.BOUNDS
    assert BSPV_CAP.status == "derived here (refereed)"  # a fresh referee checked the proof (docs/bounds/bspv-cap.md)
    assert BSPV_CAP.kind == "lower" and BSPV_CAP.explicit and BSPV_CAP.regime == ()
    assert set(BSPV_CAP.symbols) == {"N", "d", "M", "dv"} and BSPV_CAP.cdag == BSPV.cdag
    assert (ROOT / BSPV_CAP.doc).exists() and "**derived here (refereed)**" in (ROOT / BSPV_CAP.doc).read_text()
    assert BSPV_CAP in constants.proved_lower_bounds()


def test_expression_is_the_max_of_the_rearrangement_at_each_c() -> None:
    """The encoded bound is max over c ∈ {1, 2, 4} of step 13's conclusion (claim bspv-cap.rearrange) at c."""
    assert isinstance(BSPV_CAP.expr, Max) and len(BSPV_CAP.expr.args) == len(BSPV_CAP_CS) == 3
    goal = by_id("constants.bspv-cap.rearrange").goal
    rhs = goal.rhs if goal.lhs == cb.Q else goal.lhs
    for cv, branch in zip(BSPV_CAP_CS, BSPV_CAP.expr.args, strict=True):
        assert branch == bspv_cap_form(cv)
        inst = substitute(rhs, {cb.R: cv * M, cb.cap_T: substitute(cb.CAP_SEG, {cb.c_ratio: cv})})
        for env in ({"N": 4096, "d": 128, "dv": 128, "M": 16384}, {"N": 77, "d": 9, "dv": 31, "M": 5}):
            assert _float(inst, env) == pytest.approx(_float(branch, env), rel=1e-12)


def test_expression_against_the_statement_written_out() -> None:
    """c·√27·N²(d + d_v)/K′^{3/2} − cM with K′ = (2 + c)M + (1 + c)²M²/(4d²), written here in floating point."""
    for n, dd, vv, mm in ((4096, 128, 128, 16384), (4096, 128, 64, 8192), (1000, 16, 48, 300), (64, 8, 8, 1)):
        want = max(
            c * mm * (math.sqrt(27) * n * n * (dd + vv) / ((2 + c) * mm + (1 + c) ** 2 * mm * mm / (4 * dd * dd)) ** 1.5 - 1)
            for c in (1, 2, 4)
        )
        assert _float(BSPV_CAP.expr, {"N": n, "d": dd, "dv": vv, "M": mm}) == pytest.approx(want, rel=1e-12)


def test_claims_exist_and_name_the_bound() -> None:
    claims = {c.id: c for c in all_claims()}
    for cid in CAP_IDS:
        assert cid in claims and BSPV_CAP.id in claims[cid].about, cid
    for cid in ("constants.bs.amgm", "constants.bs.combine", "constants.bs.cubic", "constants.bs.best_R"):
        assert BSPV_CAP.id in claims[cid].about, cid  # BS's algebra, listed in BSPV-cap's PROOF_STEPS
    assert set(CAP_IDS) <= {c.id for c in cb.CLAIMS}  # so tests/test_bspv.py proves each by z3 and by cvc5


def test_doc_page_names_every_step() -> None:
    page = (ROOT / BSPV_CAP.doc).read_text()
    steps = PROOF_STEPS[BSPV_CAP.id]
    assert sorted({n for n, _ in steps}) == list(range(1, 15))
    for n, how in steps:
        line = re.search(rf"^{n}\. .*$", page, flags=re.M)
        assert line, n
        assert ("argued in prose" in line.group(0)) if how == "prose" else f"claim {how}" in line.group(0), (n, how)
    for cid in CAP_IDS:  # the consistency section names every link (by id, or by its c-family)
        short = cid.removeprefix("constants.")
        assert short in page or re.sub(r"\.c\d$", ".c{1,2,4}", short) in page or short.rsplit(".", 1)[-1] in page, cid


# ------------------------------------------------------------------------------------------- mutants


def _mutate(claim_id: str, goal):
    c = by_id(claim_id)
    return replace(c, id=c.id + ".mutant", goal=goal)


G = cb.CAP_G
MUTANTS = {
    # the pair face without the cap's (M + R)²/(4d²): complete pairs are not free
    "third@no-cap": _mutate("constants.bspv-cap.third", cb.x + cb.c_pairs + cb.o1 <= 2 * M + cb.R - cb.s),
    # the cap at (M + R)²/(5d²)
    "pairs@5d2": _mutate("constants.bspv-cap.pairs", cb.I_rows * cb.J_cols <= (M + cb.R) ** 2 / (5 * d**2)),
    # the per-segment maximum with 28 in place of 27
    "segment@28": _mutate("constants.bspv-cap.segment", cb.Y <= M * cb.sqrt(M) * G * cb.sqrt(G / 28)),
    # the rearrangement with 11/10 of the leading term
    "rearrange@11/10": _mutate("constants.bspv-cap.rearrange", cb.Q >= Fraction(11, 10) * cb.R * N**2 * (d + dv) / cb.cap_T - cb.R),
    # the flash link with 3/5 < 2/3 (tight at c = 1, M = 3d²/2)
    "relax_flash@3/5": _mutate("constants.bspv-cap.relax_flash.c1", bspv_cap_form(1) <= Fraction(3, 5) * N**2 * d * (d + dv) / M),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_tightened_step_is_refuted_with_a_counterexample(name: str) -> None:
    out = verify_claim(MUTANTS[name])
    assert out.status == "refuted" and not out.spurious, (name, out)


# ------------------------------------------------------------------------------------------- consistency


def test_chains_cover_every_formula_but_flash1() -> None:
    ids = set(CAP_IDS)
    for n in FORMULAS:
        if not cc._is_standard(n):
            continue
        if n in cb.CAP_NOT_COVERED:
            assert n in AUDIT, n  # left out only because its working set exceeds M
            continue
        if n in cb.CAP_VIA_BLOCKS:
            via = "constants.bspv-cap.via_blocks" + ("_split_v" if n == "split_v" else "")
            chain = {f"constants.consistency.bspv-cap.{n}.{k}" for k in ("blocks", "fits", "positive")} | {via} | {
                f"constants.bspv-cap.relax_flash.c{c}" for c in BSPV_CAP_CS}
        elif n == "square_tiling-io":
            chain = {f"constants.consistency.bspv-cap.{n}.{k}" for k in ("phases", "tiles1", "tiles2")} | {
                f"constants.bspv-cap.{k}.{p}" for k in ("ceil_split", "tiles_amgm") for p in ("qk", "pv")} | {
                "constants.bspv-cap.phases_sum"} | {f"constants.bspv-cap.relax_sqrt.c{c}" for c in BSPV_CAP_CS}
        else:
            via = "flash" if n in cb.CAP_VIA_FLASH else "sqrt"
            chain = {f"constants.consistency.bspv-cap.le.{n}"} | {f"constants.bspv-cap.relax_{via}.c{c}" for c in BSPV_CAP_CS}
        assert chain <= ids, (n, chain - ids)


def test_flash1_is_left_out_because_the_bound_is_above_its_count_at_m_1() -> None:
    env = {"N": 64, "d": 64, "dv": 1, "M": 1}
    assert evaluate(BSPV_CAP.expr, env) > evaluate(FORMULAS["flash1"].io, env) == 291072


def _covered_costs(env: dict) -> dict[str, int]:
    out = {}
    for name, fm in FORMULAS.items():
        if name in AUDIT or not cc._is_standard(name) or not all(r.holds(env) for r in fm.valid):
            continue
        out[name] = int(evaluate(fm.io, env))
    return out


@settings(max_examples=400)
@given(st.integers(1, 1 << 14), st.integers(1, 256), st.integers(1, 512), st.floats(0.0, 4.0), st.booleans())
def test_bound_below_every_covered_schedule_on_a_grid_dv_free(n: int, dd: int, vv: int, f: float, same: bool) -> None:
    vv = dd if same else vv
    mm = max(1, round(f * dd * dd))
    env = {"N": n, "d": dd, "dv": vv, "M": mm}
    lb = _float(BSPV_CAP.expr, env)
    for name, cost in _covered_costs(env).items():
        assert lb <= cost * (1 - 1e-12), (name, env, lb, cost)


def test_bound_below_every_covered_schedule_on_a_dense_grid() -> None:
    """Every M of a few (N, d, d_v), d_v ≠ d included, from 1 to 4d², least ratio reported in the message."""
    least = math.inf
    for n, dd, vv in ((256, 16, 16), (256, 16, 4), (300, 12, 40)):
        for mm in range(1, 4 * dd * dd + 1):
            env = {"N": n, "d": dd, "dv": vv, "M": mm}
            lb = _float(BSPV_CAP.expr, env)
            for name, cost in _covered_costs(env).items():
                assert lb <= cost, (name, env)
                if lb > 0:
                    least = min(least, cost / lb)
    assert 1 < least < 10, least


def test_falsification_draws_this_bound() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("falsif", ROOT / "tests" / "test_bound_falsification.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    assert BSPV_CAP.id in {b.id for b in mod.LOWER}
    assert mod.family(BSPV_CAP) == "forward" and not mod.dv_pinned(BSPV_CAP)  # drawn at d_v ≠ d too


# ------------------------------------------------------------------------------------------- numbers


def test_gains_near_d_squared_and_the_table_row_that_moves() -> None:
    n, dd = 4096, 128
    for mm in (8192, 12288, 16384):
        env = {"N": n, "d": dd, "dv": dd, "M": mm}
        assert evaluate(BSPV_CAP.expr, env) > 1.15 * evaluate(BSPV_NEAR.expr, env), mm
    row = constants_rows(((4096, 128, 4096),))[0]
    assert row.best_proved_bound == BSPV_CAP.id  # at M = d²/4 (BSPV before)
    row = constants_rows(((4096, 128, 1024),))[0]
    assert row.best_proved_bound == BSPV.id  # at d²/16 BSPV stays the larger


def test_ratio_script(capsys: pytest.CaptureFixture[str]) -> None:
    import runpy

    runpy.run_path(str(ROOT / "tools" / "bspv_ratios.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    rows = [ln.strip("| ").split(" | ") for ln in out[3:12]]
    assert [r[0] for r in rows] == ["1/64", "1/16", "1/4", "1/2", "3/4", "1", "5/4", "3/2", "2"]
    before, after = [float(r[4]) for r in rows], [float(r[6]) for r in rows]
    assert all(a <= b for a, b in zip(after, before, strict=True)), (before, after)
    assert all(1 < a < 3.3 for a in after), after
    flash2 = re.search(r"M = d²: ([\d.]+) before, ([\d.]+) after", out[-1])
    assert flash2 and float(flash2.group(2)) < float(flash2.group(1)) - 1, out[-1]
