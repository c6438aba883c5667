"""Links as data: bounds name the algorithms that attain them, claims name the bounds they are about, the
``tight.*`` claims are built from the bound they tighten, regimes are defined once, one tiling protocol."""

from __future__ import annotations

import inspect
import json

from attnio.algorithms import registry
from attnio.bounds.catalog import CACHE_REGIMES, all_bounds, by_id, machine_bounds
from attnio.cli import main
from attnio.solver.claims import all_claims
from attnio.solver.claims import by_id as claim_by_id
from attnio.solver.claims.tight import SPECS


def test_every_link_names_something_that_exists() -> None:
    bounds = {b.id for b in all_bounds() + machine_bounds()}
    for b in all_bounds():
        for a in b.attained_by:  # InvalidParameter if not registered
            registry.get(a)
    for c in all_claims():
        assert set(c.about) <= bounds, (c.id, c.about)


def test_tight_claims_are_built_from_the_bound_they_tighten() -> None:
    tights = [c for c in all_claims() if c.id.startswith("tight.")]
    forward = [s for s in SPECS if not s.backward]
    assert [c.id for c in tights] == [s.id for s in forward]
    for c, spec in zip(tights, forward, strict=True):
        name = spec.name
        b = by_id(spec.about[0])
        assert c.about == (*spec.about, f"exact.{name}") and c.about[0] == b.id
        assert name in b.attained_by, (c.id, b.id)
        assert set(b.regime) <= set(c.hyps)  # the bound's own regime, plus the algorithm's valid region
        assert c.g == spec.shape and (spec.shape == b.expr or name == "standard")


def test_one_spec_tuple_builds_every_tightest_claim_and_its_tile_facts() -> None:
    from attnio.solver.claims.build import formula, tight_claims
    from attnio.solver.claims.types import Tightest

    tightest = [c.id for c in all_claims() if isinstance(c, Tightest)]
    assert sorted(s.id for s in SPECS) == sorted(i for i in tightest if i != "backward.tight.training.flash2")
    for spec in SPECS:
        claim, *tiles = tight_claims(spec)
        assert claim == claim_by_id(spec.id) and claim.where == spec.origin
        f = formula(spec)
        for t in tiles:  # each tile fact restated in the claim's hypotheses is proved by its own link claim
            assert t == claim_by_id(t.id) and t.hyps[: len(spec.regime)] == spec.regime
            assert set(t.goal.parts) <= set(claim.hyps) - set(spec.regime + f.valid)
        assert bool(tiles) == (spec.tiles is not None)


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


# claims ↔ bounds, both ways ---------------------------------------------------------------------------------------
def test_every_claim_names_a_bound_or_is_a_meta_claim_saying_why() -> None:
    claims = all_claims()
    for c in claims:
        assert bool(c.about) != bool(c.meta), (c.id, c.about, c.meta)
    named = sum(bool(c.about) for c in claims)
    assert named >= 0.95 * len(claims), (named, len(claims))


def test_every_paper_bound_has_a_claim_or_an_asymptotic_only_note() -> None:
    about = {b for c in all_claims() for b in c.about}
    for b in all_bounds() + machine_bounds():
        assert (b.id in about) != bool(b.asymptotic_only), (b.id, b.asymptotic_only)
        assert not (b.asymptotic_only and b.explicit), b.id


def test_every_step_table_names_a_catalog_bound_and_catalog_claims() -> None:
    from attnio.bounds.proofs import PROOF_STEPS

    bounds = {b.id for b in all_bounds() + machine_bounds()}
    claims = {c.id for c in all_claims()}
    assert set(PROOF_STEPS) <= bounds, set(PROOF_STEPS) - bounds
    assert {cid for steps in PROOF_STEPS.values() for _, cid in steps} - {"prose"} <= claims


def test_proof_step_claims_are_about_the_bounds_whose_step_lists_name_them() -> None:
    from attnio.bounds.proofs import PROOF_STEPS

    for bound_id, steps in PROOF_STEPS.items():
        for _, cid in steps:
            if cid != "prose":
                assert bound_id in claim_by_id(cid).about, (cid, bound_id)
    assert "constants.bs" in claim_by_id("constants.bs.relax").about  # BS's label, off the step list
    assert "sy.thm3.1.lower" in claim_by_id("sy.min-branch.small").about
    # Thm 3.1's O side: square tiling below M = d², flash2 above; Li et al.'s likewise for the backward
    assert {"sy.thm3.1.upper"} <= set(claim_by_id("tight.square_tiling").about) & set(claim_by_id("tight.flash2").about)
    assert "li.backward.upper" in claim_by_id("backward.tight.square_tiling-bwd").about


def test_each_claim_records_the_function_that_defines_it() -> None:
    import importlib

    for c in all_claims():
        mod, _, func = c.where.partition(":")
        assert mod.startswith("attnio.solver.claims.") and func, (c.id, c.where)
        if func != "<module>":
            assert hasattr(importlib.import_module(mod), func.split(".")[0]), (c.id, c.where)
    assert claim_by_id("sy.meet").where == "attnio.solver.claims.seed:saha_ye_claims"


def test_the_fingerprint_covers_the_statement_not_the_links() -> None:
    from dataclasses import replace

    from attnio.solver.verify import fingerprint

    c = claim_by_id("sy.meet")
    assert fingerprint(replace(c, about=("trivial.4Nd",))) == fingerprint(c)
    assert fingerprint(replace(c, description=c.description + " ")) != fingerprint(c)
    assert fingerprint(replace(c, hyps=())) != fingerprint(c)


def test_cli_verify_selects_by_glob_and_by_bound(capsys) -> None:
    assert main(["verify", "--list", "--claim", "sy.min-branch.*"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert ids == ["sy.min-branch.small", "sy.min-branch.large"]
    assert main(["verify", "--list", "--where", "--about", "constants.bs"]) == 0
    out = capsys.readouterr().out
    assert "constants.bs.pairs  [derivation]" in out and "defined in attnio.solver.claims.constants:" in out
    assert "sy.meet" not in out
    assert main(["verify", "--list", "--json", "--about", "sy.thm3.1.lower", "--claim", "sy.*"]) == 0
    r = json.loads(capsys.readouterr().out)["claims"]
    assert r and all(c["id"].startswith("sy.") and "sy.thm3.1.lower" in c["about"] and c["where"] for c in r)
    assert main(["verify", "--about", "sy.lemma4.16"]) == 0  # asymptotic only: nothing to verify, and why
    assert "asymptotic only" in capsys.readouterr().out
    for bad in (["--claim", "nosuch.*"], ["--about", "nosuch"]):
        assert main(["verify", "--list", *bad]) == 2
        assert "is invalid" in capsys.readouterr().err


def test_cli_bounds_id_shows_where_each_claim_is_defined_and_the_asymptotic_note(capsys) -> None:
    assert main(["bounds", "--id", "sy.thm3.1.lower", "--no-verify"]) == 0
    out = capsys.readouterr().out
    assert "sy.min-branch.small [branch]" in out and "defined in attnio.solver.claims.seed:saha_ye_claims" in out
    assert main(["bounds", "--id", "sy.thm4.17", "--no-verify"]) == 0
    assert "none: asymptotic only." in capsys.readouterr().out
