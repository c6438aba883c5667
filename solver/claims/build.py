"""The claim factory, shared by every topic module of :mod:`attnio.solver.claims`:

- the scaffolding: :data:`BASE` (d, N, M ≥ 1), :data:`PAIR_BASE` (d, M ≥ 1: the pair-count proofs, over symbols
  P, L of their own), :func:`sq`, and :func:`claim` / :func:`claims_for`, the one constructor of a labelled
  derivation claim (``[label] statement``, provenance the docs step);
- :func:`chain`, the consistency chains ``bound ≤ lead ≤ middle ≤ cost`` as data: per bound its first link
  (:func:`relax`: bound ≤ lead on the bound's regime), the middle links between leading forms (:class:`Link`),
  and per formula its last link(s) (:func:`to_cost`: a middle form ≤ the exact cost where the formula runs);
- one :class:`TightSpec` per tightest-constant claim, built by :func:`tight_claims` into the claim and the link
  claims that prove the integer tile facts its hypotheses restate; and :func:`links`, the claims of one chain of
  derivation steps (each link ``hyps ⇒ goal`` with the chain's bounds in its ``about``).

The specs themselves are data, in one tuple (:data:`attnio.solver.claims.tight.SPECS`); ids, texts and
hypotheses are spelled there, once, so that a claim id can be found by grep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from attnio.bounds.expr import Expr, Sym
from attnio.bounds.symbols import M, N, d, nonneg_real
from attnio.solver.claims.types import Claim, Crossover, Implication, Tightest, origin
from attnio.solver.logic import All, Formula

BASE: tuple[Formula, ...] = (d >= 1, N >= 1, M >= 1)  # the attention parameters' domain, first in every hypothesis list
PAIR_BASE: tuple[Formula, ...] = (d >= 1, M >= 1)  # the same for the pair-count proofs (no N: P, L are symbols)


def nonneg_reals(prefix: str, meanings: dict[str, str]) -> tuple[Sym, ...]:
    """The auxiliary symbols of one proof from a table {name: meaning}: a :func:`~attnio.bounds.symbols.nonneg_real`
    called ``<prefix>_<name>`` per entry, in the table's order (the prefix keeps them apart from every other proof's).

    >>> [s.name for s in nonneg_reals("doc", {"a": "a face", "b": "another"})]
    ['doc_a', 'doc_b']
    """
    return tuple(nonneg_real(f"{prefix}_{name}", meaning) for name, meaning in meanings.items())


def sq(e: Expr) -> Expr:
    """``e·e`` (a square z3 sees as a product)."""
    return e * e


def claim(id: str, statement: str, hyps: Iterable[Formula], goal: Formula, doc: str, *, label: str = "",
          kind: str = "derivation", about: tuple[str, ...] = (), meta: str = "") -> Implication:
    """The claim ``id``: ``hyps`` ⇒ ``goal``, described as ``[label] statement`` (``statement`` without a label),
    provenance ``doc`` (the docs page and step)."""
    return Implication(id, kind, f"[{label}] {statement}" if label else statement, tuple(hyps), goal,  # type: ignore[arg-type]
                       provenance=doc, about=about, meta=meta)


def claims_for(prefix: str, doc: str, *, label: str = "", about: tuple[str, ...] = (),
               kind: str = "derivation") -> Callable[..., Implication]:
    """A :func:`claim` constructor for one family of claims: ``make(suffix, statement, hyps, goal, doc=..., about=...)``
    is the claim ``<prefix>.<suffix>`` with the family's label, provenance, bounds and kind unless given."""

    def make(suffix: str, statement: str, hyps: Iterable[Formula], goal: Formula, *, doc: str = doc,
             about: tuple[str, ...] = about, kind: str = kind) -> Implication:
        return claim(f"{prefix}.{suffix}", statement, hyps, goal, doc, label=label, kind=kind, about=about)

    return make


# consistency chains --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """One claim of a chain: ``id``: ``hyps`` ⇒ ``goal``, about ``about``; ``kind`` and ``doc`` default to the
    chain's (:func:`chain`)."""

    id: str
    text: str
    hyps: tuple[Formula, ...]
    goal: Formula
    about: tuple[str, ...] = ()
    kind: str = ""
    doc: str = ""


def relax(id: str, bound, lead: Expr, text: str, *, base: tuple[Formula, ...] = BASE, extra: tuple[Formula, ...] = (),
          about: tuple[str, ...] | None = None, doc: str = "", kind: str = "") -> Link:
    """The first link of ``bound``'s chains: ``bound.expr ≤ lead`` on ``base``, the bound's regime and ``extra``
    (about the bound unless ``about`` is given; provenance ``doc`` and ``kind``: the chain's unless given)."""
    return Link(id, text, (*base, *bound.regime, *extra), bound.expr <= lead, (bound.id,) if about is None else about,
                kind=kind, doc=doc)


def to_cost(id: str, name: str, f, lower: Expr, text: str, *, base: tuple[Formula, ...] = BASE,
            extra: tuple[Formula, ...] = (), covers: tuple[str, ...] = (), goal: Formula | None = None,
            doc: str = "") -> Link:
    """A last link: ``lower ≤ cost(name)`` (or ``goal``, a fact of its blocks) on ``base``, the formula's valid
    region and ``extra``; about the bounds it ``covers`` and ``exact.<name>`` (only the bounds where ``name`` is
    empty: a workload formula has no ``exact.`` entry); provenance ``doc``: the chain's unless given."""
    return Link(id, text, (*base, *f.valid, *extra), lower <= f.io if goal is None else goal,
                (*covers, f"exact.{name}") if name else covers, doc=doc)


