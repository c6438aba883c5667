"""The bounds catalog: records well formed, derivations present, numbers checked against worked numbers computed by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

from attnio.bounds.catalog import all_bounds, explicit_io_lower_bounds
from attnio.bounds.costs import FORMULAS
from attnio.bounds.expr import evaluate
from attnio.bounds.types import KINDS, STATUSES

ROOT = Path(__file__).resolve().parents[1]
BY_ID = {b.id: b for b in all_bounds()}


def test_ids_unique_and_records_well_formed():
    ids = [b.id for b in all_bounds()]
    assert len(ids) == len(set(ids))
    for b in all_bounds():
        assert b.kind in KINDS and b.status in STATUSES
        assert b.provenance
        if b.explicit and b.kind != "exact":
            assert b.constant is not None, b.id


def test_every_derivation_page_exists():
    for b in all_bounds():
        if b.doc:
            assert (ROOT / b.doc.split("#")[0]).is_file(), (b.id, b.doc)


def test_required_seed_entries_present():
    required = {
        "trivial.4Nd", "fa.thm2.standard", "fa.thm2.flash", "fa.prop3", "fa.thm5.flash-backward",
        "sy.thm3.1.lower", "sy.lemma3.3.explicit", "sy.lemma3.4", "sy.lemma3.4.explicit", "sy.thm3.5",
        "sy.lemma3.6.hong-kung", "smith.mm", "sy.thm3.7", "sy.thm4.8", "sy.thm4.8.explicit", "sy.thm4.14",
        "sy.lemma4.15", "sy.lemma4.16", "sy.thm4.17", "li.backward.lower", "li.backward.upper",
    }
    assert required <= set(BY_ID)


def test_one_exact_entry_per_cost_formula():
    for name in FORMULAS:
        b = BY_ID[f"exact.{name}"]
        assert b.kind == "exact" and b.explicit


def test_explicit_forms_match_the_research_notes_worked_numbers():
    # N²d²/(8M) − M worked by hand, independently of this code
    lb = BY_ID["sy.lemma3.4.explicit"].expr
    assert evaluate(lb, {"N": 4096, "d": 64, "M": 16384}) == 507_904
    assert evaluate(lb, {"N": 65536, "d": 64, "M": 65536}) == 33_488_896
    assert evaluate(lb, {"N": 65536, "d": 128, "M": 1048576}) == 7_340_032
    # Thm 4.8 explicit: in the large cache it coincides with Lemma 3.4's form
    assert evaluate(BY_ID["sy.thm4.8.explicit"].expr, {"N": 4096, "d": 64, "M": 16384}) == 507_904
    # small cache: min(N²d²/(8M), N²/8) − M = N²/8 − M at N = 1024, d = 128, M = 4096
    assert evaluate(BY_ID["sy.thm4.8.explicit"].expr, {"N": 1024, "d": 128, "M": 4096}) == 1024**2 // 8 - 4096
    # worked by hand: N²d/√M = 2,097,152 at (1024, 128, 4096)
    assert evaluate(BY_ID["sy.thm3.7"].expr, {"N": 1024, "d": 128, "M": 4096}) == 2_097_152


def test_explicit_lower_bounds_are_below_every_exact_cost_on_a_grid():
    """Numeric spot check (weaker than the solver's consistency.* claims, which cover every parameter)."""
    lbs = explicit_io_lower_bounds()
    for name, f in FORMULAS.items():
        g = f.with_dv_equal_d()
        for n in (2, 64, 1024):
            for dd in (1, 16, 64):
                for m in (4, 64, 1000, 4096, 65536):
                    env = {"N": n, "d": dd, "M": m, "dv": dd}  # d_v = d here; tests/test_bound_falsification.py draws d_v
                    if not all(r.holds(env) for r in g.valid):
                        continue
                    io = evaluate(g.io, env)
                    for b in lbs:
                        if all(r.holds(env) for r in b.regime):
                            assert evaluate(b.expr, env) <= io, (b.id, name, env)


def test_cli_bounds_json_lists_the_catalog():
    out = subprocess.run([sys.executable, "-m", "attnio.cli", "bounds", "--json"], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    obj = json.loads(out.stdout)
    assert isinstance(obj, dict) and list(obj) == ["bounds"]  # one object, as README says of every --json
    rows = obj["bounds"]
    assert {r["id"] for r in rows} == set(BY_ID)
    assert all(isinstance(r["expr_json"], list) for r in rows)
    assert Fraction(next(r for r in rows if r["id"] == "sy.lemma3.4.explicit")["constant"]) == Fraction(1, 8)


def test_every_bound_names_its_model_as_data():
    """``cdag`` is one of the constants of bounds/types.py; every lower bound names one (not "n/a"), and the
    derived bounds name the part of the standard attention CDAG their proofs use (docs/model.md)."""
    from attnio.bounds.types import CDAG_MODELS, NOT_APPLICABLE

    for b in all_bounds():
        assert b.cdag in CDAG_MODELS, (b.id, b.cdag)
        assert b.kind != "lower" or b.cdag != NOT_APPLICABLE, b.id
        assert b.kind == "lower" or b.cdag == NOT_APPLICABLE, b.id
    assert [BY_ID[i].cdag for i in ("constants.b1", "constants.b2", "constants.b3", "constants.bs")] == [
        "standard-cdag:qk",
        "standard-cdag:qk+pv",
        "standard-cdag:qk+pv+acc",
        "standard-cdag:qk",
    ]
    assert BY_ID["sy.thm4.8.explicit"].cdag == "any-algorithm-finite-field"
