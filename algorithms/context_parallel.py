"""Context-parallel attention schedules, forward and backward, written once as the code of one rank against a
:class:`~attnio.algorithms.cluster.Comm` (docs/distributed.md). Each rank holds the query, key and value rows of its
layout (``bounds.distributed.rows_of``) for every head; what crosses a link is counted by the communicator.

Loop nests (rank r of P; n = N/P rows per rank; L the logsumexp, merged block by block)::

    ring / zigzag / striped, forward:              backward (O, L kept from the forward; D = rowsum(dO ∘ O)):
        (K, V) ← own shard                             (K, V) ← own shard; dQ ← 0
        for s in 0..P−1:                               for s in 0..P−1:
            (O, L) ← merge((O, L), attend(Q, K, V))        (dq, dk, dv) ← grads(Q, K, V, dO, L, D)
            if s < P−1: (K, V) ← ring_shift(K, V)          dQ += dq; (dK, dV) ← dk, dv  (+ what came in, s > 0)
                                                           (dK, dV) ← ring_shift(dK, dV)  (P shifts: home at the end)
                                                           if s < P−1: (K, V) ← ring_shift(K, V)
    allgather: K, V ← all_gather; (O, L) ← attend     backward: all_gather K, V again; grads; reduce_scatter dK, dV
    tokenring: for s in 1..P−1: Q ← ring_shift(Q);    backward: (Q, dO, L, D) shifted the same way; grads against
               partial ← attend(Q, own K, V); sent back        the stationary K, V; dK, dV += in place; the partial
               to its owner (shift −s), merged there           dQ sent back to its owner (shift −s)
    attention2d (cell (a, b) of a √P × √P grid):      backward: Q, dO, L, D gathered along the row, K, V along
        Q ← all_gather along the row (query block a)            the column; dQ reduce-scattered along the row,
        K, V ← all_gather along the column (key block b)        dK, dV along the column
        (O, L) ← attend; reduce_scatter along the row (merge)
    hybrid: Ulysses' all-to-alls within groups of P_a ranks, the ring loop across the groups (hop P_a)
    ulysses: Q, K, V ← all_to_all(sequence → heads)   backward: dO ← all_to_all(sequence → heads); grads on the
             (O, L) ← attend (full sequence, H/P heads)         kept head-sharded Q, K, V, O, L;
             O ← all_to_all(heads → sequence)                   dQ, dK, dV ← all_to_all(heads → sequence)

Worked count (ring, P = 4, N = 16, d = d_v = 2, H = 2, H_kv = 1): each rank's K/V shard is 4·(2 + 2) = 16 words,
forwarded 3 times forward (48 words sent per rank) and, backward, 3 more K/V shifts and 4 dK/dV shifts (112).

>>> r = distributed("ring", P=4, N=16, d=2, heads=2, kv_heads=1, causal=True, backward=True)
>>> r.sent["forward"], r.sent["backward"], r.formula
([48, 48, 48, 48], [112, 112, 112, 112], {'forward': 48, 'backward': 112})
>>> r.errors["O"] < 1e-12 and r.errors["dK"] < 1e-12
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnio.algorithms.cluster import Cluster, Comm
from attnio.algorithms.cp_blocks import attend, grads, merge
from attnio.algorithms.reference import attention4_backward, attention4_saved, default_scale, rel_error
from attnio.bounds import distributed as dist
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_int

SEQ, HEADS = 2, 1  # the axes of a (batch, heads, rows, width) array

#: numeric runs hold the whole problem in memory (and an N×N reference per head): b·H·N·max(d, d_v) ≤ 2²²
NUMERIC_MAX_WORDS = 2**22
#: and the float64 reference's N×N scores of every head: b·H·N² ≤ 2²⁶
NUMERIC_MAX_PAIRS = 2**26


@dataclass
class Shard:
    """What one rank holds: its query, key and value rows (global positions ``pos``), and after the forward its
    output and logsumexp (and, for Ulysses, the head-sharded tensors the backward reuses)."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    pos: np.ndarray
    o: Any = None
    lse: Any = None
    kept: dict[str, Any] = field(default_factory=dict)


def _ring_positions(comm: Comm, layout: str, N: int, s: int) -> np.ndarray:
    """Positions of the K/V block a rank holds at ring step s: its left neighbour's at s − 1 (known to every rank
    from the layout; an index, not data, so it is not sent)."""
    return np.asarray(dist.rows_of(layout, comm.P, N, (comm.rank - s) % comm.P))


