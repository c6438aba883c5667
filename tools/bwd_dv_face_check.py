"""Numerical check of BWD-slots-dv's per-segment maximum (docs/bounds/backward-slots-dv.md): the largest number of
dQ, dK and dV products one segment of budget T can hold, found by random restarts and local search, against the
bounds the proof gives: Y ≤ c·T²/d for T ≥ 10d² and Y ≤ c·T²/d + γ·d³ for every T (c = 57/800, γ = 1/2).

The quantity (d = 1; by scaling, Y at (T, d) is d³·Y(T/d², 1)) is step 4's face bound with every face at its
largest: over q, o, k, v (available Q, dO, K, V words), x (type-2 pairs) and the dQ, dK, dV slots b_Q, b_K, b_V,
all ≥ 0 with q + o + k + v + x + b_Q + b_K + b_V = T,

    Y = √((mn + x)·k·b_Q) + √((mn + x)·q·b_K) + √((qk + x)·o·b_V),  m = min(q, o), n = min(k, v).

Each start is a random point of the simplex; the local search moves mass between two coordinates (every ordered
pair, step halved when no move gains). numpy only. This is evidence, not proof: a local search can miss the
maximum; the proof is the z3 chain of the page. Run: ``python tools/bwd_dv_face_check.py [starts]``.
"""

from __future__ import annotations

import sys

import numpy as np

C = 57 / 800
GAMMA = 0.5
THRESHOLD = 10.0  # T ≥ 10d²: the bound without γ


def face_y(z: np.ndarray) -> np.ndarray:
    """Y at the rows of z = (q, o, k, v, x, b_Q, b_K, b_V) (d = 1)."""
    q, o, k, v, x, bq, bk, bv = z.T
    mn = np.minimum(q, o) * np.minimum(k, v)
    return np.sqrt((mn + x) * k * bq) + np.sqrt((mn + x) * q * bk) + np.sqrt((q * k + x) * o * bv)


def maximise(t: float, starts: int, rng: np.random.Generator, rounds: int = 400) -> tuple[float, np.ndarray]:
    """The best Y found on the simplex of total t, and its point."""
    z = rng.dirichlet(np.full(8, 0.7), size=starts) * t
    x_off = rng.random(starts) < 0.5  # half the starts without type-2 pairs, so both basins are searched
    z[x_off, 4] = 0.0
    z *= t / z.sum(axis=1, keepdims=True)
    val = face_y(z)
    step = np.full(starts, t / 8)
    pairs = [(i, j) for i in range(8) for j in range(8) if i != j]
    for _ in range(rounds):
        improved = np.zeros(starts, dtype=bool)
        for i, j in pairs:
            delta = np.minimum(step, z[:, j])
            cand = z.copy()
            cand[:, i] += delta
            cand[:, j] -= delta
            cv = face_y(cand)
            better = cv > val + 1e-15
            z[better], val[better] = cand[better], cv[better]
            improved |= better
        step = np.where(improved, step, step / 2)
        if (step < t * 1e-9).all():
            break
    k = int(val.argmax())
    return float(val[k]), z[k]


def main(argv: list[str]) -> int:
    starts = 64
    if argv:
        try:
            starts = int(argv[0])
        except ValueError:
            starts = 0
        if starts < 1:
            print(f"starts: got {argv[0]!r}, expected an integer ≥ 1", file=sys.stderr)
            return 2
    rng = np.random.default_rng(20261202)
    print(f"{'T/d²':>6} {'max Y (found)':>14} {'÷ T²':>8} {'bound':>10} {'bound − found':>14} {'x':>7}  point ÷ T")
    worst_margin, worst_gap = np.inf, -np.inf
    for t in (1, 2, 3, 4, 4.5, 5, 5.5, 6, 7, 8, 9, 9.5, 10, 11, 12, 16, 24, 32, 64, 128):
        y, z = maximise(t, starts, rng)
        bound = C * t * t + (0.0 if t >= THRESHOLD else GAMMA)
        worst_margin = min(worst_margin, bound - y)
        worst_gap = max(worst_gap, y - C * t * t)
        pt = " ".join(f"{w / t:.3f}" for w in z)
        print(f"{t:>6g} {y:>14.5f} {y / t**2:>8.5f} {bound:>10.5f} {bound - y:>14.5f} {z[4]:>7.3f}  {pt}")
    print(f"least margin bound − found: {worst_margin:.5f} (a negative value would refute the bound)")
    print(f"largest found − c·T²: {worst_gap:.4f} (γ = {GAMMA}); c = {C}, analytic max Y/T² for large T = "
          f"√(9/(1024√3)) = {np.sqrt(9 / (1024 * np.sqrt(3))):.6f}")
    return 0 if worst_margin >= 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
