"""Links as data: bounds name the algorithms that attain them, claims name the bounds they are about, the
``tight.*`` claims are built from the bound they tighten, regimes are defined once, one tiling protocol."""

from __future__ import annotations

import inspect
import json

from attnio.algorithms import registry
from attnio.bounds.catalog import CACHE_REGIMES, all_bounds, by_id
from attnio.solver.claims import all_claims
from attnio.solver.claims import by_id as claim_by_id
from attnio.solver.claims_core import LARGE_D, TIGHTENS

from attnio.cli import main


def test_every_link_names_something_that_exists() -> None:
    bounds = {b.id for b in all_bounds()}
    for b in all_bounds():
        for a in b.attained_by:  # InvalidParameter if not registered
            registry.get(a)
    for c in all_claims():
        assert set(c.about) <= bounds, (c.id, c.about)


def test_tight_claims_are_built_from_the_bound_they_tighten() -> None:
    tights = [c for c in all_claims() if c.id.startswith("tight.")]
    assert len(tights) == len(TIGHTENS) + len(LARGE_D)
    for c in tights:
        name = c.id.removeprefix("tight.").removesuffix(".large-d")
        t = (LARGE_D if c.id.endswith(".large-d") else TIGHTENS)[name]
        b = by_id(t.bound)
        assert c.about == (b.id, f"exact.{name}")
        assert name in b.attained_by, (c.id, b.id)
        assert set(b.regime) <= set(c.hyps)  # the bound's own regime, plus the algorithm's valid region
        assert c.g == (b.expr if t.shape is None else t.shape)


def test_every_exact_cost_is_attained_by_its_algorithm() -> None:
    for b in all_bounds():
        if b.id.startswith("exact."):
            assert b.attained_by == (b.id.removeprefix("exact."),)


def test_the_saha_ye_coverage_claim_uses_the_catalogs_cache_regimes() -> None:
    c = claim_by_id("coverage.saha-ye")
    assert [rels for _, rels in c.regimes] == [rels for _, _, rels in CACHE_REGIMES]


def test_one_tiling_protocol_and_one_approximate_flag() -> None:
    for name in registry.names():
        spec = registry.get(name)
        t = spec.tiling_cls
        assert isinstance(t, registry.Tiling), name
        assert list(inspect.signature(t.default).parameters)[:4] == ["N", "d", "M", "dv"], name
        assert list(inspect.signature(t.min_M).parameters)[:3] == ["N", "d", "dv"], name
        assert spec.approximate == hasattr(t, "prepare_inputs"), name
    assert [n for n in registry.names() if registry.get(n).approximate] == ["poly"]


def test_cli_bounds_id_shows_statement_schedule_formula_and_claims_with_verdicts(capsys) -> None:
    assert main(["bounds", "--id", "sy.thm3.5"]) == 0
    out = capsys.readouterr().out
    assert "SquareTilingAttention" in out  # the statement
    assert "square_tiling:" in out and "exact cost (d_v = d): " in out and "⌊√(M/4)⌋" in out  # schedule and formula
    assert "tight.square_tiling [tightest] proved, constant 33/2" in out  # the claim and its verdict
    assert main(["bounds", "--id", "sy.lemma3.4.explicit", "--json", "--no-verify"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert [s["algorithm"] for s in r["schedules"]] == ["flash2"] and r["schedules"][0]["formula"]
    ids = {c["id"] for c in r["claims"]}
    assert "consistency.sy.lemma3.4.explicit.flash2" in ids and "sy.lemma3.4.step-io" in ids
    assert all(c["verdict"] is None for c in r["claims"])