def chain(links: Iterable[Link | Claim], doc: str, *, kind: str = "consistency", label: str = "") -> list[Claim]:
    """The claims of the links of one or more chains ``bound ≤ lead ≤ middle ≤ cost`` (:func:`relax`, :class:`Link`,
    :func:`to_cost`), in order: each of ``kind`` and provenance ``doc`` unless the link says otherwise, its text
    prefixed ``[label]`` when given. A claim already built (from :func:`links`, say) is kept as it is."""
    return [claim(k.id, k.text, k.hyps, k.goal, k.doc or doc, label=label, kind=k.kind or kind, about=k.about)
            if isinstance(k, Link) else k for k in links]


@dataclass(frozen=True)
class TileFacts:
    """A link claim ``id``: on the tightest claim's regime (plus ``hyps``), the integer ``facts`` of a schedule's
    tiles, which the real relaxation of its floors and ceilings does not see."""

    id: str
    text: str  # follows "<name> with <where>: "
    hyps: tuple[Formula, ...]
    facts: tuple[Formula, ...]


@dataclass(frozen=True)
class TightSpec:
    """``id``: the least c (a multiple of ``precision`` in [lo, hi]) with cost(``name``) ≤ c·``shape`` +
    ``extra`` on ``regime`` and the formula's valid region (``backward``: a backward formula; d_v = d).

    ``text`` is the description, a template over ``{name}``, ``{shape}``, ``{extra}``, ``{where}`` (how the
    regime reads), ``{precision}``, ``{id}`` and ``{tightens}`` (the first of ``about``); ``tiles`` gives the :class:`TileFacts` of the formula (their
    facts are added to the hypotheses, each set proved by its own link claim, so the meaning is unchanged), and
    ``tiles_text`` is then appended. ``about``: the paper bounds the claim tightens (``exact.<name>`` follows);
    ``cites``/``cites_after``: provenance before/after the formula's derivation."""

    id: str
    name: str
    backward: bool
    shape: Expr
    extra: Expr
    regime: tuple[Formula, ...]
    where: str
    text: str
    precision: Fraction
    hi: Fraction
    lo: Fraction = Fraction(0)
    cleared: bool = False
    about: tuple[str, ...] = ()
    cites: str = ""
    cites_after: str = ""
    tiles: Callable[[object], tuple[TileFacts, ...]] | None = None
    tiles_text: str = ""
    origin: str = field(default="", compare=False, repr=False)  # module:function that wrote the spec

    def __post_init__(self) -> None:
        if not self.origin:
            object.__setattr__(self, "origin", origin())


def formula(spec: TightSpec):
    """The spec's cost formula with d_v = d, or None where this build has none."""
    from attnio.bounds.costs import BACKWARD_FORMULAS, FORMULAS

    f = (BACKWARD_FORMULAS if spec.backward else FORMULAS).get(spec.name)
    return None if f is None else f.with_dv_equal_d()


def tight_claims(spec: TightSpec) -> list[Claim]:
    """The :class:`Tightest` claim of ``spec``, then one ``branch`` claim per :class:`TileFacts` (none where the
    formula is not in this build)."""
    f = formula(spec)
    if f is None:
        return []
    tiles = spec.tiles(f) if spec.tiles is not None else ()
    facts = tuple(x for t in tiles for x in t.facts)
    fields = {"name": spec.name, "shape": spec.shape, "extra": spec.extra, "where": spec.where,
              "precision": spec.precision, "id": spec.id, "tightens": spec.about[0] if spec.about else ""}
    exact = (f"exact.{spec.name}",)
    return [
        Tightest(
            spec.id,
            spec.text.format(**fields) + (spec.tiles_text.format(**fields) if tiles else ""),
            spec.regime + f.valid + facts,
            f=f.io, g=spec.shape, extra=spec.extra, precision=spec.precision, lo=spec.lo, hi=spec.hi,
            provenance="; ".join(p for p in (spec.cites, f.derivation, spec.cites_after) if p),
            about=spec.about + exact,
            cleared=spec.cleared,
            where=spec.origin,
        ),
        *(
            Implication(t.id, "branch", f"{spec.name} with {spec.where}: {t.text}", spec.regime + f.valid + t.hyps,
                        All(t.facts), provenance=f.derivation, about=exact, where=spec.origin)
            for t in tiles
        ),
    ]


def links(cid: str, hyps: tuple[Formula, ...], steps: Iterable[tuple[str, str, tuple, Formula]],
          about: tuple[str, ...], *, kind: str = "derivation", provenance: str = "", meta: str = "") -> list[Implication]:
    """The links of one chain: for each step ``(suffix, text, more_hyps, goal)`` the claim ``<cid>.<suffix>``:
    ``hyps`` and ``more_hyps`` ⇒ ``goal``, of ``kind``, about the chain's bounds ``about`` (or ``meta``)."""
    return [Implication(f"{cid}.{suffix}", kind, text, hyps + more, goal, provenance=provenance, about=about, meta=meta)
            for suffix, text, more, goal in steps]


def leading_crossover(cid: str, text: str, a: Expr, b: Expr, a_name: str, b_name: str, *, hi: Fraction,
                      provenance: str, about: tuple[str, ...], axis: Expr | None = None, axis_name: str = "M/d²") -> Crossover:
    """``cid``: where the leading term ``a`` is below ``b``, derived along ``axis`` (default M/d²) between 1/64 and
    ``hi`` to 1/256 (no hypotheses: leading terms are defined everywhere)."""
    from attnio.bounds.symbols import M, d

    return Crossover(cid, text, (), a=a, b=b, axis=M / d**2 if axis is None else axis, lo=Fraction(1, 64), hi=hi,
                     precision=Fraction(1, 256), a_name=a_name, b_name=b_name, axis_name=axis_name,
                     provenance=provenance, about=about)
