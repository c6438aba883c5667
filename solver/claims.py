"""Claim types and the CLAIMS aggregator.

A claim is plain data that :mod:`solver.verify` turns into solver obligations. Four shapes:

- :class:`Implication` ``hyps ⇒ goal`` for every parameter value. Its ``kind`` says what it is for:
  ``inequality`` (f ≤ c·g + a over a regime), ``consistency`` (an explicit lower bound ≤ an exact cost or an
  explicit upper bound over the intersection of their regimes), ``identity``, ``branch`` (which side of a
  min/max is taken), ``iff`` (a region described exactly), ``derivation`` (one arithmetic step of a derived
  constant, see docs/bounds/), ``well-defined`` (denominators > 0 and square-root arguments ≥ 0 over a
  formula's valid region);
- :class:`Coverage`: a family of regimes covers ``domain`` with no gap and no overlap;
- :class:`Tightest`: the least ``c`` on the grid ``precision·ℤ`` with ``f ≤ c·g + extra`` over the regime; the
  verdict is *proved* when c is proved **and** c − precision is refuted with a valid integer counterexample
  (the expected refutation is part of the claim, so it never counts as a failure by itself);
- :class:`Crossover`: where ``a < b``, derived by the solver along an ``axis`` expression (e.g. M/d²):
  the largest grid value ρ_lo with ``axis ≤ ρ_lo ⇒ a < b`` *proved* and the smallest ρ_hi with
  ``axis ≥ ρ_hi ⇒ a ≥ b`` *proved* are found by bisection (a step that is not proved counts as false, so both
  are conservative); one step beyond each, a valid integer counterexample is looked for (solver model, else an
  exact search over small integer points) and reported. Nothing about the boundary is typed in; the verdict
  says whether each side is sharp to the precision and how wide the band ``(ρ_lo, ρ_hi)`` is, inside which
  either algorithm can win (ceilings and lower-order terms decide).

Interface for other modules: a module ``solver/claims_<topic>.py`` exposes ``CLAIMS: list[Claim]`` (ids unique,
prefixed by the topic). :func:`all_claims` gathers ``solver.claims_core`` (the seed theorems), then
``solver.claims_constants`` and ``solver.claims_approx`` when they exist. ``CLAIMS`` (module attribute) is the
same list, built on first use.

>>> ids = [c.id for c in all_claims()]
>>> len(ids) == len(set(ids))
True
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from fractions import Fraction

from bounds.expr import Expr, Rel
from solver.logic import Formula

IMPLICATION_KINDS = ("inequality", "consistency", "identity", "branch", "iff", "derivation", "well-defined")
OPTIONAL_MODULES = ("solver.claims_constants", "solver.claims_approx")


@dataclass(frozen=True)
class Implication:
    id: str
    kind: str
    description: str
    hyps: tuple[Formula, ...]
    goal: Formula
    provenance: str = ""
    assume_defined: bool = False  # True: denominators > 0 assumed (proved by the formula's wd.* claim)
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
    assume_defined: bool = False
    wall_ms: int | None = None  # per-obligation wall-clock cap (None: solver.engine.WALL_MS)
    kind: str = "tightest"
    about: tuple[str, ...] = ()

    def claim_at(self, c: Fraction) -> Rel:
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
    assume_defined: bool = False
    wall_ms: int | None = None  # per-obligation wall-clock cap (None: solver.engine.WALL_MS)
    kind: str = "crossover"
    about: tuple[str, ...] = ()


@dataclass(frozen=True)
class Broken:
    """Stands for an optional claims module that failed to import: its verdict is an error, never a pass."""

    id: str
    description: str
    error: str
    kind: str = "import"
    about: tuple[str, ...] = ()


Claim = Implication | Coverage | Tightest | Crossover | Broken


def all_claims() -> list[Claim]:
    """Every claim: the seed theorems, then the optional modules' ``CLAIMS``. Ids are unique."""
    from solver import claims_core

    out: list[Claim] = list(claims_core.claims())
    for name in OPTIONAL_MODULES:
        try:
            mod = importlib.import_module(name)
            out.extend(mod.CLAIMS)
        except ModuleNotFoundError as e:
            if e.name == name:
                continue  # the module is optional and absent
            out.append(Broken(f"import.{name}", f"optional claims module {name} failed to load", repr(e)))
        except Exception as e:  # a broken module must show up as a failing verdict, not hide the others
            out.append(Broken(f"import.{name}", f"optional claims module {name} failed to load", repr(e)))
    seen: set[str] = set()
    for c in out:
        assert c.id not in seen, f"duplicate claim id {c.id}"
        seen.add(c.id)
    return out


def by_id(claim_id: str) -> Claim:
    for c in all_claims():
        if c.id == claim_id:
            return c
    from attnio.errors import InvalidParameter

    raise InvalidParameter("claim", claim_id, "an id listed by `attnio verify --list`")


_CLAIMS: list[Claim] | None = None


def __getattr__(name: str) -> object:
    global _CLAIMS
    if name == "CLAIMS":
        if _CLAIMS is None:
            _CLAIMS = all_claims()
        return _CLAIMS
    raise AttributeError(name)
