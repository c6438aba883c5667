"""The catalog's record type. A bound is data: an expression, the regime where it holds, and where it comes from.

Catalog modules (``bounds/catalog.py`` and the modules it gathers) build :class:`Bound` records; the solver
proves claims about them; reports print them. Nothing here imports ``algorithms`` or ``solver``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from attnio.bounds.expr import Expr, Rel

KINDS = ("lower", "upper", "exact")
STATUSES = ("paper", "paper, constant derived here", "derived here", "under review")
COMPUTATIONS = ("forward", "backward")  # which pass of attention a bound speaks about


@dataclass(frozen=True)
class Bound:
    """One closed-form bound.

    - ``id``: stable identifier (``"sy.lemma3.4.explicit"``); the regression gate keys on it.
    - ``kind``: ``lower`` (every algorithm of ``model`` moves at least ``expr`` words), ``upper`` (some algorithm
      moves at most this), ``exact`` (the exact cost of one named algorithm).
    - ``model``: the class of algorithms it speaks about, e.g. ``"standard matrix multiplication"``,
      ``"any algorithm over F_q, q > N"``, ``"binary entries"``, ``"algorithm flash2"``.
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

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        assert self.computation in COMPUTATIONS, self.computation
        assert self.status in STATUSES, self.status
        assert self.status == "paper" or self.doc, f"{self.id}: a derived bound must point to its derivation"
