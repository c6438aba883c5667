"""Computation graphs for the red-blue pebble game (Hong & Kung 1981; Saha & Ye 2402.07443 §2.3–§2.4).

A :class:`Graph` is a DAG given as plain data: vertex labels in a topological order and, for each vertex, the
tuple of its parents. Inputs are exactly the vertices without parents and outputs exactly the vertices
without children (Saha–Ye's convention: inputs = entries of Q, K, V; outputs = entries of O).

The attention graph of Saha–Ye §2.4 (their Figure 1), for Q, K, V ∈ R^{N×d}::

    P[i,j,l]  = Q[i,l]·K[j,l]                 N²d products (layer L1)
    S[i,j]    = Σ_l P[i,j,l]                  N² disjoint summation trees of d leaves (d−1 adders each)
    A[i,j]    = exp(S[i,j])                   N² vertices
    D[i]      = Σ_j A[i,j]                    N summation trees of N leaves (the row sums)
    PV[i,k,c] = A[i,k]·V[k,c]                 N²d products (layer L2)
    AV[i,c]   = Σ_k PV[i,k,c]                 Nd summation trees of N leaves
    O[i,c]    = AV[i,c] / D[i]                Nd divisions (the outputs)

A summation tree of one leaf is the leaf itself (no adder); ``tree="balanced"`` pairs leaves level by level,
``tree="chain"`` adds them left to right. With ``normalise="reciprocal"`` the graph has Saha–Ye's separate
vertices D⁻¹[i] = 1/D[i] and O[i,c] = D⁻¹[i]·AV[i,c]; the default ``"divide"`` uses one division per output.

Vertex count (derived here), divide form, with t(L) = L−1 adders per tree of L leaves::

    |V| = 3Nd + N²d + N²(d−1) + N² + N(N−1) + N²d + Nd(N−1) + Nd

>>> g = attention(2, 1)
>>> (g.n, len(g.inputs), len(g.outputs))
(24, 6, 2)
>>> attention(2, 2).n == 3*4 + 8 + 4*1 + 4 + 2*1 + 8 + 4*1 + 4
True
>>> matmul(2, 2, 2).n  # 8 inputs, 8 products, 4 adders
20
>>> chain(4).parents
((), (0,), (1,), (2,))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int
from attnio.solver.pebble.limits import MAX_VERTICES, NO_DEADLINE, Deadline

TREES = ("balanced", "chain", "flat")


@dataclass(frozen=True)
class Graph:
    """A DAG: ``labels[v]`` names vertex v, ``parents[v]`` lists its parents (all < v: topological order)."""

    name: str
    labels: tuple[str, ...]
    parents: tuple[tuple[int, ...], ...]
    params: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        assert len(self.labels) == len(self.parents)
        assert len(set(self.labels)) == len(self.labels), "labels must be unique"
        for v, ps in enumerate(self.parents):
            assert all(0 <= p < v for p in ps), f"vertex {self.labels[v]}: parents must precede it"
            assert len(set(ps)) == len(ps), f"vertex {self.labels[v]}: repeated parent"

    @property
    def n(self) -> int:
        return len(self.labels)

    @property
    def inputs(self) -> tuple[int, ...]:
        return tuple(v for v in range(self.n) if not self.parents[v])

    @property
    def outputs(self) -> tuple[int, ...]:
        has_child = {p for ps in self.parents for p in ps}
        return tuple(v for v in range(self.n) if v not in has_child)

    @property
    def children(self) -> tuple[tuple[int, ...], ...]:
        ch: list[list[int]] = [[] for _ in range(self.n)]
        for v, ps in enumerate(self.parents):
            for p in ps:
                ch[p].append(v)
        return tuple(tuple(c) for c in ch)

    @property
    def max_indegree(self) -> int:
        return max((len(p) for p in self.parents), default=0)

    @property
    def min_M(self) -> int:
        """The least number of red pebbles with which the graph can be pebbled at all under Hong–Kung rules:
        computing v needs v and all its parents red at once, so max in-degree + 1 (at least 1)."""
        return max(1, self.max_indegree + 1)

    @property
    def trivial_io(self) -> int:
        """Every input read once and every output written once: a lower bound on any complete calculation
        (all inputs here have a child, so each must be read; outputs start unpebbled, so each is written)."""
        return len(self.inputs) + len(self.outputs)


def attention_vertices(N: int, d: int, normalise: str = "divide", *, causal: bool = False, tree: str = "balanced") -> int:
    """|V| of :func:`attention` (the module docstring's count; balanced or chain trees), without building it.
    ``causal``: only the P = N(N+1)/2 pairs j ≤ i (row i has i + 1 keys); ``tree="flat"``: one vertex per sum.

    >>> attention_vertices(2, 2) == attention(2, 2).n and attention_vertices(3, 1, "reciprocal") == attention(3, 1, normalise="reciprocal").n
    True
    >>> all(attention_vertices(N, d, causal=c, tree=t) == attention(N, d, causal=c, tree=t).n
    ...     for N in (1, 2, 3) for d in (1, 2, 3) for c in (False, True) for t in TREES)
    True
    """
    P = N * (N + 1) // 2 if causal else N * N
    if tree == "flat":  # a sum of L > 1 leaves is one vertex
        sums = P * (d > 1) + sum(1 for i in range(N) if (i + 1 if causal else N) > 1) * (1 + d)
        n = 3 * N * d + P * d + sums + P + P * d + N * d
    else:
        n = 3 * N * d + P * d + P * (d - 1) + P + (P - N) + P * d + d * (P - N) + N * d
    return n + (N if normalise == "reciprocal" else 0)


def matmul_vertices(m: int, k: int, n: int) -> int:
    """|V| of :func:`matmul`: mk + kn inputs, mkn products, mn(k − 1) adders.

    >>> matmul_vertices(2, 3, 4) == matmul(2, 3, 4).n
    True
    """
    return m * k + k * n + m * k * n + m * n * (k - 1)


def check_size(what: str, names: str, values: tuple[int, ...], vertices: int) -> None:
    """Refuse, before building it, a graph of more than :data:`MAX_VERTICES` vertices."""
    if vertices > MAX_VERTICES:
        raise InvalidParameter(
            names, values,
            f"a graph of at most {MAX_VERTICES} vertices ({what} would have {vertices}); the exact search proves "
            "optimality for a few dozen vertices and reports bounds beyond",
        )


class _Builder:
    def __init__(self, name: str, params: dict, deadline: Deadline = NO_DEADLINE) -> None:
        self.name, self.params = name, params
        self.labels: list[str] = []
        self.parents: list[tuple[int, ...]] = []
        self.deadline = deadline

    def add(self, label: str, parents: tuple[int, ...] = ()) -> int:
        if not len(self.labels) & 255:
            self.deadline.check()
        self.labels.append(label)
        self.parents.append(tuple(parents))
        return len(self.labels) - 1

    def sum_tree(self, label: str, leaves: list[int], tree: str) -> int:
        """Root of a summation tree over ``leaves``; internal adders are labelled ``label~k``, the root ``label``."""
        assert leaves
        if len(leaves) == 1:
            return leaves[0]
        if tree == "flat":  # one vertex with every leaf as a parent (the partial-computation game's sums)
            v = self.add(label, tuple(leaves))
            self.params.setdefault("sums", []).append(v)
            return v
        count = [0]

        def adder(a: int, b: int, root: bool) -> int:
            count[0] += 1
            return self.add(label if root else f"{label}~{count[0]}", (a, b))

        if tree == "chain":
            acc = leaves[0]
            for k, x in enumerate(leaves[1:]):
                acc = adder(acc, x, k == len(leaves) - 2)
            return acc
        level = list(leaves)
        while len(level) > 1:
            nxt = []
            for k in range(0, len(level) - 1, 2):
                nxt.append(adder(level[k], level[k + 1], len(level) == 2))
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0]

    def build(self) -> Graph:
        if "sums" in self.params:
            self.params["sums"] = tuple(self.params["sums"])
        return Graph(self.name, tuple(self.labels), tuple(self.parents), self.params)


def attention(N: int, d: int, *, tree: str = "balanced", normalise: str = "divide", causal: bool = False,
              deadline: Deadline = NO_DEADLINE) -> Graph:
    """The attention graph of Saha–Ye §2.4 (see the module docstring). At most :data:`MAX_VERTICES` vertices,
    checked before building; ``deadline`` is checked while building (:class:`TimeLimitReached`).
    ``causal=True``: the causal mask, only the pairs j ≤ i (S, A, the row sums and the L2 products over them)."""
    N = check_int("N", N, min=1)
    d = check_int("d", d, min=1)
    check_choice("tree", tree, TREES)
    check_choice("normalise", normalise, ("divide", "reciprocal"))
    check_size(f"attention(N={N}, d={d})", "N, d", (N, d), attention_vertices(N, d, normalise, causal=causal, tree=tree))
    kinds = {"Q": ("i", "l"), "K": ("j", "l"), "V": ("j", "c"), "QK": ("i", "j", "l"), "S": ("i", "j"), "A": ("i", "j"),
             "D": ("i",), "Dinv": ("i",), "AV": ("i", "j", "c"), "AVsum": ("i", "c"), "O": ("i", "c")}
    b = _Builder(
        f"attention(N={N}, d={d}, tree={tree}{', causal' if causal else ''})",
        {"N": N, "d": d, "tree": tree, "normalise": normalise, "causal": causal, "index_kinds": kinds,
         "kind_sizes": {"i": N, "j": N, "l": d, "c": d}},
        deadline,
    )
    Q = {(i, l): b.add(f"Q[{i},{l}]") for i in range(N) for l in range(d)}
    K = {(j, l): b.add(f"K[{j},{l}]") for j in range(N) for l in range(d)}
    V = {(k, c): b.add(f"V[{k},{c}]") for k in range(N) for c in range(d)}
    keys = {i: range(i + 1) if causal else range(N) for i in range(N)}
    S = {}
    for i in range(N):
        for j in keys[i]:
            prods = [b.add(f"QK[{i},{j},{l}]", (Q[i, l], K[j, l])) for l in range(d)]
            S[i, j] = b.sum_tree(f"S[{i},{j}]", prods, tree)
    A = {(i, j): b.add(f"A[{i},{j}]", (S[i, j],)) for i in range(N) for j in keys[i]}
    D = {i: b.sum_tree(f"D[{i}]", [A[i, j] for j in keys[i]], tree) for i in range(N)}
    if normalise == "reciprocal":
        D = {i: b.add(f"Dinv[{i}]", (D[i],)) for i in range(N)}
    for i in range(N):
        for c in range(d):
            prods = [b.add(f"AV[{i},{k},{c}]", (A[i, k], V[k, c])) for k in keys[i]]
            root = b.sum_tree(f"AVsum[{i},{c}]", prods, tree)
            b.add(f"O[{i},{c}]", (root, D[i]))
    return b.build()


def _adders(leaves: int, tree: str) -> int:
    """Vertices a summation tree of ``leaves`` leaves adds above them (none for one leaf; one when flat)."""
    return 0 if leaves == 1 else (1 if tree == "flat" else leaves - 1)


def attention_backward_vertices(N: int, d: int, *, tree: str = "balanced") -> int:
    """|V| of :func:`attention_backward`, without building it: 5Nd + N inputs, per pair the S-tree and the dP-tree
    (d products and their adders each) and P, E, dS; the row sums D (d products each); the products of dV, dQ, dK
    (N²d each) and their N-leaf trees (Nd each). For balanced or chain trees this is 4Nd + 10N²d + N².

    >>> [attention_backward_vertices(N, d) for N, d in ((1, 1), (1, 2), (2, 1), (2, 2))]
    [15, 29, 52, 100]
    >>> all(attention_backward_vertices(N, d, tree=t) == attention_backward(N, d, tree=t).n
    ...     for N in (1, 2, 3) for d in (1, 2, 3) for t in TREES)
    True
    """
    pair = 2 * (d + _adders(d, tree)) + 3
    return 5 * N * d + N + N * N * pair + N * (d + _adders(d, tree)) + 3 * N * d * (N + _adders(N, tree))


def attention_backward(N: int, d: int, *, tree: str = "balanced", deadline: Deadline = NO_DEADLINE) -> Graph:
    """The backward pass of attention as a CDAG (FlashAttention, arXiv 2205.14135, Appendix B.2, in the form of
    FlashAttention-2's backward: S recomputed from Q and K, the forward's log-sum-exp L_i saved), d_v = d, no
    scale (as in :func:`attention`). Inputs Q, K, V, O, dO (N×d each) and L (N); outputs dQ, dK, dV::

        QK[i,j,l]  = Q[i,l]·K[j,l];   S[i,j]  = Σ_l QK[i,j,l]      the S-tree of each pair (d leaves)
        P[i,j]     = exp(S[i,j] − L[i])                            one vertex, parents S[i,j] and L[i]
        DO[i,l]    = dO[i,l]·O[i,l];  D[i]    = Σ_l DO[i,l]        the row statistic D = rowsum(dO ∘ O)
        dOV[i,j,l] = dO[i,l]·V[j,l];  dP[i,j] = Σ_l dOV[i,j,l]     the dP-tree of each pair (d leaves)
        E[i,j]     = dP[i,j] − D[i];  dS[i,j] = E[i,j]·P[i,j]
        PdO[i,j,c] = P[i,j]·dO[i,c];  dV[j,c] = Σ_i PdO[i,j,c]     (N leaves)
        dSK[i,j,l] = dS[i,j]·K[j,l];  dQ[i,l] = Σ_j dSK[i,j,l]     (N leaves)
        dSQ[i,j,l] = dS[i,j]·Q[i,l];  dK[j,l] = Σ_i dSQ[i,j,l]     (N leaves)

    Summation trees as in :func:`attention` (a tree of one leaf is the leaf itself, so with N = 1 the products of
    dV, dQ, dK are the outputs). Per pair the designated set of docs/bounds/backward.md#type-2 is
    Π_ij = S-tree ∪ dP-tree ∪ {P_ij, E_ij, dS_ij} (designated parents P → S, E → dP, dS → {E, P}), so the bounds
    BWD-dP, BWD-SdP and their small-cache forms all speak about this graph. At most :data:`MAX_VERTICES` vertices,
    checked before building.

    >>> g = attention_backward(1, 1)
    >>> (g.n, len(g.inputs), len(g.outputs), g.min_M)
    (15, 6, 3, 3)
    """
    N = check_int("N", N, min=1)
    d = check_int("d", d, min=1)
    check_choice("tree", tree, TREES)
    check_size(f"attention_backward(N={N}, d={d})", "N, d", (N, d), attention_backward_vertices(N, d, tree=tree))
    kinds = {"Q": ("i", "l"), "K": ("j", "l"), "V": ("j", "c"), "O": ("i", "c"), "dO": ("i", "c"), "L": ("i",),
             "QK": ("i", "j", "l"), "S": ("i", "j"), "P": ("i", "j"), "DO": ("i", "c"), "D": ("i",),
             "dOV": ("i", "j", "c"), "dP": ("i", "j"), "E": ("i", "j"), "dS": ("i", "j"), "PdO": ("i", "j", "c"),
             "dV": ("j", "c"), "dSK": ("i", "j", "l"), "dQ": ("i", "l"), "dSQ": ("i", "j", "l"), "dK": ("j", "l")}
    b = _Builder(f"attention_backward(N={N}, d={d}, tree={tree})",
                 {"N": N, "d": d, "tree": tree, "computation": "backward", "index_kinds": kinds,
                  "kind_sizes": {"i": N, "j": N, "l": d, "c": d}}, deadline)
    Q = {(i, l): b.add(f"Q[{i},{l}]") for i in range(N) for l in range(d)}
    K = {(j, l): b.add(f"K[{j},{l}]") for j in range(N) for l in range(d)}
    V = {(j, c): b.add(f"V[{j},{c}]") for j in range(N) for c in range(d)}
    O = {(i, c): b.add(f"O[{i},{c}]") for i in range(N) for c in range(d)}
    dO = {(i, c): b.add(f"dO[{i},{c}]") for i in range(N) for c in range(d)}
    L = {i: b.add(f"L[{i}]") for i in range(N)}
    P = {}
    for i in range(N):
        for j in range(N):
            S = b.sum_tree(f"S[{i},{j}]", [b.add(f"QK[{i},{j},{l}]", (Q[i, l], K[j, l])) for l in range(d)], tree)
            P[i, j] = b.add(f"P[{i},{j}]", (S, L[i]))
    D = {i: b.sum_tree(f"D[{i}]", [b.add(f"DO[{i},{c}]", (dO[i, c], O[i, c])) for c in range(d)], tree) for i in range(N)}
    dS = {}
    for i in range(N):
        for j in range(N):
            dP = b.sum_tree(f"dP[{i},{j}]", [b.add(f"dOV[{i},{j},{c}]", (dO[i, c], V[j, c])) for c in range(d)], tree)
            E = b.add(f"E[{i},{j}]", (dP, D[i]))
            dS[i, j] = b.add(f"dS[{i},{j}]", (E, P[i, j]))
    for j in range(N):
        for c in range(d):
            b.sum_tree(f"dV[{j},{c}]", [b.add(f"PdO[{i},{j},{c}]", (P[i, j], dO[i, c])) for i in range(N)], tree)
    for i in range(N):
        for l in range(d):
            b.sum_tree(f"dQ[{i},{l}]", [b.add(f"dSK[{i},{j},{l}]", (dS[i, j], K[j, l])) for j in range(N)], tree)
    for j in range(N):
        for l in range(d):
            b.sum_tree(f"dK[{j},{l}]", [b.add(f"dSQ[{i},{j},{l}]", (dS[i, j], Q[i, l])) for i in range(N)], tree)
    return b.build()


def matmul(m: int, k: int, n: int, *, tree: str = "balanced", deadline: Deadline = NO_DEADLINE) -> Graph:
    """C = A·B by the standard algorithm, A m×k, B k×n: mkn products and mn summation trees of k leaves.
    At most :data:`MAX_VERTICES` vertices, checked before building; ``deadline`` is checked while building."""
    m = check_int("m", m, min=1)
    k = check_int("k", k, min=1)
    n = check_int("n", n, min=1)
    check_choice("tree", tree, TREES)
    check_size(f"matmul({m}x{k}·{k}x{n})", "m, k, n", (m, k, n), matmul_vertices(m, k, n))
    b = _Builder(
        f"matmul({m}x{k}·{k}x{n}, tree={tree})",
        {"m": m, "k": k, "n": n, "tree": tree, "index_kinds": {"A": ("i", "l"), "B": ("l", "j"), "P": ("i", "j", "l"), "C": ("i", "j")},
         "kind_sizes": {"i": m, "j": n, "l": k}},
        deadline,
    )
    A = {(i, l): b.add(f"A[{i},{l}]") for i in range(m) for l in range(k)}
    B = {(l, j): b.add(f"B[{l},{j}]") for l in range(k) for j in range(n)}
    for i in range(m):
        for j in range(n):
            prods = [b.add(f"P[{i},{j},{l}]", (A[i, l], B[l, j])) for l in range(k)]
            b.sum_tree(f"C[{i},{j}]", prods, tree)  # with k = 1 the product itself is the output
    return b.build()


def chain(n: int) -> Graph:
    """v0 → v1 → … → v_{n−1}: one input, one output. OPT = 2 for every M ≥ 2 (read v0, write v_{n−1})."""
    n = check_int("n", n, min=2, max=MAX_VERTICES)
    b = _Builder(f"chain({n})", {"n": n})
    prev = b.add("v0")
    for t in range(1, n):
        prev = b.add(f"v{t}", (prev,))
    return b.build()


def reduction_tree(leaves: int, *, tree: str = "balanced") -> Graph:
    """A summation tree over ``leaves`` input leaves (the leaves are inputs, the root the one output)."""
    leaves = check_int("leaves", leaves, min=2, max=(MAX_VERTICES + 1) // 2)
    check_choice("tree", tree, TREES)
    b = _Builder(f"tree({leaves}, {tree})", {"leaves": leaves, "tree": tree})
    xs = [b.add(f"x{t}") for t in range(leaves)]
    b.sum_tree("root", xs, tree)
    return b.build()


def from_edges(name: str, labels: list[str], edges: list[tuple[str, str]]) -> Graph:
    """A graph from labelled edges (labels given in a topological order). For tests and small examples.

    >>> g = from_edges("diamond", ["a", "b", "c", "e"], [("a", "b"), ("a", "c"), ("b", "e"), ("c", "e")])
    >>> (g.inputs, g.outputs, g.min_M)
    ((0,), (3,), 3)
    """
    idx = {lab: t for t, lab in enumerate(labels)}
    ps: list[list[int]] = [[] for _ in labels]
    for a, c in edges:
        ps[idx[c]].append(idx[a])
    return Graph(name, tuple(labels), tuple(tuple(sorted(p)) for p in ps), {})
