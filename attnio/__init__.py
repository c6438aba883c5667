"""attnio: how many words attention must move between fast and slow memory, and how many real algorithms move.

The project's packages sit at the top level of the repository, as the design card lays them out:

- ``bounds``: closed-form upper and lower bounds and exact cost formulas, symbolic, with regime and provenance;
- ``solver``: z3 (and cvc5) checks of those bounds for every parameter value of a regime;
- ``algorithms``: the two-level memory machine and the attention schedules that run on it;
- ``reports``: sweeps, regime reports and the CI gate.

``attnio`` itself holds only what every package shares: the error types, the validators, the count type and
the command line.
"""

__version__ = "0.1.0"
