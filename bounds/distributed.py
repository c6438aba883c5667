"""Context parallelism: the exact words each device sends and receives under each schedule, the causal work per
device, link presets and the ring's overlap condition (docs/distributed.md; every formula **derived here**).

The sequence of N tokens is split over P devices; each holds n = N/P query rows of every one of the H query heads
and n key/value rows of every one of the H_kv K/V heads, for each of b sequences (widths d for Q, K and d_v for
V, O). A word is one element. Every schedule here is symmetric: each device sends as many words as it receives,
and every device moves the same number (the formulas are per device, ``send = recv``).

=========  =======================================================  ======================================================
schedule   forward (per device)                                     backward (per device)
=========  =======================================================  ======================================================
ring       (P−1)·b·H_kv·n·(d+d_v): K/V blocks forwarded P−1 times   (P−1)·c + P·c, c = b·H_kv·n·(d+d_v): K/V again, and the
                                                                    dK/dV accumulators P hops (home again)
zigzag     as ring (chunks r and 2P−1−r of 2P)                      as ring
striped    as ring (tokens r, r+P, r+2P, …)                         as ring
allgather  (P−1)·b·H_kv·n·(d+d_v): all-gather K and V               2(P−1)·c: all-gather K, V again, reduce-scatter dK, dV
ulysses    (P−1)/P·b·n·(H·d + H_kv·(d+d_v) + H·d_v): all-to-all     the same total: dO in; dQ, dK, dV out (Q, K, V, O kept
           Q, K, V in, O out (needs P | H_kv)                       head-sharded from the forward)
tokenring  (P−1)·b·H·n·(d + d_v + 1): Q forwarded P−1 times, each   (P−1)·b·H·n·(2d + d_v + 2): Q, dO, L, D forwarded,
           partial (O, L) sent back to its owner                    each partial dQ sent back; dK, dV never move
attention2d  (√P−1)·(b·H·n·(d+d_v+1) + c): Q all-gathered     (√P−1)·(b·H·n·(2d+d_v+2) + 2c): Q, dO, L, D and K, V
           along rows, K/V along columns, (O, L) reduce-scattered   gathered again; dQ reduce-scattered along rows, dK, dV
                                                                    along columns (needs P a square)
hybrid     (P_a−1)/P_a·b·n·(H + H_kv)(d+d_v) + (P/P_a − 1)·c:      the same all-to-alls + (2P/P_a − 1)·c: the ring backward
           Ulysses in groups of P_a ranks, a ring across them       across the groups (needs P_a | H_kv, 2 ≤ P_a ≤ P/2)
=========  =======================================================  ======================================================

>>> per_device("ring", P=4, N=16, d=2, heads=2, kv_heads=1)
{'forward': 48, 'backward': 112}
>>> per_device("ulysses", P=2, N=8, d=2, heads=2, kv_heads=2)
{'forward': 32, 'backward': 32}
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from attnio.bounds.expr import Expr, evaluate, evaluate_int, minimum, sqrt
from attnio.bounds.symbols import N, d, dv, sym
from attnio.bounds.types import CDAG_QK, Bound
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_int

P = sym("cp_P", doc="devices of a context-parallel group (the sequence is split over them)")
B = sym("cp_b", doc="sequences in the batch (context parallelism)")
H = sym("cp_H", doc="query heads (context parallelism)")
HKV = sym("cp_Hkv", doc="key/value heads (context parallelism; H_kv divides H)")
PA = sym("cp_Pa", doc="hybrid context parallelism: ranks per all-to-all group (intra-node); P/P_a groups form the ring")

PROVENANCE = "derived here (docs/distributed.md)"

n = N / P  # rows per device
_KV = B * HKV * n * (d + dv)  # one device's K and V shard, c in the table


@dataclass(frozen=True)
class Schedule:
    """One context-parallel schedule: its sequence layout, what it sends per device forward and backward (words,
    ``send = recv``), what divides what, and where it comes from."""

    name: str
    layout: str  # contiguous, zigzag, striped (how query rows are assigned to devices)
    forward: Expr
    backward: Expr
    source: str
    moves: str  # what travels, for people

    def needs(self) -> str:
        """The divisibility the schedule needs of N (the sequence split)."""
        return {"zigzag": "2P"}.get(self.layout, "P")


_RING_BWD = (P - 1) * _KV + P * _KV
_A2A = (P - 1) / P * B * n * (H * (d + dv) + HKV * (d + dv))

_A2A_INTRA = (PA - 1) / PA * B * n * (H * (d + dv) + HKV * (d + dv))

SCHEDULES: dict[str, Schedule] = {
    "ring": Schedule("ring", "contiguous", (P - 1) * _KV, _RING_BWD,
                     "Ring Attention (Liu, Zaharia & Abbeel 2023, arXiv 2310.01889) §3; backward as ring-flash-attention "
                     "does it (K/V and the dK/dV accumulators travel together)", "K/V blocks around the ring"),
    "zigzag": Schedule("zigzag", "zigzag", (P - 1) * _KV, _RING_BWD,
                       "zigzag ring: the sequence cut in 2P chunks, device r holding chunks r and 2P−1−r (Llama 3 "
                       "§3.3.2's split; ring-flash-attention's zigzag_ring_flash_attn)", "K/V blocks around the ring"),
    "striped": Schedule("striped", "striped", (P - 1) * _KV, _RING_BWD,
                        "Striped Attention (Brandon et al. 2023, arXiv 2311.09431): device r holds tokens r, r+P, …",
                        "K/V blocks around the ring"),
    "allgather": Schedule("allgather", "zigzag", (P - 1) * _KV, 2 * (P - 1) * _KV,
                          "Llama 3 (Dubey et al. 2024, arXiv 2407.21783) §3.3.2: all-gather K/V, attend the local Q "
                          "chunks (2P-chunk split); backward reduce-scatters dK/dV",
                          "all-gather of K, V (backward: again, then reduce-scatter dK, dV)"),
    "tokenring": Schedule("tokenring", "contiguous", (P - 1) * B * H * n * (d + dv + 1),
                          (P - 1) * B * H * n * (2 * d + dv + 2),
                          "TokenRing (Wang et al. 2024, arXiv 2412.20501): Q travels the ring, K/V stay; each partial "
                          "(O, L) goes straight back to its queries' owner (one hop on a switched fabric); backward "
                          "(derived here): Q, dO, L, D travel, dK/dV accumulate in place, partial dQ goes back",
                          "Q blocks around the ring, partial (O, L) back (backward: Q, dO, L, D out, dQ back)"),
    "hybrid": Schedule("hybrid", "contiguous", _A2A_INTRA + (P / PA - 1) * _KV, _A2A_INTRA + (2 * P / PA - 1) * _KV,
                       "Megatron-Core context parallelism, cp_comm_type 'a2a+p2p' (hierarchical): Ulysses all-to-all "
                       "within groups of P_a ranks (intra-node), a ring across the P/P_a groups (inter-node); derived "
                       "here as Ulysses(P_a) plus ring(P/P_a) on the group's chunk", "all-to-all in groups, K/V ring across"),
    "attention2d": Schedule("attention2d", "grid",
                            (sqrt(P) - 1) * (B * H * n * (d + dv + 1) + _KV),
                            (sqrt(P) - 1) * (B * H * n * (2 * d + dv + 2) + 2 * _KV),
                            "Attention2D (a √P × √P grid: query blocks by row, key blocks by column); this layout and "
                            "its collectives derived here: Q chunks row-major, K/V chunks column-major, all-gathers of Q "
                            "along rows and of K/V along columns, partial (O, L) reduce-scattered along rows",
                            "Q along grid rows, K/V along grid columns, partial (O, L) reduced along rows"),
    "ulysses": Schedule("ulysses", "contiguous", _A2A, _A2A,
                        "DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509) §3: all-to-all sequence→heads for "
                        "Q, K, V, heads→sequence for O", "all-to-all of Q, K, V and O (backward: dO, dQ, dK, dV)"),
}


def check(schedule: str, *, P: int, N: int, heads: int, kv_heads: int, batch: int = 1, intra: int | None = None) -> None:
    """Refuse what the schedule cannot split, one parameter at a time (``InvalidParameter``: name, value, range).

    >>> check("ulysses", P=4, N=16, heads=8, kv_heads=2)
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: kv_heads=2 is invalid: valid range is a multiple of P=4 for ulysses (each device attends kv_heads/P whole K/V heads; heads=8)
    """
    if schedule not in SCHEDULES:
        raise InvalidParameter("schedule", schedule, "one of " + ", ".join(SCHEDULES))
    Pv = check_int("P", P, min=2, max=2**20)  # one device is no context parallelism (and its ring has no link)
    Nv = check_int("N", N, min=1, max=2**40)  # sizes beyond these would overflow the floats of the link times
    check_int("heads", heads, min=1, max=2**20)
    check_int("kv_heads", kv_heads, min=1, max=2**20)
    check_int("batch", batch, min=1, max=2**20)
    if heads % kv_heads:
        raise InvalidParameter("kv_heads", kv_heads, f"a divisor of heads={heads}")
    parts = 2 * Pv if SCHEDULES[schedule].layout == "zigzag" else Pv
    if Nv % parts:
        raise InvalidParameter("N", Nv, f"a multiple of {parts} ({SCHEDULES[schedule].needs()} with P={Pv}) for {schedule}")
    if schedule == "attention2d" and math.isqrt(Pv) ** 2 != Pv:
        raise InvalidParameter("P", P, "a perfect square (4, 9, 16, …) for attention2d (a √P × √P grid)")
    if schedule == "hybrid":
        if intra is None:
            raise InvalidParameter("intra", intra, f"the all-to-all group size P_a for hybrid: a divisor of P={Pv} with 2 <= P_a <= P/2")
        Pa = check_int("intra", intra, min=2, max=Pv // 2)
        if Pv % Pa:
            raise InvalidParameter("intra", intra, f"a divisor of P={Pv} with 2 <= P_a <= P/2 (groups of P_a ranks)")
        if kv_heads % Pa:
            raise InvalidParameter("kv_heads", kv_heads, f"a multiple of intra={Pa} for hybrid (each rank of a group attends "
                                   "kv_heads/P_a whole K/V heads)")
    elif intra is not None:
        raise InvalidParameter("intra", intra, "only with the hybrid schedule (absent otherwise)")
    if schedule == "ulysses":
        if heads < Pv or heads % Pv:
            raise InvalidParameter("heads", heads, f"a multiple of P={Pv} for ulysses (each device attends heads/P whole heads)")
        if kv_heads % Pv:
            raise InvalidParameter("kv_heads", kv_heads, f"a multiple of P={Pv} for ulysses (each device attends kv_heads/P "
                                   f"whole K/V heads; heads={heads})")


def env(*, P: int, N: int, d: int, heads: int, kv_heads: int, dv: int | None = None, batch: int = 1,
        intra: int | None = None) -> dict[str, int]:
    return {"cp_P": P, "N": N, "d": d, "dv": d if dv is None else dv, "cp_H": heads, "cp_Hkv": kv_heads, "cp_b": batch,
            "cp_Pa": intra or 1}


def per_device(schedule: str, *, P: int, N: int, d: int, heads: int, kv_heads: int, dv: int | None = None,
               batch: int = 1, intra: int | None = None) -> dict[str, int]:
    """Words one device sends (= receives) in the forward and in the backward of ``schedule`` (``intra``: the hybrid
    schedule's group size)."""
    check(schedule, P=P, N=N, heads=heads, kv_heads=kv_heads, batch=batch, intra=intra)
    e = env(P=P, N=N, d=d, heads=heads, kv_heads=kv_heads, dv=dv, batch=batch, intra=intra)
    s = SCHEDULES[schedule]
    return {"forward": evaluate_int(s.forward, e), "backward": evaluate_int(s.backward, e)}


# Causal work: the (query, key) pairs each device computes ------------------------------------------------------


def rows_of(layout: str, P: int, N: int, r: int) -> list[int]:
    """The global token positions device ``r`` holds under ``layout``.

    >>> rows_of("zigzag", 2, 8, 0), rows_of("striped", 2, 8, 1)
    ([0, 1, 6, 7], [1, 3, 5, 7])
    """
    nn = N // P
    if layout == "contiguous":
        return list(range(r * nn, (r + 1) * nn))
    if layout == "zigzag":
        c = N // (2 * P)
        return list(range(r * c, (r + 1) * c)) + list(range((2 * P - 1 - r) * c, (2 * P - r) * c))
    if layout == "striped":
        return list(range(r, N, P))
    if layout == "grid":  # the query chunk of grid cell (a, b) = r: chunk a·√P + b = r (row-major)
        return list(range(r * nn, (r + 1) * nn))
    raise InvalidParameter("layout", layout, "contiguous, zigzag, striped or grid")


def kv_rows_of(layout: str, P: int, N: int, r: int) -> list[int]:
    """The token positions of the K/V rows device ``r`` holds: its query rows, except in the grid layout, where cell
    (a, b) holds K/V chunk b·√P + a (column-major), so that a grid column holds one key block.

    >>> kv_rows_of("grid", 4, 8, 1), rows_of("grid", 4, 8, 1)
    ([4, 5], [2, 3])
    """
    if layout != "grid":
        return rows_of(layout, P, N, r)
    q, nn = math.isqrt(P), N // P
    a, b = divmod(r, q)
    c = b * q + a
    return list(range(c * nn, (c + 1) * nn))


def pairs(schedule: str, *, P: int, N: int, heads: int, causal: bool, r: int, batch: int = 1,
          intra: int | None = None) -> int:
    """Unmasked (query, key) pairs device ``r`` computes, summed over sequences and query heads (closed forms,
    docs/distributed.md#work): non-causal b·H·n·N (ring family, all-gather), b·(H/P)·N² (Ulysses); causal,
    contiguous b·H·(r·n² + n(n+1)/2) (TokenRing, whose work follows its stationary keys: b·H·(n(N − rn) − n(n−1)/2)),
    hybrid b·(H/P_a)·(g·S² + S(S+1)/2) with S = P_a·n, g = ⌊r/P_a⌋, zigzag b·H·((2P−1)c² + c(c+1)) with c = N/2P (the same on every device),
    striped b·H·(n(r+1) + P·n(n−1)/2), Ulysses b·(H/P)·N(N+1)/2.

    >>> [pairs("ring", P=2, N=8, heads=1, causal=True, r=r) for r in (0, 1)]
    [10, 26]
    >>> [pairs("zigzag", P=2, N=8, heads=1, causal=True, r=r) for r in (0, 1)]
    [18, 18]
    """
    nn = N // P
    lay = SCHEDULES[schedule].layout
    if schedule == "ulysses":
        return batch * (heads // P) * (N * (N + 1) // 2 if causal else N * N)
    if schedule == "hybrid":  # H/P_a heads of the group's chunk of S = P_a·n rows (group g = r // P_a)
        S, g = intra * nn, r // intra  # type: ignore[operator]
        return batch * (heads // intra) * ((g * S * S + S * (S + 1) // 2) if causal else S * N)  # type: ignore[operator]
    if schedule == "attention2d":  # query block a against key block b, S = √P·n rows each
        q = math.isqrt(P)
        a, b = divmod(r, q)
        S = q * nn
        return batch * heads * (S * S if not causal or a > b else S * (S + 1) // 2 if a == b else 0)
    if schedule == "tokenring" and causal:  # work follows the keys: key j is seen by the N − j queries i ≥ j
        return batch * heads * (nn * (N - r * nn) - nn * (nn - 1) // 2)
    if not causal:
        return batch * heads * nn * N
    if lay == "contiguous":
        return batch * heads * (r * nn * nn + nn * (nn + 1) // 2)
    if lay == "zigzag":
        c = N // (2 * P)
        return batch * heads * ((2 * P - 1) * c * c + c * (c + 1))
    return batch * heads * (nn * (r + 1) + P * nn * (nn - 1) // 2)


# Links and the overlap of communication with computation -----------------------------------------------------


@dataclass(frozen=True)
class Link:
    """A link preset: bytes per second one GPU can send in one direction (vendor peak), and its source."""

    name: str
    bytes_per_s: float
    source: str


LINKS: dict[str, Link] = {
    "nvlink3": Link("nvlink3", 300e9, "NVIDIA A100 datasheet: third-generation NVLink 600 GB/s per GPU, both directions "
                    "together (12 links × 50 GB/s): 300 GB/s each way"),
    "nvlink4": Link("nvlink4", 450e9, "NVIDIA H100 datasheet: fourth-generation NVLink 900 GB/s per GPU, both directions "
                    "(18 links × 50 GB/s): 450 GB/s each way"),
    "nvlink5": Link("nvlink5", 900e9, "NVIDIA Blackwell (B200) datasheet: fifth-generation NVLink 1.8 TB/s per GPU, both "
                    "directions (18 links × 100 GB/s): 900 GB/s each way"),
    "ib-ndr": Link("ib-ndr", 50e9, "InfiniBand NDR (NVIDIA ConnectX-7 / Quantum-2): 400 Gb/s per port = 50 GB/s each way"),
    "ib-xdr": Link("ib-xdr", 100e9, "InfiniBand XDR (NVIDIA ConnectX-8 / Quantum-X800): 800 Gb/s per port = 100 GB/s each way"),
    "roce400": Link("roce400", 50e9, "RoCE v2 over 400 GbE (NVIDIA ConnectX-7 / Spectrum-X): 400 Gb/s = 50 GB/s each way"),
    "pcie4": Link("pcie4", 31.5e9, "PCI Express 4.0 x16 (PCI-SIG): 16 GT/s × 16 lanes, 128b/130b: 31.5 GB/s each way"),
    "pcie5": Link("pcie5", 63.0e9, "PCI Express 5.0 x16 (PCI-SIG): 32 GT/s × 16 lanes, 128b/130b: 63.0 GB/s each way"),
}


def link(name: str) -> Link:
    if name not in LINKS:
        raise InvalidParameter("link", name, "one of " + ", ".join(LINKS))
    return LINKS[name]


# The ring's overlap condition, with real symbols so z3 can reason about it (solver/claims/distributed.py).
ROWS = sym("cp_n", doc="rows per device n = N/P (context parallelism)")
G = sym("cp_g", doc="query heads per K/V head g = H/H_kv (context parallelism)")
BYTES = sym("cp_bytes", doc="bytes per word (context parallelism)")
FLOPS = sym("cp_F", integer=False, lo=0, doc="peak FLOP/s of one device (context parallelism)")
BW = sym("cp_BW", integer=False, lo=0, doc="link bytes/s one device sends one way (context parallelism)")

# One ring step per K/V head, forward: the K/V block (n·(d+d_v) words) crosses one link while the g query heads
# of that K/V head do 2·g·n²·(d+d_v) FLOPs (S = QKᵀ: 2n²d; PV: 2n²d_v) against it.
STEP_COMM_FWD = ROWS * (d + dv) * BYTES / BW
STEP_COMP_FWD = 2 * G * ROWS * ROWS * (d + dv) / FLOPS
THRESHOLD_FWD = FLOPS * BYTES / (2 * G * BW)  # n ≥ this ⇔ the step's transfer hides behind its attention
# backward: K/V and the dK/dV accumulator (2n(d+d_v) words) against 2·g·n²(3d + 2d_v) FLOPs (S, dP, dV, dQ, dK)
STEP_COMM_BWD = 2 * ROWS * (d + dv) * BYTES / BW
STEP_COMP_BWD = 2 * G * ROWS * ROWS * (3 * d + 2 * dv) / FLOPS
THRESHOLD_BWD = (d + dv) * FLOPS * BYTES / (G * (3 * d + 2 * dv) * BW)


def overlap(*, N: int, P: int, d: int, dv: int, heads: int, kv_heads: int, bytes_per_word: int, flops: float,
            link_name: str, batch: int = 1) -> dict[str, float | bool]:
    """The ring's per-step times on one device (a non-diagonal step: every pair unmasked; the b·H_kv K/V heads of
    the step, the per-head expressions above times b·H_kv) and whether the transfer hides behind the step's
    attention: ``hidden`` ⇔ n ≥ ``threshold_rows`` (forward: F·β/(2·g·BW); the claims
    ``distributed.ring.overlap-fwd`` and ``-bwd`` prove the equivalence).

    >>> o = overlap(N=32768, P=8, d=128, dv=128, heads=32, kv_heads=8, bytes_per_word=2, flops=989.4e12, link_name="nvlink4")
    >>> round(o["threshold_rows_fwd"]), o["hidden_fwd"]
    (550, True)
    """
    lk = link(link_name)
    e = {"cp_n": N // P, "cp_g": heads // kv_heads, "cp_bytes": bytes_per_word, "cp_F": flops, "cp_BW": lk.bytes_per_s,
         "d": d, "dv": dv}

    def f(x: Expr) -> float:
        return float(evaluate(x, e))

    units = batch * kv_heads

    out: dict[str, float | bool] = {
        "comm_s_fwd": units * f(STEP_COMM_FWD), "compute_s_fwd": units * f(STEP_COMP_FWD),
        "threshold_rows_fwd": f(THRESHOLD_FWD),
        "comm_s_bwd": units * f(STEP_COMM_BWD), "compute_s_bwd": units * f(STEP_COMP_BWD),
        "threshold_rows_bwd": f(THRESHOLD_BWD),
    }
    out["hidden_fwd"] = out["comm_s_fwd"] <= out["compute_s_fwd"]
    out["hidden_bwd"] = out["comm_s_bwd"] <= out["compute_s_bwd"]
    return out


# DIST-QK: a lower bound on the words the busiest processor receives (docs/bounds/distributed.md; derived here) ------

# The two branches of the bound, one head (one sequence; Q, K N×d), each processor initially holding at most
# 2Nd/P words of Q and K: L = min(first, second). The first is the smaller iff 2dP ≤ N(√P + 1) (claim
# distributed.lb.regime); Attention2D's Q and K all-gathers move exactly the first (distributed.lb.attention2d-qk).
LB_QK = 2 * N * d / sqrt(P) - 2 * N * d / P
LB_PAIRS = N**2 / P - N**2 / P**2
LOWER = minimum(LB_QK, LB_PAIRS)
LB_REGIME = (2 <= P, 1 <= N, 1 <= d, 1 <= dv)
LB_BRANCH1 = 2 * d * P <= N * (sqrt(P) + 1)  # where the first branch is the minimum
LB_ID = "distributed.qk-lower"
LB_DOC = "docs/bounds/distributed.md"

BOUNDS: tuple[Bound, ...] = (
    Bound(
        id=LB_ID,
        statement=(
            "On P ≥ 2 processors with unbounded local memories, each initially holding at most 2Nd/P words of Q and "
            "K together, every calculation of attention's QKᵀ sum trees (one head, no mask: every S_ij required; N ≥ 1, "
            "d ≥ 1, any d_v ≥ 1; recomputation allowed) makes some processor receive at least min(2Nd/√P − 2Nd/P, N²/P − N²/P²) words; "
            "the first branch is the minimum iff 2dP ≤ N(√P + 1)"),
        kind="lower",
        model=("P processors, unbounded local memory, words received by the busiest processor; inputs Q, K (N×d), "
               "V (N×d_v), at most 2Nd/P words of Q and K initially on each processor; standard attention CDAG, "
               "QKᵀ trees of every pair (no mask; standard matrix multiplication; recomputation allowed)"),
        regime=LB_REGIME,
        expr=LOWER,
        explicit=True,
        constant=Fraction(2),
        provenance="derived here",
        status="derived here (refereed)",
        slack=-2 * N * d / P,
        doc=LB_DOC,
        notes=("Not in bounds.catalog.all_bounds (the two-level I/O catalog, compared with single-device counts); "
               "found by catalog.by_id. Multi-head: the one-head bound still holds (a head's own trees and share), "
               "weakly. The 3-D (N²d/P)^{2/3} form and V/PV are not derived (docs/bounds/distributed.md#not-done)."),
        symbols=("cp_P", "N", "d", "dv"),
        computation="forward",
        cdag=CDAG_QK,
    ),
)


def lower_bound(*, P: int, N: int, d: int) -> float:
    """L(P, N, d) of DIST-QK in words (a real number: √P), a lower bound on the words the busiest of P processors
    receives in any forward, whatever the heads (one head's trees suffice) and d_v.

    >>> lower_bound(P=4, N=4096, d=64)
    131072.0
    >>> per_device("attention2d", P=4, N=4096, d=64, heads=1, kv_heads=1)["forward"] / lower_bound(P=4, N=4096, d=64)
    2.0078125
    """
    check_int("P", P, min=2, max=2**20)
    check_int("N", N, min=1, max=2**40)
    check_int("d", d, min=1, max=2**20)
    return float(evaluate(LOWER, {"cp_P": P, "N": N, "d": d}))


def lower_bound_entry(words: dict[str, int], *, P: int, N: int, d: int) -> dict[str, object]:
    """DIST-QK beside a schedule's exact words per device: the bound, which branch is the minimum, and each pass's
    words ÷ the bound (what ``attnio distributed --json`` prints as ``lower_bound``). The bound is one head's (it
    still holds with several heads: one head's trees and that head's share of ≤ 2Nd/P Q and K words per device,
    true of every layout here; weakly, since it does not grow with the heads).

    >>> e = lower_bound_entry({"forward": 393216}, P=16, N=32768, d=128)
    >>> e["words"], e["branch"], e["ratio"]
    (1572864.0, '2Nd/√P − 2Nd/P', {'forward': 0.25})
    """
    L = lower_bound(P=P, N=N, d=d)
    first = evaluate(LB_QK, {"cp_P": P, "N": N, "d": d}) <= evaluate(LB_PAIRS, {"cp_P": P, "N": N})
    return {"id": LB_ID, "words": L, "status": "derived here (refereed)", "doc": LB_DOC,
            "branch": "2Nd/√P − 2Nd/P" if first else "N²/P − N²/P²",
            "scope": "one head's QKᵀ trees, no mask, each device starting with at most 2Nd/P of its Q and K words; "
                     "words received by the busiest device",
            "ratio": {p: w / L for p, w in words.items()}}