def _ring_forward(comm: Comm, q: np.ndarray, k: np.ndarray, v: np.ndarray, qpos: np.ndarray, kpos_at, steps: int,
                  hop: int, causal: bool, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The ring loop: ``steps`` blocks, the K/V block passed ``hop`` ranks on after each step but the last;
    ``kpos_at(s)``: the positions of the block held at step s."""
    o = lse = None
    for s in range(steps):
        ob, lb = attend(q, k, v, qpos, kpos_at(s), causal, scale)
        o, lse = (ob, lb) if o is None else merge(o, lse, ob, lb)
        if s < steps - 1:
            k, v = comm.ring_shift(k, hop), comm.ring_shift(v, hop)
    return o, lse  # type: ignore[return-value]


def _ring_backward(comm: Comm, q: np.ndarray, k: np.ndarray, v: np.ndarray, do: np.ndarray, o: np.ndarray,
                   lse: np.ndarray, qpos: np.ndarray, kpos_at, steps: int, hop: int, causal: bool, scale: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ring backward: K/V travel again, each with its dK/dV accumulator, which takes ``steps`` hops (home)."""
    D = (do * o).sum(axis=-1)
    dq = np.zeros_like(q)
    dk = dv = None
    for s in range(steps):
        gq, gk, gv = grads(q, k, v, do, lse, D, qpos, kpos_at(s), causal, scale)
        dq += gq
        dk, dv = (gk, gv) if dk is None else (dk + gk, dv + gv)
        dk, dv = comm.ring_shift(dk, hop), comm.ring_shift(dv, hop)  # `steps` hops: each ends at its owner
        if s < steps - 1:
            k, v = comm.ring_shift(k, hop), comm.ring_shift(v, hop)
    return dq, dk, dv  # type: ignore[return-value]


def _group_rows(comm: Comm, N: int, intra: int, s: int) -> np.ndarray:
    """Hybrid: the positions of the sequence chunk of the rank group s groups to the left (groups of ``intra``
    consecutive ranks hold consecutive chunks of N·intra/P rows)."""
    groups = comm.P // intra
    g = (comm.rank // intra - s) % groups
    size = N // groups
    return np.arange(g * size, (g + 1) * size)


def _grid(comm: Comm) -> tuple[list[int], list[int]]:
    """Attention2D: the ranks of this rank's grid row and grid column (cell (a, b) = rank a·√P + b)."""
    q = math.isqrt(comm.P)
    a, b = divmod(comm.rank, q)
    return [a * q + j for j in range(q)], [j * q + b for j in range(q)]


def forward(schedule: str, comm: Comm, sh: Shard, N: int, causal: bool, scale: float, intra: int = 1) -> None:
    """The forward of ``schedule`` on one rank: sets ``sh.o`` and ``sh.lse`` (its own rows). ``intra``: the hybrid
    schedule's all-to-all group size."""
    layout = dist.SCHEDULES[schedule].layout
    if schedule in ("ring", "zigzag", "striped"):
        sh.o, sh.lse = _ring_forward(comm, sh.q, sh.k, sh.v, sh.pos, lambda s: _ring_positions(comm, layout, N, s),
                                     comm.P, 1, causal, scale)
    elif schedule == "allgather":
        k, v = comm.all_gather(sh.k, SEQ), comm.all_gather(sh.v, SEQ)
        kpos = np.concatenate([dist.rows_of(layout, comm.P, N, j) for j in range(comm.P)])
        sh.o, sh.lse = attend(sh.q, k, v, sh.pos, kpos, causal, scale)
    elif schedule == "tokenring":
        q = sh.q
        o, lse = attend(q, sh.k, sh.v, sh.pos, sh.pos, causal, scale)  # s = 0: own queries, own keys
        for s in range(1, comm.P):
            q = comm.ring_shift(q)  # now the queries of rank r − s
            ob, lb = attend(q, sh.k, sh.v, _ring_positions(comm, layout, N, s), sh.pos, causal, scale)
            ob, lb = comm.ring_shift(ob, -s), comm.ring_shift(lb, -s)  # back to their owner; ours from r + s
            o, lse = merge(o, lse, ob, lb)
        sh.o, sh.lse = o, lse
    elif schedule == "ulysses":
        q, k, v = (comm.all_to_all(x, HEADS, SEQ) for x in (sh.q, sh.k, sh.v))
        full = np.arange(N)
        o, lse = attend(q, k, v, full, full, causal, scale)
        sh.kept = {"q": q, "k": k, "v": v, "o": o, "lse": lse}
        sh.o = comm.all_to_all(o, SEQ, HEADS)  # L stays head-sharded, in ``kept``, for the backward
    elif schedule == "attention2d":
        row, col = _grid(comm)
        q = comm.group_all_gather(sh.q, SEQ, row)  # query block a: the row's chunks
        k, v = comm.group_all_gather(sh.k, SEQ, col), comm.group_all_gather(sh.v, SEQ, col)  # key block b
        qpos = np.concatenate([dist.rows_of("grid", comm.P, N, j) for j in row])
        kpos = np.concatenate([dist.kv_rows_of("grid", comm.P, N, j) for j in col])
        o, lse = attend(q, k, v, qpos, kpos, causal, scale)
        sh.o, sh.lse = comm.group_reduce_scatter((o, lse), SEQ, row, lambda a, b: merge(a[0], a[1], b[0], b[1]))
    elif schedule == "hybrid":
        q, k, v = (comm.group_all_to_all(x, HEADS, SEQ, intra) for x in (sh.q, sh.k, sh.v))
        rows = _group_rows(comm, N, intra, 0)
        o, lse = _ring_forward(comm, q, k, v, rows, lambda s: _group_rows(comm, N, intra, s), comm.P // intra, intra,
                               causal, scale)
        sh.kept = {"q": q, "k": k, "v": v, "o": o, "lse": lse}
        sh.o = comm.group_all_to_all(o, SEQ, HEADS, intra)
    else:
        raise InvalidParameter("schedule", schedule, "one of " + ", ".join(dist.SCHEDULES))


def backward(schedule: str, comm: Comm, sh: Shard, do: np.ndarray, N: int, causal: bool, scale: float,
             intra: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The backward of ``schedule`` on one rank, after :func:`forward`: (dQ, dK, dV) of its own rows."""
    layout = dist.SCHEDULES[schedule].layout
    if schedule in ("ring", "zigzag", "striped"):
        return _ring_backward(comm, sh.q, sh.k, sh.v, do, sh.o, sh.lse, sh.pos,
                              lambda s: _ring_positions(comm, layout, N, s), comm.P, 1, causal, scale)
    if schedule == "allgather":
        k, v = comm.all_gather(sh.k, SEQ), comm.all_gather(sh.v, SEQ)
        kpos = np.concatenate([dist.rows_of(layout, comm.P, N, j) for j in range(comm.P)])
        D = (do * sh.o).sum(axis=-1)
        gq, gk, gv = grads(sh.q, k, v, do, sh.lse, D, sh.pos, kpos, causal, scale)
        return gq, comm.reduce_scatter(gk, SEQ), comm.reduce_scatter(gv, SEQ)
    if schedule == "tokenring":
        D = (do * sh.o).sum(axis=-1)
        dq, dk, dv = grads(sh.q, sh.k, sh.v, do, sh.lse, D, sh.pos, sh.pos, causal, scale)
        q, g_o, lse = sh.q, do, sh.lse
        for s in range(1, comm.P):
            q, g_o, lse, D = (comm.ring_shift(x) for x in (q, g_o, lse, D))  # the query side of rank r − s
            gq, gk, gv = grads(q, sh.k, sh.v, g_o, lse, D, _ring_positions(comm, layout, N, s), sh.pos, causal, scale)
            dk, dv = dk + gk, dv + gv  # K/V stay: their gradients accumulate in place
            dq = dq + comm.ring_shift(gq, -s)  # the partial dQ back to its owner; ours from r + s
        return dq, dk, dv
    if schedule == "ulysses":
        kp = sh.kept
        dO = comm.all_to_all(do, HEADS, SEQ)
        full = np.arange(N)
        gq, gk, gv = grads(kp["q"], kp["k"], kp["v"], dO, kp["lse"], (dO * kp["o"]).sum(axis=-1), full, full, causal, scale)
        return tuple(comm.all_to_all(x, SEQ, HEADS) for x in (gq, gk, gv))  # type: ignore[return-value]
    if schedule == "attention2d":
        row, col = _grid(comm)
        D = (do * sh.o).sum(axis=-1)
        q, g_o = comm.group_all_gather(sh.q, SEQ, row), comm.group_all_gather(do, SEQ, row)
        lse, D = comm.group_all_gather(sh.lse, SEQ, row), comm.group_all_gather(D, SEQ, row)
        k, v = comm.group_all_gather(sh.k, SEQ, col), comm.group_all_gather(sh.v, SEQ, col)
        qpos = np.concatenate([dist.rows_of("grid", comm.P, N, j) for j in row])
        kpos = np.concatenate([dist.kv_rows_of("grid", comm.P, N, j) for j in col])
        gq, gk, gv = grads(q, k, v, g_o, lse, D, qpos, kpos, causal, scale)
        add = lambda a, b: tuple(x + y for x, y in zip(a, b, strict=True))  # noqa: E731
        (dq,) = comm.group_reduce_scatter((gq,), SEQ, row, add)
        dk, dv = comm.group_reduce_scatter((gk, gv), SEQ, col, add)
        return dq, dk, dv
    if schedule == "hybrid":
        kp = sh.kept
        dO = comm.group_all_to_all(do, HEADS, SEQ, intra)
        g = _ring_backward(comm, kp["q"], kp["k"], kp["v"], dO, kp["o"], kp["lse"], _group_rows(comm, N, intra, 0),
                           lambda s: _group_rows(comm, N, intra, s), comm.P // intra, intra, causal, scale)
        return tuple(comm.group_all_to_all(x, SEQ, HEADS, intra) for x in g)  # type: ignore[return-value]
    raise InvalidParameter("schedule", schedule, "one of " + ", ".join(dist.SCHEDULES))


@dataclass(frozen=True)
class CPResult:
    """One simulated run: words sent and received per rank (forward, backward), per link, the formula's per-rank
    words, the causal work per rank, and the outputs' relative errors against the float64 reference."""

    schedule: str
    P: int
    sent: dict[str, list[int]]
    received: dict[str, list[int]]
    links: dict[str, dict[tuple[int, int], int]]
    formula: dict[str, int]
    pairs: list[int]
    errors: dict[str, float]

    def as_dict(self) -> dict[str, Any]:
        return {
            "schedule": self.schedule, "P": self.P, "sent": self.sent, "received": self.received,
            "links": {k: {f"{a}->{b}": w for (a, b), w in v.items()} for k, v in self.links.items()},
            "formula": self.formula, "pairs": self.pairs, "errors": self.errors,
            "measured_equals_formula": all(x == self.formula[k] for k, xs in self.sent.items() for x in xs)
            and all(x == self.formula[k] for k, xs in self.received.items() for x in xs),
        }


def inputs(*, batch: int, heads: int, kv_heads: int, N: int, d: int, dv: int, seed: int) -> dict[str, np.ndarray]:
    """Random Q, K, V, dO (float64, standard normal), the same for the simulation and the gloo run."""
    rng = np.random.default_rng(seed)
    return {"Q": rng.standard_normal((batch, heads, N, d)), "K": rng.standard_normal((batch, kv_heads, N, d)),
            "V": rng.standard_normal((batch, kv_heads, N, dv)), "dO": rng.standard_normal((batch, heads, N, dv))}


def rank_program(schedule: str, N: int, causal: bool, scale: float, backward_too: bool, intra: int = 1):
    """The code one rank runs: forward (and backward), returning its outputs and its counts after each pass."""

    def program(comm: Comm, sh: Shard, do: np.ndarray) -> dict[str, Any]:
        forward(schedule, comm, sh, N, causal, scale, intra)
        out: dict[str, Any] = {"O": sh.o, "forward": (comm.sent, comm.received, dict(comm.links))}
        if backward_too:
            out["dQ"], out["dK"], out["dV"] = backward(schedule, comm, sh, do, N, causal, scale, intra)
            out["backward"] = (comm.sent - out["forward"][0], comm.received - out["forward"][1],
                               {j: w - out["forward"][2].get(j, 0) for j, w in comm.links.items()})
        return out

    return program


def shard(x: np.ndarray, rows: list[int]) -> np.ndarray:
    return np.ascontiguousarray(x[:, :, rows])


def make_shard(x: dict[str, np.ndarray], layout: str, P: int, N: int, r: int) -> Shard:
    """Rank r's inputs under ``layout``: its query rows of Q, its K/V rows of K and V (the same rows but in the grid
    layout, bounds.distributed.kv_rows_of)."""
    rows, kv = dist.rows_of(layout, P, N, r), dist.kv_rows_of(layout, P, N, r)
    return Shard(shard(x["Q"], rows), shard(x["K"], kv), shard(x["V"], kv), np.asarray(rows))


def distributed(schedule: str, *, P: int, N: int, d: int, heads: int = 1, kv_heads: int | None = None,
                dv: int | None = None, batch: int = 1, causal: bool = False, backward: bool = False,
                seed: int = 0, intra: int | None = None) -> CPResult:
    """Run ``schedule`` on a P-device machine (threads, NumPy, float64), forward and with ``backward`` the backward
    too; check the outputs against the one-device float64 reference and return the counts beside the formula."""
    kv_heads = heads if kv_heads is None else kv_heads
    dv = d if dv is None else dv
    dist.check(schedule, P=P, N=N, heads=heads, kv_heads=kv_heads, batch=batch, intra=intra)
    if batch * heads * N * max(d, dv) > NUMERIC_MAX_WORDS or batch * heads * N * N > NUMERIC_MAX_PAIRS:
        raise InvalidParameter("N", N, f"batch·heads·N·max(d, dv) <= {NUMERIC_MAX_WORDS} and batch·heads·N² <= "
                               f"{NUMERIC_MAX_PAIRS} for a simulated run (it forms the N×N reference); the formulas "
                               "take any size")
    x = inputs(batch=batch, heads=heads, kv_heads=kv_heads, N=N, d=d, dv=dv, seed=seed)
    scale = default_scale(d, None)
    layout = dist.SCHEDULES[schedule].layout
    rows = [dist.rows_of(layout, P, N, r) for r in range(P)]
    program = rank_program(schedule, N, causal, scale, backward, intra or 1)
    cl = Cluster(P)
    res = cl.run(lambda c: program(c, make_shard(x, layout, P, N, c.rank), shard(x["dO"], rows[c.rank])))
    passes = ("forward", "backward") if backward else ("forward",)
    sent = {p: [res[r][p][0] for r in range(P)] for p in passes}
    received = {p: [res[r][p][1] for r in range(P)] for p in passes}
    links = {p: {(r, j): w for r in range(P) for j, w in res[r][p][2].items() if w} for p in passes}
    formula = dist.per_device(schedule, P=P, N=N, d=d, dv=dv, heads=heads, kv_heads=kv_heads, batch=batch, intra=intra)
    errors = check_outputs(x, res, rows, [dist.kv_rows_of(layout, P, N, r) for r in range(P)], causal, backward)
    pairs = [dist.pairs(schedule, P=P, N=N, heads=heads, causal=causal, r=r, batch=batch, intra=intra) for r in range(P)]
    return CPResult(schedule, P, sent, received, links, {p: formula[p] for p in passes}, pairs, errors)


def assemble(parts: list[np.ndarray], rows: list[list[int]], N: int) -> np.ndarray:
    """The global array from each rank's rows."""
    out = np.zeros(parts[0].shape[:2] + (N,) + parts[0].shape[3:])
    for p, rw in zip(parts, rows, strict=True):
        out[:, :, rw] = p
    return out


def check_outputs(x: dict[str, np.ndarray], res: list[dict[str, Any]], rows: list[list[int]], kv_rows: list[list[int]],
                  causal: bool, backward: bool) -> dict[str, float]:
    """Relative errors of O (and dQ, dK, dV) against the float64 one-device reference (dK, dV at the K/V rows)."""
    N = x["Q"].shape[2]
    O_ref, _ = attention4_saved(x["Q"], x["K"], x["V"], causal)
    errs = {"O": rel_error(assemble([r["O"] for r in res], rows, N), O_ref)}
    if backward:
        refs = attention4_backward(x["Q"], x["K"], x["V"], x["dO"], causal)
        for name, ref in zip(("dQ", "dK", "dV"), refs, strict=True):
            errs[name] = rel_error(assemble([r[name] for r in res], kv_rows if name in ("dK", "dV") else rows, N), ref)
    return errs


#: a simulated run also forms the N×N reference of every head: b·H·N² ≤ 2²⁴ (the CLI simulates below this)
SIMULATE_MAX_PAIRS = 2**24


def plan(schedule: str, *, P: int, N: int, d: int, heads: int = 1, kv_heads: int | None = None,
         dv: int | None = None, batch: int = 1, causal: bool = False, backward: bool = False, dtype: str = "bf16",
         link: str = "nvlink4", gpu: str = "h100", simulate: bool | None = None, seed: int = 0,
         intra: int | None = None) -> dict[str, Any]:
    """Everything ``attnio distributed`` prints, as data: the formula's words and bytes per device and pass, the
    causal work per device, the times on ``link`` and ``gpu`` (communication: bytes ÷ the link's one-way rate;
    computation: pairs × FLOPs per pair ÷ the GPU's dense peak), the ring's overlap condition, and (``simulate``,
    default: when b·H·N² ≤ 2²⁴) the counts measured on the simulated machine beside the formula.

    >>> p = plan("ring", P=8, N=32768, d=128, heads=32, kv_heads=8, causal=True)
    >>> p["formula_words"]["forward"], p["formula_bytes"]["forward"], p["overlap"]["hidden_fwd"], p["simulated"]
    (58720256, 117440512, True, False)
    """
    from attnio.core.workload import DTYPES, GPUS

    kv_heads = heads if kv_heads is None else kv_heads
    dv = d if dv is None else dv
    dist.check(schedule, P=P, N=N, heads=heads, kv_heads=kv_heads, batch=batch, intra=intra)
    lk = dist.link(link)
    if dtype not in DTYPES:
        raise InvalidParameter("dtype", dtype, "one of " + ", ".join(DTYPES))
    if gpu not in GPUS:
        raise InvalidParameter("gpu", gpu, "one of " + ", ".join(GPUS))
    for name, val in (("d", d), ("dv", dv)):
        check_int(name, val, min=1, max=2**20)
    bpw, F = DTYPES[dtype], GPUS[gpu].peak_flops(dtype)
    passes = ("forward", "backward") if backward else ("forward",)
    words = {p: w for p, w in dist.per_device(schedule, P=P, N=N, d=d, dv=dv, heads=heads, kv_heads=kv_heads,
                                              batch=batch, intra=intra).items() if p in passes}
    work = [dist.pairs(schedule, P=P, N=N, heads=heads, causal=causal, r=r, batch=batch, intra=intra) for r in range(P)]
    flops_per_pair = {"forward": 2 * (d + dv), "backward": 2 * (3 * d + 2 * dv)}
    times = {p: {"comm_s": words[p] * bpw / lk.bytes_per_s, "compute_s_max": max(work) * flops_per_pair[p] / F}
             for p in passes}
    out: dict[str, Any] = {
        "schedule": schedule, "layout": dist.SCHEDULES[schedule].layout, "source": dist.SCHEDULES[schedule].source,
        "P": P, "intra": intra, "N": N, "d": d, "dv": dv, "heads": heads, "kv_heads": kv_heads, "batch": batch, "causal": causal,
        "dtype": dtype, "bytes_per_word": bpw, "link": {"name": lk.name, "bytes_per_s": lk.bytes_per_s, "source": lk.source},
        "gpu": gpu, "peak_flops": F, "formula_words": words, "formula_bytes": {p: w * bpw for p, w in words.items()},
        "provenance": dist.PROVENANCE, "pairs_per_device": work, "imbalance_max_over_mean": max(work) * P / sum(work),
        "times": times, "overlap": None, "simulated": False,
        # DIST-QK needs every S_ij (no mask): under a causal mask it does not hold (docs/bounds/distributed.md)
        "lower_bound": None if causal else dist.lower_bound_entry(words, P=P, N=N, d=d),
    }
    if schedule in ("ring", "zigzag", "striped"):
        out["overlap"] = dist.overlap(N=N, P=P, d=d, dv=dv, heads=heads, kv_heads=kv_heads, bytes_per_word=bpw,
                                      flops=F, link_name=link, batch=batch)
    small = batch * heads * N * N <= SIMULATE_MAX_PAIRS and batch * heads * N * max(d, dv) <= NUMERIC_MAX_WORDS
    if simulate or (simulate is None and small):
        r = distributed(schedule, P=P, N=N, d=d, dv=dv, heads=heads, kv_heads=kv_heads, batch=batch, causal=causal,
                        backward=backward, seed=seed, intra=intra)
        out.update(simulated=True, measured=r.as_dict())
    return out
