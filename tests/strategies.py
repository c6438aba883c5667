"""Hypothesis strategies shared by the count tests of every pass: plain points (N, d, d_v, M) from an algorithm's
own minimum M, small points with a seed for numeric runs, and whole workloads (batch, GQA groups, N_q ≠ N_kv, causal masks, element types)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from attnio.algorithms import registry
from attnio.core.workload import DTYPES, Workload


@st.composite
def points(draw: st.DrawFn, name: str, max_N: int, max_d: int, max_M_factor: int, fits: int = 3) -> tuple[int, int, int, int]:
    """(N, d, dv, M) with M ≥ the schedule's minimum; small, odd and large sizes (``fits``·N(d + d_v): about
    where everything fits)."""
    N = draw(st.one_of(st.integers(1, 9), st.integers(1, max_N)))
    d = draw(st.one_of(st.integers(1, 4), st.integers(1, max_d)))
    dv = draw(st.one_of(st.just(d), st.integers(1, max_d), st.integers(d, 4 * d)))
    lo = registry.get(name).tiling_cls.min_M(N, d, dv)
    M = draw(
        st.one_of(
            st.just(lo),
            st.integers(lo, lo + 40),
            st.integers(lo, lo * max_M_factor),
            st.integers(lo, max(lo, fits * N * (d + dv))),  # up to "everything fits"
        )
    )
    return N, d, dv, M


@st.composite
def small_points(draw: st.DrawFn, name: str, fits: int) -> tuple[int, int, int, int, int]:
    """(N, d, dv, M, seed) small enough for a numeric run against the float64 reference, M from the schedule's
    minimum up to ``fits``·N(d + d_v) above it."""
    N = draw(st.integers(1, 24))
    d = draw(st.integers(1, 8))
    dv = draw(st.one_of(st.just(d), st.integers(1, 12)))
    lo = registry.get(name).tiling_cls.min_M(N, d, dv)
    M = draw(st.one_of(st.just(lo), st.integers(lo, lo + 30), st.integers(lo, fits * N * (d + dv) + lo)))
    return N, d, dv, M, draw(st.integers(0, 2**32 - 1))


@st.composite
def workloads(draw: st.DrawFn, min_M: Callable[[int, int, int], int], max_N: int, max_d: int, max_heads: int,
              max_M_factor: int, per_group: bool = True) -> Workload:
    """A workload with M ≥ ``min_M(d, dv, g)``; ``per_group``: the "everything fits" M grows with the group."""
    kv = draw(st.integers(1, max_heads))
    g = draw(st.one_of(st.just(1), st.integers(1, max_heads)))
    Nkv = draw(st.one_of(st.integers(1, 9), st.integers(1, max_N)))
    causal = draw(st.booleans())
    Nq = draw(st.one_of(st.just(Nkv), st.integers(1, Nkv), st.just(1)) if causal else st.one_of(st.just(Nkv), st.integers(1, max_N)))
    d = draw(st.one_of(st.integers(1, 4), st.integers(1, max_d)))
    dv = draw(st.one_of(st.just(d), st.integers(1, max_d)))
    lo = min_M(d, dv, g)
    M = draw(st.one_of(st.just(lo), st.integers(lo, lo + 40), st.integers(lo, lo * max_M_factor),
                       st.integers(lo, max(lo, 3 * Nkv * (d + dv) * (g if per_group else 1)))))
    return Workload.build(
        batch=draw(st.integers(1, 3)), heads=kv * g, kv_heads=kv, Nq=Nq, Nkv=Nkv, d=d, dv=dv, causal=causal,
        dtype=draw(st.sampled_from(sorted(DTYPES))), M=M,
    )
