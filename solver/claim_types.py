"""The claim types: plain data that :mod:`attnio.solver.verify` turns into solver obligations.

Kept apart from the aggregator (:mod:`attnio.solver.claims`) so that the claim modules import their types
from here and the aggregator imports the claim modules, with no cycle. See :mod:`attnio.solver.claims` for
what each shape means.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from attnio.bounds.expr import Div, Expr, Rel
from attnio.solver.logic import Formula

IMPLICATION_KINDS = ("inequality", "consistency", "identity", "branch", "iff", "derivation", "well-defined")


@dataclass(frozen=True)
class Implication:
    id: str
    kind: str
    description: str
    hyps: tuple[Formula, ...]
    goal: Formula
    provenance: str = ""
    # Kept for compatibility, no longer changes anything: definedness (denominators > 0, square-root arguments
    # ≥ 0, logarithm arguments > 0) is always proved from ``hyps`` (solver/engine.py), never assumed.
    assume_defined: bool = False
    about: tuple[str, ...] = ()  # ids of the catalog bounds this claim is about (reports link verdicts by these)

    def __post_init__(self) -> None:
        assert self.kind in IMPLICATION_KINDS, self.kind


@dataclass(frozen=True)
class Coverage:
    id: str
    description: str
    domain: tuple[Formula, ...]
    regimes: tuple[tuple[str, tuple[Formula, ...]], ...]
    provenance: str = ""
    kind: str = "coverage"
    about: tuple[str, ...] = ()


@dataclass(frozen=True)
class Tightest:
    """Least c (a multiple of ``precision`` in [lo, hi]) with ``f ≤ c·g + extra`` on ``hyps``."""

    id: str
    description: str
    hyps: tuple[Formula, ...]
    f: Expr
    g: Expr
    extra: Expr
    precision: Fraction
    lo: Fraction = Fraction(0)
    hi: Fraction = Fraction(64)
    provenance: str = ""
    assume_defined: bool = False  # no effect: definedness is always proved (see Implication)
    rlimit: int | None = None  # per-obligation solver resource limit (None: solver.engine's portfolio budgets)
    wall_ms: int | None = None  # no effect (verdicts depend on resource limits only); kept for compatibility
    kind: str = "tightest"
    about: tuple[str, ...] = ()
    # With ``cleared``, a shape p/q (a quotient whose denominator the claim-level definedness check proves > 0) is
    # multiplied out: each step proves f·q ≤ c·p + extra·q, the same relation without the division, which z3's
    # nonlinear procedure decides far faster on the backward's exact costs (see Crossover.cleared).
    cleared: bool = False

    def claim_at(self, c: Fraction) -> Rel:
        if self.cleared and isinstance(self.g, Div):
            q = self.g.den
            return self.f * q <= c * self.g.num + self.extra * q
        return self.f <= c * self.g + self.extra


@dataclass(frozen=True)
class Crossover:
    """Where ``a < b`` (a strictly cheaper), located along ``axis`` between ``lo`` and ``hi``."""

    id: str
    description: str
    hyps: tuple[Formula, ...]
    a: Expr
    b: Expr
    axis: Expr
    lo: Fraction
    hi: Fraction
    precision: Fraction
    a_name: str = "A"
    b_name: str = "B"
    axis_name: str = ""
    provenance: str = ""
    assume_defined: bool = False  # no effect: definedness is always proved (see Implication)
    rlimit: int | None = None  # per-obligation solver resource limit (None: solver.engine's portfolio budgets)
    wall_ms: int | None = None  # no effect (verdicts depend on resource limits only); kept for compatibility
    kind: str = "crossover"
    about: tuple[str, ...] = ()
    # With ``cleared``, each bisection bound on an axis p/q (a quotient whose denominator the claim-level
    # definedness check proves > 0) is stated without the division, as p ≤ v·q and v·q ≤ p: the same relation,
    # which z3's nonlinear procedure decides far faster on the backward's exact costs (docs/solver.md).
    cleared: bool = False
    # ids of Implication claims of the catalog (lemmas) that the cvc5 re-check adds, each as the formula
    # ``hyps ⇒ goal``, to the hypotheses of this claim's two proved sides: sound, since a proved claim holds at
    # every point of its symbols' domains, and counted only when cvc5 re-proves every lemma too. For claims whose
    # sides cvc5 cannot decide whole but can from floor-free envelopes proved one by one (docs/solver.md,
    # "Lemmas"). z3's verdict never uses them.
    lemmas: tuple[str, ...] = ()

    def axis_at_most(self, v: Fraction) -> Rel:
        if self.cleared and isinstance(self.axis, Div):
            return self.axis.num <= v * self.axis.den
        return self.axis <= v

    def axis_at_least(self, v: Fraction) -> Rel:
        if self.cleared and isinstance(self.axis, Div):
            return v * self.axis.den <= self.axis.num
        return v <= self.axis


Claim = Implication | Coverage | Tightest | Crossover

