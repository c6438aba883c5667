"""The polynomial method's arithmetic (derived here, docs/approx.md §1–§3): the polynomial P, its degree g
chosen from ε, the feature map φ of exact rank r = C(d+g, g), and the error budget.

Nothing here touches the machine; :mod:`attnio.algorithms.poly` runs the schedules.

**Polynomial.** Logits x = scale·⟨q, k⟩ lie in [−β, β]. For a shift h ∈ [0, β] let
``P(x) = T_g(x + h) = Σ_{t≤g} (x + h)^t / t!`` (the degree-g Taylor polynomial of e^y at y = 0, evaluated at
y = x + h). Expanded in x its coefficients ``p_j = (1/j!)·Σ_{u≤g−j} h^u/u!`` are all positive. Softmax is
invariant to the common factor e^h, so P only has to approximate e^{x+h} *relatively*: with a = β − h,

    |P(x) − e^{x+h}| ≤ δ_g · e^{x+h},   δ_g = max(e^a·a^{g+1}, (2β − a)^{g+1}) / (g+1)!     (Lagrange)

and a is chosen (bisection) to balance the two sides. δ_g < 1 keeps P > 0 on the range.

**Feature map.** ``φ_α(x) = sqrt(p_{|α|}·scale^{|α|}·|α|!/α!)·x^α`` over multi-indices α ∈ N^d with |α| ≤ g
(r = C(d+g, g) of them), so ``φ(q)ᵀφ(k) = Σ_j p_j (scale·⟨q,k⟩)^j = P(scale·⟨q,k⟩)`` by the multinomial
theorem: one map for queries and keys.

>>> f = features(d=2, g=2, h=0.0, scale=1.0)
>>> f.r, f.exponents.tolist()
(6, [[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]])
>>> import numpy as np
>>> q, k = np.array([[0.3, -0.2]]), np.array([[0.5, 0.1]])
>>> x = float(q[0] @ k[0])
>>> bool(abs(float(f.phi(q)[0] @ f.phi(k)[0]) - (1 + x + x * x / 2)) < 1e-15)
True
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

from attnio.bounds.approx import degree_for
from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.validate import check_real

UNIT_ROUNDOFF = 2.0**-53
NUMERIC_RANK_MAX = 3_000_000  # feature tables above this many features are refused in numeric mode


def rank(d: int, g: int) -> int:
    """r = C(d+g, g): the number of monomials of degree ≤ g in d variables.

    >>> rank(16, 4), rank(64, 2)
    (4845, 2145)
    """
    return math.comb(d + g, g)


# -- the polynomial ------------------------------------------------------------------------------


def poly_coefficients(g: int, h: float) -> np.ndarray:
    """p_j = (1/j!)·Σ_{u ≤ g−j} h^u/u!: the coefficients of T_g(x + h) in powers of x (all positive).

    >>> poly_coefficients(2, 0.0).tolist()
    [1.0, 1.0, 0.5]
    """
    p = np.empty(g + 1)
    for j in range(g + 1):
        p[j] = sum(h**u / math.factorial(u) for u in range(g - j + 1)) / math.factorial(j)
    return p


@dataclass(frozen=True)
class Budget:
    """The error budget of one instance (docs/approx.md §2).

    ``beta`` bounds |scale·⟨q,k⟩| *and* scale·Σ_l |q_l k_l| for every pair (which is what the rounding
    analysis needs); ``B_v`` bounds |V| entries. ``delta`` is the relative error of P actually achieved
    (≤ ``delta_target``), ``h`` its shift.
    """

    eps: float
    B_v: float
    beta: float
    beta_from: str  # "B" (β = scale·d·B²) or "beta" (given; inputs checked by Cauchy–Schwarz)
    delta_target: float
    g: int
    delta: float
    h: float

    @property
    def poly_error_bound(self) -> float:
        """2δ/(1−δ)·B_v: the output error of exact arithmetic with P (docs/approx.md, Lemma 2)."""
        return 2 * self.delta / (1 - self.delta) * self.B_v

    def rounding_bound(self, n: int, r: int) -> float:
        """A bound on the float64 rounding error of the whole computation (docs/approx.md, Lemma 3)."""
        m = n + r + 6 * self.g + 24
        gamma = m * UNIT_ROUNDOFF / (1 - m * UNIT_ROUNDOFF)
        p = poly_coefficients(self.g, self.h)
        p_abs = float(sum(p[j] * self.beta**j for j in range(self.g + 1)))  # ≥ Σ_α |φ_α(q)φ_α(k)|
        p_min = (1 - self.delta) * math.exp(self.h - self.beta)  # ≤ P(x) on [−β, β]
        kappa = gamma * p_abs / p_min
        if kappa >= 0.5:
            return math.inf
        return 2 * kappa * self.B_v / (1 - kappa) + 2 * UNIT_ROUNDOFF * self.B_v


def budget(eps: object, B: object, d: int, scale: float, beta: object = None) -> Budget:
    """Validate ε, B (and β) and choose the least degree g with 2δ_g/(1−δ_g)·B ≤ ε/2.

    The other ε/2 is left to float64 rounding (checked before a numeric run).

    >>> b = budget(1e-3, 0.25, d=4, scale=0.5)
    >>> (b.beta, b.g, b.poly_error_bound <= 5e-4)
    (0.125, 2, True)
    """
    eps = check_real("eps", eps, gt=0, lt=1)
    if B is None:
        raise InvalidParameter("B", None, "B > 0: the bound on |entries| of V (and of Q, K unless beta is given)")
    B = check_real("B", B, gt=0)
    if beta is None:
        try:
            beta_v, src = scale * d * B * B, "B"
        except OverflowError:  # d beyond float range: no degree reaches ε (degree_for says so)
            beta_v, src = math.inf, "B"
    else:
        beta_v, src = check_real("beta", beta, gt=0), "beta"
    g, delta, h, beta_v = degree_for(eps, B, d, beta_v, name="B" if src == "B" else "beta")
    return Budget(eps, B, beta_v, src, eps / (4 * B + eps), g, delta, h)


# -- the feature map -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FeatureMap:
    """φ for given (d, g, h, scale). Features are ordered by degree, then lexicographically by the sorted
    tuple of variable indices; ``start[t]`` is the first feature of degree t (``start[g+1] = r``)."""

    d: int
    g: int
    weights: np.ndarray  # (r,) sqrt(p_t scale^t t!/α!)
    index: np.ndarray  # (r, g) variable indices l_1 ≤ … ≤ l_t of each monomial (padding unused)
    start: tuple[int, ...]

    @property
    def r(self) -> int:
        return int(self.weights.shape[0])

    @property
    def exponents(self) -> np.ndarray:
        """(r, d) exponent matrix α (for tests and docs)."""
        A = np.zeros((self.r, self.d), dtype=np.int64)
        for t in range(1, self.g + 1):
            for f in range(self.start[t], self.start[t + 1]):
                for i in range(t):
                    A[f, self.index[f, i]] += 1
        return A

    def fill(self, X: np.ndarray, out: np.ndarray, lo: int = 0) -> None:
        """``out[:, :] = φ(X)[:, lo:lo + out.shape[1]]``: the features of a block of rows, one feature chunk."""
        hi = lo + out.shape[1]
        out[...] = self.weights[lo:hi]
        for i in range(self.g):  # features of degree > i take a factor x_{l_{i+1}}
            a = max(lo, self.start[i + 1])
            if a < hi:
                out[:, a - lo :] *= X[:, self.index[a:hi, i]]

    def phi(self, X: np.ndarray) -> np.ndarray:
        out = np.empty((X.shape[0], self.r))
        self.fill(X, out)
        return out


@functools.lru_cache(maxsize=16)
def features(d: int, g: int, h: float, scale: float) -> FeatureMap:
    r = rank(d, g)
    if r > NUMERIC_RANK_MAX:
        raise Unsupported(
            f"rank r = C(d+g, g) = {r:,} (d={d}, g={g}) is above the numeric limit {NUMERIC_RANK_MAX:,}; "
            "use count-only, a larger eps or a smaller B"
        )
    p = poly_coefficients(g, h)
    index = np.zeros((r, max(g, 1)), dtype=np.intp)
    weights = np.empty(r)
    logfact = np.array([math.lgamma(k + 1) for k in range(g + 1)])
    start = [0]
    f = 0
    for t in range(g + 1):
        combos = np.array(list(itertools.combinations_with_replacement(range(d), t)), dtype=np.intp)
        combos = combos.reshape(len(combos), t)
        n_t = combos.shape[0]
        alpha = np.zeros((n_t, d), dtype=np.intp)
        np.add.at(alpha, (np.repeat(np.arange(n_t), t), combos.ravel()), 1)
        log_multi = logfact[t] - logfact[alpha].sum(axis=1)  # log(t!/α!)
        index[f : f + n_t, :t] = combos
        weights[f : f + n_t] = np.exp(0.5 * (math.log(p[t]) + t * math.log(scale) + log_multi))
        f += n_t
        start.append(f)
    assert f == r
    return FeatureMap(d, g, weights, index, tuple(start))
