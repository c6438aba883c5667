"""Claim types and the CLAIMS aggregator.

A claim is plain data that :mod:`attnio.solver.verify` turns into solver obligations. Four shapes:

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

The types live in :mod:`attnio.solver.claims.types`, the shared constructors (the parameters' domain, a labelled
claim, the consistency-chain builder ``chain``) in :mod:`attnio.solver.claims.build`. Each topic module
``solver/claims/<topic>.py`` builds its claims, ids unique and prefixed by the topic of the bounds they are about:
``constants.*`` (constants.py and bspv.py: BSPV and BSPV-near are part of the constants topic, on one page with BS),
``backward.*``, ``workloads.*`` (workloads.py, and b3p.py and bwd_slots_p.py: the steps and consistency of the
pair-count bounds B3_P and BWD-slots_P, catalog ``workloads.*``), ``approx.*``, ``masks.*``, ``serving.*``,
``pebbling.*`` (small_forms.py: the small forms the pebbling section uses); seed.py keeps the first claims' ids
(``sy.*``, ``wd.*``, ``trivial.*``, ``consistency.*``, ``crossover.*``, …), and tight.py's specs become
``tight.*``/``tiles.*`` claims (seed) and ``backward.tight.*`` ones (backward). The proof steps' bounds come from
:mod:`attnio.bounds.proofs` (:func:`step_links`). :func:`all_claims` gathers them, imported statically, so a
deleted module is an import error, never a silently shorter list. ``CLAIMS`` (module attribute) is the same list,
built on first use.

>>> ids = [c.id for c in all_claims()]
>>> len(ids) == len(set(ids))
True
"""

from __future__ import annotations

from dataclasses import replace

from attnio.core.errors import InvalidParameter
from attnio.solver.claims.types import (  # noqa: F401  (re-exported: the claim types)
    IMPLICATION_KINDS,
    Claim,
    Coverage,
    Crossover,
    Implication,
    Tightest,
)

# the topic modules, after the types they import (a topic module imports ``attnio.solver.claims.types``)
from attnio.solver.claims import (  # noqa: E402  (isort: skip)
    approx,
    b3p,
    backward,
    bspv,
    bwd_slots_p,
    constants,
    distributed,
    dram,
    masks,
    seed,
    serving,
    small_forms,
    workloads,
)


def all_claims() -> list[Claim]:
    """Every claim: the seed theorems, the explicit constants, approximate attention, the backward pass, workloads.
    Ids are unique; each claim names the bounds it is about or is a meta-claim (says why in ``meta``). A proof
    step's ``about`` is read from the bounds' step tables (:func:`step_links`), the one place that says which
    bound a step proves."""
    out: list[Claim] = [*seed.claims(), *constants.CLAIMS, *bspv.CLAIMS, *approx.CLAIMS,
                        *backward.CLAIMS, *workloads.claims(), *b3p.CLAIMS, *bwd_slots_p.CLAIMS,
                        *small_forms.CLAIMS, *masks.CLAIMS, *serving.CLAIMS, *distributed.CLAIMS, *dram.CLAIMS]
    steps = step_links()
    seen: set[str] = set()
    for i, c in enumerate(out):
        assert c.id not in seen, f"duplicate claim id {c.id}"
        seen.add(c.id)
        if c.id in steps:
            out[i] = c = replace(c, about=steps[c.id] + tuple(b for b in c.about if b not in steps[c.id]), where=c.where)
        assert bool(c.about) != bool(c.meta), f"{c.id}: names no bound and is not tagged meta (or both)"
    return out


def step_links() -> dict[str, tuple[str, ...]]:
    """Proof-step claim id → the bounds whose step lists (:data:`attnio.bounds.proofs.PROOF_STEPS`) name it, in
    the tables' order.

    >>> step_links()["constants.b1.amgm"]
    ('constants.b1', 'backward.bwd-dp')
    """
    from attnio.bounds.proofs import PROOF_STEPS

    out: dict[str, tuple[str, ...]] = {}
    for bound_id, steps in PROOF_STEPS.items():
        for _, cid in steps:
            if cid != "prose" and bound_id not in out.get(cid, ()):
                out[cid] = out.get(cid, ()) + (bound_id,)
    return out


def index() -> dict[str, Claim]:
    """Every claim by id, in catalog order, built once per process (claims are immutable plain data; building
    them takes most of a second, which every worker of a parallel verify used to pay once per claim)."""
    global _INDEX
    if _INDEX is None:
        _INDEX = {c.id: c for c in all_claims()}
    return _INDEX


def by_id(claim_id: str) -> Claim:
    """The claim with this id (from :func:`index`)."""
    try:
        return index()[claim_id]
    except KeyError:
        raise InvalidParameter("claim", claim_id, "an id listed by `attnio verify --list`") from None


_INDEX: dict[str, Claim] | None = None


_CLAIMS: list[Claim] | None = None


def __getattr__(name: str) -> object:
    global _CLAIMS
    if name == "CLAIMS":
        if _CLAIMS is None:
            _CLAIMS = all_claims()
        return _CLAIMS
    raise AttributeError(name)
