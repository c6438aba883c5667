"""The claim types: plain data that :mod:`attnio.solver.verify` turns into solver obligations.

Kept apart from the aggregator (:mod:`attnio.solver.claims`) so that the claim modules import their types
from here and the aggregator imports the claim modules, with no cycle. See :mod:`attnio.solver.claims` for
what each shape means.
"""

from __future__ import annotations

import sys
from dataclasses import KW_ONLY, dataclass, field
from fractions import Fraction

from attnio.bounds.expr import Div, Expr, Rel
from attnio.solver.logic import Formula

IMPLICATION_KINDS = ("inequality", "consistency", "identity", "branch", "iff", "derivation", "well-defined")

# The fields that link a claim to the catalog and to its source, not part of what it states: the fingerprint
# (:func:`attnio.solver.verify.fingerprint`) leaves them out, so a new link never makes the cvc5 record stale.
# ``about``: the ids of the catalog bounds the claim is about (reports link verdicts by these; the proof-step
# claims get theirs from the bounds' PROOF_STEPS tables, see :func:`attnio.solver.claims.all_claims`).
# ``meta``: for a claim about no one bound (a lemma of arithmetic, a fact of the model), a sentence saying so;
# a claim has ``about`` or ``meta``, never neither (tests/test_links.py). ``where``: the module and function
# that built it (``module:function``), recorded when it is built.
LINK_FIELDS = ("about", "meta", "where")

# Thin constructor helpers: ``where`` names their caller, the function that chose the claim's id.
THIN_HELPERS = frozenset({"_claim", "link", "links", "_forward", "_leading"})


# the claims package's own plumbing: a claim built through these is attributed to the topic module that called them
_NOT_TOPICS = ("attnio.solver.claims.types", "attnio.solver.claims.build")


def origin() -> str:
    """``module:function`` of the innermost claims module (``attnio.solver.claims.<topic>``) function on the call
    stack that is not a :data:`THIN_HELPERS` wrapper: where the claim being built was written."""
    f = sys._getframe(1)
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        name = f.f_code.co_name
        if mod.startswith("attnio.solver.claims.") and mod not in _NOT_TOPICS and (name == "<module>" or name not in THIN_HELPERS and name[0] != "<"):
            return f"{mod}:{f.f_code.co_qualname.replace('<locals>.', '')}"
        f = f.f_back
    return ""


@dataclass(frozen=True)
class Linked:
    """The link fields every claim type has (:data:`LINK_FIELDS`), keyword-only; ``where`` is recorded when the
    claim is built."""

    _: KW_ONLY
    about: tuple[str, ...] = ()
    meta: str = ""
    where: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.where:
            object.__setattr__(self, "where", origin())


@dataclass(frozen=True)
class Implication(Linked):
    id: str
    kind: str
    description: str
    hyps: tuple[Formula, ...]
    goal: Formula
    provenance: str = ""

    def __post_init__(self) -> None:
        assert self.kind in IMPLICATION_KINDS, self.kind
        super().__post_init__()


@dataclass(frozen=True)
class Coverage(Linked):
    id: str
    description: str
    domain: tuple[Formula, ...]
    regimes: tuple[tuple[str, tuple[Formula, ...]], ...]
    provenance: str = ""
    kind: str = "coverage"


@dataclass(frozen=True)
class Searched(Linked):
    """The fields that open a claim whose verdict is a number found by bisection on ``hyps`` (:class:`Tightest`,
    :class:`Crossover`); each adds what it bisects and the search's bounds."""

    id: str
    description: str
    hyps: tuple[Formula, ...]


@dataclass(frozen=True)
class Tightest(Searched):
    """Least c (a multiple of ``precision`` in [lo, hi]) with ``f ≤ c·g + extra`` on ``hyps``."""

    f: Expr
    g: Expr
    extra: Expr
    precision: Fraction
    lo: Fraction = Fraction(0)
    hi: Fraction = Fraction(64)
    provenance: str = ""
    rlimit: int | None = None  # per-obligation solver resource limit (None: solver.engine's portfolio budgets)
    kind: str = "tightest"
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
class Crossover(Searched):
    """Where ``a < b`` (a strictly cheaper), located along ``axis`` between ``lo`` and ``hi``."""

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
    rlimit: int | None = None  # per-obligation solver resource limit (None: solver.engine's portfolio budgets)
    kind: str = "crossover"
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

