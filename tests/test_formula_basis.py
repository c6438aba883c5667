"""attnio.triton.formula_basis and the exact solve of attnio.triton.formula, without Triton: each feature's three
forms agree (Python, sympy, the solver's closed form at N_q = N_kv), the factorial design identifies the basis,
and the solve recovers a known quasi-polynomial exactly and cannot hide a term outside the basis."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from attnio.bounds.expr import evaluate
from attnio.bounds.symbols import N
from attnio.triton import formula_basis as fb
from attnio.triton.formula import KernelFormula, design, held_out_shapes, solve_counts


def _ctx(Nq, Nkv, B_r, B_c, d=3, dv=5):
    return fb.context({"Z": 2, "H": 4, "H_kv": 2, "N_q": Nq, "N_kv": Nkv, "d": d, "d_v": dv}, (B_r, B_c))


def _brute(name, c):
    """The causal visit sums by direct enumeration of blocks and rows (independent of the features' text)."""
    Nq, Nkv, Br, Bc = c["N_q"], c["N_kv"], c["B_r"], c["B_c"]
    delta = Nkv - Nq
    qb = [(s, min(Nq, s + Br)) for s in range(0, Nq, Br)]
    kb = range(0, Nkv, Bc)
    E = [e + delta for _, e in qb]
    rows = [e - s for s, e in qb]
    vis = [Nq - max(0, j - delta) for j in kb]
    return {"SE": sum(E), "ST": sum(-(-x // Bc) for x in E), "SrT": sum(r * -(-x // Bc) for r, x in zip(rows, E, strict=True)),
            "SrE": sum(r * x for r, x in zip(rows, E, strict=True)), "SR": sum(vis), "SQ": sum(-(-x // Br) for x in vis)}[name]


@pytest.mark.parametrize("name", ["SE", "ST", "SrT", "SrE", "SR", "SQ"])
def test_visit_sums_equal_enumeration_and_sympy(name):
    import sympy as sp

    rng = random.Random(name)
    s = fb.sympy_symbols()
    defn = fb.sympy_definitions()[s[name]]
    for _ in range(12):
        Br, Bc = rng.choice([(2, 2), (4, 2), (2, 4), (3, 5), (8, 4)])
        Nq = rng.randint(1, 30)
        Nkv = Nq + rng.randint(0, 12)
        c = _ctx(Nq, Nkv, Br, Bc)
        got = fb.value(fb.LENGTH[name], c)
        assert got == _brute(name, c)
        if _ > 1:  # sympy's Sum is slow: two points of each
            continue
        sym = defn.subs({s["N_q"]: Nq, s["N_kv"]: Nkv, s["B_r"]: Br, s["B_c"]: Bc}).doit()
        assert int(sp.Integer(sym)) == got


@pytest.mark.parametrize("name", [n for n in fb.LENGTH if "NE" not in n])
@pytest.mark.parametrize("block", [(4, 2), (2, 4), (4, 4), (3, 5)])
def test_square_form_equals_the_feature_at_equal_lengths(name, block):
    B_r, B_c = block
    e = fb.square_form("length", name, {"B_r": B_r, "B_c": B_c}, N)
    if e is None:  # no closed form: only the tile sums whose blocks do not divide
        assert name in ("ST", "SrT", "SQ") and (B_r % B_c if name != "SQ" else B_c % B_r)
        return
    for n in list(range(1, 40)) + [97, 128, 129]:
        assert evaluate(e, {"N": n}) == fb.value(fb.LENGTH[name], _ctx(n, n, B_r, B_c)), n


def _splits_brute(N_kv, B_c, S):
    """Non-empty splits by direct enumeration: split s holds key tiles [s·c, (s+1)·c) ∩ [0, T_c), c = ⌈T_c/S⌉."""
    tiles = list(range(-(-N_kv // B_c)))
    c = -(-len(tiles) // S)
    return sum(1 for s in range(S) if [t for t in tiles if s * c <= t < (s + 1) * c])


@pytest.mark.parametrize("S", [1, 2, 3, 4, 7])
def test_nonempty_splits_equal_enumeration_sympy_and_their_square_form(S):

    sym = fb.sympy_symbols()
    defn = fb.sympy_definitions()[sym["NE"]]
    B_c = 4
    for n in range(1, 160):
        c = fb.context({"Z": 1, "H": 1, "H_kv": 1, "N_q": 3, "N_kv": n, "d": 2, "d_v": 2}, (2, B_c), S)
        ne = fb.value(fb.LENGTH["NE"], c)
        assert ne == _splits_brute(n, B_c, S), n
        assert fb.value(fb.LENGTH["N_q*NE"], c) == 3 * ne
        if n % 37 == 1:
            assert int(defn.subs({sym["N_kv"]: n, sym["B_c"]: B_c, sym["S"]: S})) == ne
    lo = S * (S - 1) * B_c  # NE = S from N_kv > S(S − 1)·B_c on; below, no closed form is claimed
    assert fb.square_form("length", "NE", {"B_r": 2, "B_c": B_c, "S": S, "N_lo": lo}, N) is None
    for N_q in (None, 1):
        consts = {"B_r": 2, "B_c": B_c, "S": S, "N_lo": lo + 1}
        e, eq = (fb.square_form("length", x, consts, N, N_q) for x in ("NE", "N_q*NE"))
        for n in range(lo + 1, lo + 200):
            c = fb.context({"Z": 1, "H": 1, "H_kv": 1, "N_q": N_q or n, "N_kv": n, "d": 2, "d_v": 2}, (2, B_c), S)
            assert evaluate(e, {"N": n}) == fb.value(fb.LENGTH["NE"], c) == S, n
            assert evaluate(eq, {"N": n}) == fb.value(fb.LENGTH["N_q*NE"], c), n


@pytest.mark.parametrize("causal", [False, True])
def test_design_identifies_the_basis_and_holds_out_other_shapes(causal):
    lengths = fb.LENGTHS_CAUSAL if causal else fb.LENGTHS_PLAIN
    shapes = design((4, 2), causal, fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, lengths)
    assert len(shapes) == len(fb.UNITS_DEFAULT) * len(fb.WIDTHS_DEFAULT) * len(lengths)
    assert all(s["N_q"] <= s["N_kv"] for s in shapes) or not causal
    held = held_out_shapes((4, 2), causal)
    assert not any(h in shapes for h in held)
    assert any(h["N_q"] % 4 for h in held) and any(h["N_kv"] % 2 for h in held)  # partial last blocks


def _truth(s, block, causal):
    """A known count: the FA-2 forward's grouped K reads (fa2_fwd's docstring) plus a per-K-block scalar."""
    c = fb.context(s, block)
    kv = fb.value(fb.LENGTH["SE" if causal else "T_r*N_kv"], c)
    return s["Z"] * s["H_kv"] * (s["d"] * kv + 3 * c["T_c"]) + 2 * s["Z"] * s["H"] * s["N_q"]


@pytest.mark.parametrize("causal", [False, True])
def test_solve_recovers_a_known_count_exactly(causal):
    block = (4, 2)
    lengths = fb.LENGTHS_CAUSAL if causal else fb.LENGTHS_PLAIN
    shapes = design(block, causal, fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, lengths)
    counts = [{("k", "reads_words"): _truth(s, block, causal)} for s in shapes]
    co = solve_counts(shapes, counts, block, fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, lengths, identified=True)
    kv = "SE" if causal else "T_r*N_kv"
    assert co[("k", "reads_words")] == {("Z*H", "1", "N_q"): 2, ("Z*H_kv", "d", kv): 1, ("Z*H_kv", "1", "T_c"): 3}
    f = KernelFormula("toy", causal, "fp32", block, fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, lengths, co, shapes, 0.0, {}, {})
    for h in held_out_shapes(block, causal):
        assert f.evaluate(**h)["k"]["reads_words"] == _truth(h, block, causal)


def test_a_term_outside_the_basis_fails_on_held_out_shapes():
    """N_q² is not in the unmasked basis: the square design fits it at its own points (any values fit a square
    system), and the held-out shapes expose it."""
    block = (4, 2)
    shapes = design(block, False, fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, fb.LENGTHS_PLAIN)
    counts = [{("x", "reads_words"): s["Z"] * s["H"] * s["N_q"] ** 2} for s in shapes]
    co = solve_counts(shapes, counts, block, fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, fb.LENGTHS_PLAIN, identified=True)
    f = KernelFormula("toy", False, "fp32", block, fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, fb.LENGTHS_PLAIN, co, shapes,
                      0.0, {}, {})
    bad = [h for h in held_out_shapes(block, False)
           if Fraction(f._value(("x", "reads_words"), fb.context(h, block))) != h["Z"] * h["H"] * h["N_q"] ** 2]
    assert bad


def test_overdetermined_fit_refuses_an_inexact_field():
    from attnio.triton.formula import FitError

    block, lengths = (4, 2), ("1", "N_q", "T_r")  # a small basis: the exact fallback solve stays quick
    shapes = design(block, False, ("Z*H",), ("d",), lengths) + held_out_shapes(block, False)
    counts = [{("x", "reads_words"): s["Z"] * s["H"] * s["d"] * s["N_q"] ** 2,
               ("y", "reads_words"): s["Z"] * s["H"] * s["d"] * (s["N_q"] + 7 * -(-s["N_q"] // 4))} for s in shapes]
    with pytest.raises(FitError, match="x.reads_words has no exact fit"):
        solve_counts(shapes, counts, block, ("Z*H",), ("d",), lengths)
    co = solve_counts(shapes, [{k: v for k, v in c.items() if k[0] == "y"} for c in counts], block, ("Z*H",), ("d",),
                      lengths)
    assert co[("y", "reads_words")] == {("Z*H", "d", "N_q"): 1, ("Z*H", "d", "T_r"): 7}


def _toy(launches=None):
    co = {("q", "reads_bytes"): {("Z*H", "d", "N_q"): Fraction(4)},
          ("k", "reads_bytes"): {("Z*H_kv", "d", "SE"): Fraction(4)},
          ("k", "reads_words"): {("Z*H_kv", "d", "SE"): Fraction(1)},
          ("o", "writes_bytes"): {("Z*H", "d_v", "N_q"): Fraction(4)},
          ("launch:_toy", "bytes"): {("Z*H", "d", "N_q"): Fraction(4), ("Z*H_kv", "d", "SE"): Fraction(4),
                                     ("Z*H", "d_v", "N_q"): Fraction(4)}}
    return KernelFormula("toy", True, "fp32", (4, 2), fb.UNITS_DEFAULT, fb.WIDTHS_DEFAULT, fb.LENGTHS_CAUSAL, co, [],
                         0.0, launches or {"_toy": 1}, {"_toy": {"q": "Q", "k": "K", "v": "V"}})


class _T:
    def __init__(self, *shape):
        self.shape = shape


def test_generated_bytes_estimate_and_launch_metadata_equal_the_formula():
    f = _toy()
    est = f.bytes_estimate()
    hook = f.launch_metadata()
    for s in ({"Z": 2, "H": 4, "H_kv": 2, "N_q": 7, "N_kv": 9, "d": 3, "d_v": 5},
              {"Z": 1, "H": 1, "H_kv": 1, "N_q": 1, "N_kv": 1, "d": 1, "d_v": 1}):
        want = f.total_bytes(**s)
        assert want > 0 and est(**s) == want
        args = {"Q": _T(s["Z"], s["H"], s["N_q"], s["d"]), "K": _T(s["Z"], s["H_kv"], s["N_kv"], s["d"]),
                "V": _T(s["Z"], s["H_kv"], s["N_kv"], s["d_v"]), "B_R": 4}
        meta = hook((1, 1, 1), None, args)
        assert meta["bytes"] == want and meta["name"].startswith("_toy")
    assert "def launch_metadata(grid, kernel, args):" in f.launch_metadata_source()


def test_launch_metadata_is_refused_for_a_kernel_launched_twice_or_unknown():
    from attnio.core.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="launched 2 times"):
        _toy({"_toy": 2}).launch_metadata_source()
    with pytest.raises(InvalidParameter, match="one of _toy"):
        _toy().launch_metadata_source("other")


def test_evaluate_validates_the_shape():
    from attnio.core.errors import InvalidParameter

    f = _toy()
    assert f.evaluate(N=5, d=2)["k"]["reads_words"] == 2 * fb.value(fb.LENGTH["SE"], _ctx(5, 5, 4, 2, d=2))  # Z·H_kv·d·SE, d = 2
    with pytest.raises(InvalidParameter, match="N_q"):
        f.evaluate(N_q=9, N_kv=5, d=2)  # causal needs N_q ≤ N_kv
    with pytest.raises(InvalidParameter, match="H_kv"):
        f.evaluate(N=5, d=2, H=3, H_kv=2)


def test_sympy_expansion_evaluates_to_the_formula():
    import sympy as sp

    f = _toy()
    s = fb.sympy_symbols()
    shape = {"Z": 2, "H": 4, "H_kv": 2, "N_q": 7, "N_kv": 9, "d": 3, "d_v": 5}
    e = f.sympy("k", "reads_words", expand=True).subs({s[k]: v for k, v in shape.items()}).doit()
    assert int(sp.Integer(e)) == f.evaluate(**shape)["k"]["reads_words"] > 0
    assert str(f.sympy("k", "reads_words")) == "H_kv*SE*Z*d"
