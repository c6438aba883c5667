"""attnio's solver layer: claims about the bounds catalog, proved by z3 for every parameter of a regime,
re-checked by cvc5.

Python API (plain data in, plain data out)::

    from attnio.solver.verify import verify_all, verify_claim, Verdict
    verdicts = verify_all(claim_ids=None, solver="z3", jobs=None)   # "z3" | "cvc5" | "both"; worker processes
    for v in verdicts:
        v.id, v.kind, v.status, v.seconds       # status: proved | refuted | vacuous | unknown | error
        v.constant                              # tightest c / derived crossover boundaries, as text
        v.counterexample                        # {"N": "12", ...} (integers as strings), or None
        v.witness                               # non-vacuity: an integer point of the hypotheses, or None
        v.defined                               # definedness conditions proved from the hypotheses
        v.solvers                               # {"z3": "proved", "cvc5": "proved"} (cvc5 with solver="both")
        v.spurious, v.reason, v.description, v.crosscheck, v.assumed, v.details
        v.ok, v.to_json()                       # ok: status == "proved" (docs/solver.md: what proved means)

    from attnio.bounds.catalog import all_bounds        # -> list[bounds.types.Bound]
    from attnio.solver.claims import all_claims, by_id  # -> list[Claim]

Modules: :mod:`attnio.solver.translator` (bounds.expr → z3/cvc5 terms: √ by an auxiliary s ≥ 0 with s² = x,
floors/ceilings by sound brackets, min/max by If, log₂ by sound brackets, denominators > 0 as side
conditions), :mod:`attnio.solver.engine` (one obligation: proved / refuted with an integer counterexample re-evaluated
exactly / unknown; spurious real counterexamples re-checked over the integers), :mod:`attnio.solver.relax`
(floor-free envelopes used to prove lower-bound claims fast), :mod:`attnio.solver.claims` (claim types, the
aggregator over the ``solver/claims/<topic>.py`` modules, each building its claims as ``CLAIMS`` or ``claims()``),
:mod:`attnio.solver.claims.seed` (the seed claims), :mod:`attnio.solver.verify` (claims → verdicts; cvc5 second opinion).
CLI: ``attnio verify [--json] [--solver z3|cvc5|both] [--claim ID] [--list]``; ``attnio bounds [--json]``.
"""
