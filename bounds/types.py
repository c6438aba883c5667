"""The catalog's record type. A bound is data: an expression, the regime where it holds, and where it comes from.

Catalog modules (``bounds/catalog.py`` and the modules it gathers) build :class:`Bound` records; the solver
proves claims about them; reports print them. Nothing here imports ``algorithms`` or ``solver``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from attnio.bounds.expr import Expr, Rel

KINDS = ("lower", "upper", "exact")
COMPUTATIONS = ("forward", "backward")  # which pass of attention a bound speaks about
STATUSES = ("paper", "paper, constant derived here", "derived here", "derived here (refereed)", "under review")

# Which computation graph (CDAG) or class of algorithms a bound speaks about, as data (docs/model.md#what-the-lower-
# bounds-assume). The standard attention CDAG in three nested parts: each lower bound needs only its part.
CDAG_QK = "standard-cdag:qk"  # the N² QKᵀ sum trees (one vertex per product Q_iℓ·K_jℓ)
CDAG_QK_PV = "standard-cdag:qk+pv"  # also the pair vertices A_ij and one vertex per PV product A_ij·V_jℓ'
CDAG_QK_PV_ACC = "standard-cdag:qk+pv+acc"  # also one accumulation tree per output slot (i, ℓ')
CDAG_MATMUL = "standard-cdag:matmul"  # classical matrix multiplication C = A·B (not attention)
CDAG_BACKWARD = "standard-cdag:backward"  # the attention backward pass with standard matrix multiplication
ANY_FINITE_FIELD = "any-algorithm-finite-field"  # any algorithm over F_q, q > N (fast MM, rewrites allowed)
ANY_BINARY = "any-algorithm-binary"  # any algorithm, binary entries
ANY_ALGORITHM = "any-algorithm"  # any exact algorithm (the trivial bound, reductions)
APPROXIMATE = "approximate-algorithms"  # algorithms with error ε (docs/approx.md)
NOT_APPLICABLE = "n/a"  # upper bounds, exact costs of one algorithm, counts
CDAG_MODELS = (
    CDAG_QK,
    CDAG_QK_PV,
    CDAG_QK_PV_ACC,
    CDAG_MATMUL,
    CDAG_BACKWARD,
    ANY_FINITE_FIELD,
    ANY_BINARY,
    ANY_ALGORITHM,
    APPROXIMATE,
    NOT_APPLICABLE,
)


@dataclass(frozen=True)
class Bound:
    """One closed-form bound.

    - ``id``: stable identifier (``"sy.lemma3.4.explicit"``); the regression gate keys on it.
    - ``kind``: ``lower`` (every algorithm of ``model`` moves at least ``expr`` words), ``upper`` (some algorithm
      moves at most this), ``exact`` (the exact cost of one named algorithm).
    - ``model``: the class of algorithms it speaks about, in words, e.g. ``"standard matrix multiplication"``,
      ``"any algorithm over F_q, q > N"``, ``"binary entries"``, ``"algorithm flash2"``.
    - ``cdag``: the same as data, one of :data:`CDAG_MODELS` (which part of the standard attention CDAG a
      lower bound needs, or the wider class it covers; ``"n/a"`` for upper bounds and exact costs).
    - ``regime``: relations over N, d, M (and other symbols) under which it holds.
    - ``expr``: the bound itself. If ``explicit`` it is a true inequality with explicit constants and slack
      (usable as ``io >= expr``); otherwise only its asymptotic shape is known (Θ/Ω/O up to ``constant=None``).
    - ``constant``: the leading constant where a proof gives it, else ``None`` ("asymptotic only").
    - ``slack``: additive slack, where the proof gives it (e.g. ``−M``).
    - ``provenance``: paper and theorem number, or ``"derived here"``; ``doc``: the docs page of a derivation.
    - ``status``: one of :data:`STATUSES`.
    - ``computation``: ``"forward"`` (O from Q, K, V) or ``"backward"`` (dQ, dK, dV from Q, K, V, O, dO and the
      forward's statistics); a bound is compared only with algorithms of the same computation.
    - ``attained_by``: names of the registered algorithms that attain the bound: for an upper bound, the
      schedules that realise it; for a lower bound, the schedules whose exact cost meets it up to a constant
      factor on its regime (or on the part its ``notes`` name); for ``exact.<name>``, that algorithm. The claims
      about a bound name it in their ``about`` (solver side), so the links go both ways as data.
    - ``asymptotic_only``: for a bound no claim is about, the sentence saying why none can be stated (only its
      Θ/Ω/O shape is known, with nothing closed-form to check it against); empty for every other bound.
      tests/test_links.py checks that each bound has a claim about it or this note, never both.
    """

    id: str
    statement: str
    kind: str
    model: str
    regime: tuple[Rel, ...]
    expr: Expr
    explicit: bool
    constant: Fraction | None
    provenance: str
    status: str
    slack: Expr | None = None
    doc: str | None = None
    notes: str = ""
    symbols: tuple[str, ...] = field(default=("N", "d", "M"))
    attained_by: tuple[str, ...] = ()
    computation: str = "forward"
    cdag: str = NOT_APPLICABLE
    asymptotic_only: str = ""

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        assert self.computation in COMPUTATIONS, self.computation
        assert self.status in STATUSES, self.status
        assert self.cdag in CDAG_MODELS, (self.id, self.cdag)
        assert self.kind != "lower" or self.cdag != NOT_APPLICABLE, f"{self.id}: a lower bound must name its model"
        assert self.status == "paper" or self.doc, f"{self.id}: a derived bound must point to its derivation"
        assert not (self.asymptotic_only and self.explicit), f"{self.id}: an explicit bound is not asymptotic only"
