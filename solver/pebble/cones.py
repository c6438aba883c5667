"""Forced spills: a lower bound on OPT with recomputation from cones that M red pebbles cannot compute alone.

Derived here (docs/pebbling.md §12). For a non-input v let its *cone* be v's ancestors (v included); its
*strict cone* the non-inputs among them other than v. r(v), the *red-only pebbling number*, is the least M
with which v can be made red by reads of inputs (any number, any input of the cone), computations and
deletions alone — recomputation allowed, no non-input ever read.

**Lemma (forced spill).** If r(v) > M and v must be computed in every complete calculation (v is an ancestor
of an output), then in every complete calculation some vertex u of v's strict cone is read before v's first
computation, so u (a non-input, not an output: it has a child) is written before that as well. *Proof.* Up to
v's first computation, suppose no vertex of the strict cone is read. The moves on cone vertices (reads of
cone inputs, computations of cone vertices: their parents are ancestors of v, so in the cone; deletions) are
then a red-only game on the cone with at most M red pebbles on cone vertices (other red pebbles only take
slots), ending with v red: so r(v) ≤ M. v itself cannot be read before its first computation (it is blue only
after a write, which needs a red pebble). And every ancestor of an output is computed at least once: an output
must be written, so red, so computed (it has parents), and a red pebble on a non-input is placed first by a
computation (a read needs a blue pebble, which a write places, which needs a red pebble).

**Corollary (the bound).** If v₁, …, v_k each have r(v_t) > M and pairwise disjoint strict cones, the vertices
u_t of the lemma are distinct, and each costs a write of a non-output and a read of a non-input: neither is
one of the compulsory moves (each input read once, each output written once). So every complete calculation
with recomputation costs at least inputs + outputs + 2k: OPT ≥ T + 2k (T = inputs + outputs).

:func:`certificate` finds such a family (vertices whose parents all have r ≤ M, minimal cones first,
greedily disjoint); :func:`check_certificate` re-checks one independently: the cones are recomputed from the
graph, disjointness is checked, and r(v) > M is re-decided by an exhaustive breadth-first search over every
red set of the cone (:func:`red_only_reachable`, no reduction). The bound is a lower bound only; it is 0 beyond
T wherever every vertex can be computed with M red pebbles alone (r(v) ≤ M), i.e. at all but the smallest M.

Worked example: a balanced tree of 4 leaves at M = 3: r(leaf adder) = 3 (two inputs and the sum), r(root) = 4
(one adder kept red while the other is computed): the root's strict cone holds the two lower adders, so
OPT ≥ 4 + 1 + 2 = 7, the optimum (docs/pebbling.md §5).

>>> from attnio.solver.pebble.graphs import reduction_tree
>>> c = certificate(reduction_tree(4), 3)
>>> (c.trivial, len(c.vertices), c.lower)
(5, 1, 7)
>>> check_certificate(reduction_tree(4), 3, c.vertices)
7
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from attnio.solver.pebble.graphs import Graph
from attnio.solver.pebble.limits import NO_DEADLINE, Deadline
from attnio.solver.pebble.tight import compulsory


def ancestors(g: Graph, v: int) -> frozenset[int]:
    """v and every vertex with a path to v."""
    seen = {v}
    stack = [v]
    while stack:
        for p in g.parents[stack.pop()]:
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return frozenset(seen)


def strict_cone(g: Graph, v: int) -> frozenset[int]:
    """The non-inputs among v's ancestors, v excluded: where the lemma's read must happen."""
    return frozenset(u for u in ancestors(g, v) if u != v and g.parents[u])


def red_only_reachable(g: Graph, v: int, M: int, *, max_states: int = 2_000_000,
                       deadline: Deadline = NO_DEADLINE) -> bool | None:
    """Can ``v`` be made red with at most ``M`` red pebbles, using only reads of inputs, computations and
    deletions on v's cone (recomputation allowed)? Exhaustive breadth-first search over red sets (no
    reduction: every subset of the cone of size ≤ M reachable by the three moves). None: stopped by
    ``max_states`` or ``deadline``."""
    cone = sorted(ancestors(g, v))
    idx = {u: t for t, u in enumerate(cone)}
    par = [sum(1 << idx[p] for p in g.parents[u]) for u in cone]
    inp = [not g.parents[u] for u in cone]
    goal = 1 << idx[v]
    seen = {0}
    frontier = [0]
    while frontier:
        nxt = []
        for R in frontier:
            full = R.bit_count() >= M
            for t in range(len(cone)):
                bit = 1 << t
                if R & bit:
                    S = R & ~bit  # delete
                elif full:
                    continue
                elif inp[t] or par[t] & R == par[t]:
                    S = R | bit  # read an input, or compute a vertex whose parents are red
                    if S & goal:
                        return True
                else:
                    continue
                if S not in seen:
                    seen.add(S)
                    nxt.append(S)
            if len(seen) > max_states or deadline.expired():
                return None
        frontier = nxt
    return False


@dataclass(frozen=True)
class ConeCertificate:
    """``vertices``: the v_t of the corollary (r(v_t) > M, pairwise disjoint strict cones); ``trivial``: inputs that
    are not outputs + outputs that are not inputs (:func:`attnio.solver.pebble.tight.compulsory`); ``lower`` = trivial +
    2·len(vertices) is then a lower bound on OPT with recomputation (module docstring)."""

    M: int
    trivial: int
    vertices: tuple[int, ...]
    seconds: float

    @property
    def lower(self) -> int:
        return self.trivial + 2 * len(self.vertices)


def _needed(g: Graph) -> frozenset[int]:
    outs = g.outputs
    need: set[int] = set()
    for o in outs:
        need |= ancestors(g, o)
    return frozenset(need)


def certificate(g: Graph, M: int, *, deadline: Deadline = NO_DEADLINE) -> ConeCertificate:
    """A family for the corollary: the ancestors of outputs v with r(v) > M whose non-input parents all have
    r ≤ M (the minimal ones), taken greedily smallest strict cone first while the strict cones stay disjoint.
    r is decided per vertex by :func:`red_only_reachable` (a vertex whose search stops is left out: sound)."""
    t0 = time.perf_counter()
    need = _needed(g)
    over: dict[int, bool] = {}
    for v in range(g.n):
        if not g.parents[v] or v not in need:
            continue
        if any(over.get(p, False) for p in g.parents[v]):
            over[v] = True  # above a vertex that already needs a spill: not minimal, no search needed
            continue
        if M < len(g.parents[v]) + 1:
            over[v] = True
            continue
        over[v] = red_only_reachable(g, v, M, deadline=deadline) is False
    minimal = [v for v, o in over.items() if o and not any(over.get(p, False) for p in g.parents[v])]
    minimal.sort(key=lambda v: (len(strict_cone(g, v)), v))
    used: set[int] = set()
    chosen = []
    for v in minimal:
        c = strict_cone(g, v)
        if c and not c & used:
            chosen.append(v)
            used |= c
    return ConeCertificate(M, compulsory(g), tuple(sorted(chosen)), time.perf_counter() - t0)


def check_certificate(g: Graph, M: int, vertices) -> int:
    """Replay a certificate from the graph alone and return the lower bound it proves (T + 2k), or raise
    AssertionError: each vertex is an ancestor of an output, its strict cone is recomputed, the strict cones are
    pairwise disjoint, and an exhaustive search finds no red-only calculation of it with M red pebbles."""
    need = _needed(g)
    used: set[int] = set()
    for v in vertices:
        assert g.parents[v] and v in need, f"{g.labels[v]}: not a computed ancestor of an output"
        c = strict_cone(g, v)
        assert c, f"{g.labels[v]}: empty strict cone"
        assert not c & used, f"{g.labels[v]}: strict cone overlaps an earlier one"
        used |= c
        assert red_only_reachable(g, v, M, max_states=50_000_000) is False, f"{g.labels[v]}: computable with M={M}"
    return compulsory(g) + 2 * len(vertices)  # each input reaches a sink, an output: it is read
