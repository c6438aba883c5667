"""An L2 replay of FlashAttention-1's own schedule (Dao et al. 2022, arXiv 2205.14135: Algorithm 1 forward,
Algorithm 4 backward), as attnio's ``flash1`` and ``flash1-bwd`` count it, through the same scheduler and cache
model as the FA-2 replays (:mod:`attnio.algorithms.l2_schedule`, :class:`attnio.algorithms.l2_cache.SectoredLRU`;
docs/dram.md#flashattention-1s-own-schedule).

One *program* (thread block) per (sequence, query head), as FA-1 launches it: it runs the whole loop nest of its
head, so its re-reads of O, ℓ, m, Q (and in the backward dQ, O, dO) go through the L2. Steps, forward::

    write O ← 0, ℓ ← 0, m ← −∞ (every B_r-row tile)                 # step 0 (line 2)
    for j in 1..T_c:                                                # K/V blocks outermost (line 5)
        load K_j, V_j                                               # one step (line 6)
        for i in 1..T_r:
            load Q_i, O_i, ℓ_i, m_i; write O_i, ℓ_i, m_i            # one step (lines 8-13)

backward (Algorithm 4, as :mod:`attnio.algorithms.flash1_bwd`)::

    write dQ ← 0 (B_r-row tiles), dK ← 0, dV ← 0 (B_c-row tiles)    # step 0 (line 5)
    for j in 1..T_c:
        load K_j, V_j                                               # one step (line 7)
        for i in 1..T_r:
            load Q_i, O_i, dO_i, dQ_i, ℓ_i, m_i; write dQ_i         # one step (lines 10-21)
        write dK_j, dV_j                                            # one step (line 24)

Blocks: attnio's published-rule tilings (:class:`attnio.algorithms.flash1.Flash1Tiling` and
:class:`attnio.algorithms.flash1_bwd.Flash1BwdTiling`, ``default(N, d, M)``): B_c = ⌈M/(4d)⌉, B_r = min(B_c, d),
M the workload's fast memory in words (the paper's 192 KiB of SRAM per SM on the A100 preset: 98,304 fp16 words,
B_c = 384, B_r = 64 at d = 64); a tile is capped at N rows. Every array moves in the element type, ℓ and m
included (attnio's count keeps them in the element type), so the replay's requested bytes are attnio's exact
``flash1`` / ``flash1-bwd`` counts × bytes per word × query heads (tests/test_l2_flash1.py). Layouts:
(batch, seq, heads, width) for Q, K, V, O, dO, dQ, dK, dV; (batch, heads, seq) for ℓ and m. Unmasked only (the
figure's setting), one K/V head per query head, N_q = N_kv; other workloads are refused.

Worked example: one head, N = 256, d = 64 fp16, M = 98,304 (B_c = 384 capped at 256: T_c = 1; B_r = 64:
T_r = 4), one SM: 1 + 1 + 4 steps. Requested: Q, K, V read once (32 KiB each), O written twice and read once
(96 KiB), ℓ and m (512 B each) twice written and once read (1.5 KiB each): 199,680 bytes, = (reads
256·128 + 256·130, writes 2·256·66) words × 2. With a 40 MiB L2 every O, ℓ, m re-read hits (the initialising
write left them valid): DRAM reads are Q, K, V once.

>>> from attnio.core.workload import Workload
>>> w = Workload.build(N=256, d=64, dtype="fp16", gpu="a100")
>>> r = replay_flash1(w, "a100", sms=1)
>>> r.requested_bytes, r.dram_read_bytes, r.tensors["O"].hit_rate
(199680, 98304, 1.0)
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from attnio.algorithms.l2 import _setup, _Tiles
from attnio.algorithms.l2_schedule import L2Result, launch_order, replay_launches, sync_skew
from attnio.bounds.dram import L2Preset
from attnio.core.errors import InvalidParameter
from attnio.core.workload import Workload

__all__ = ["FA1_BWD_TENSORS", "FA1_TENSORS", "fa1_blocks", "replay_flash1", "replay_flash1_backward"]

FA1_TENSORS = ("Q", "K", "V", "O", "ell", "m")
FA1_BWD_TENSORS = ("Q", "K", "V", "O", "dO", "ell", "m", "dQ", "dK", "dV")


def fa1_blocks(w: Workload, backward: bool = False) -> tuple[int, int]:
    """(B_r, B_c) of attnio's published-rule FA-1 tiling at the workload's M (B_c = ⌈M/4d⌉, B_r = min(B_c, d)).

    >>> from attnio.core.workload import Workload
    >>> fa1_blocks(Workload.build(batch=64, heads=16, N=1024, d=64, dtype="fp16", gpu="a100"))
    (64, 384)
    """
    from attnio.algorithms.flash1 import Flash1Tiling
    from attnio.algorithms.flash1_bwd import Flash1BwdTiling

    t = (Flash1BwdTiling if backward else Flash1Tiling).default(w.Nq, w.d, w.M, w.dv)
    return t.B_r, t.B_c


def _prepare(w: Workload, gpu: str | L2Preset, occupancy: int, sms: int | None, l2_bytes: int | None,
             backward: bool) -> tuple:
    if isinstance(w, Workload) and w.causal:
        raise InvalidParameter("causal", True, "False: the FA-1 replay is unmasked (FlashAttention Figure 2's setting)")
    if isinstance(w, Workload) and (w.groups != 1 or w.Nq != w.Nkv):
        raise InvalidParameter("workload", f"groups {w.groups}, N_q {w.Nq}, N_kv {w.Nkv}",
                               "one K/V head per query head and N_q = N_kv (the FA-1 replay's tested case)")
    B_r, B_c = fa1_blocks(w, backward) if isinstance(w, Workload) else (1, 1)
    p, B_r, B_c, slots, cap = _setup(gpu, w, B_r, B_c, "qhb", occupancy, sms, l2_bytes, "block")
    return p, B_r, B_c, slots, cap


def replay_flash1(
    w: Workload, gpu: str | L2Preset, *, occupancy: int = 1, sms: int | None = None, l2_bytes: int | None = None,
    sync: str = "lockstep", skew: float = 1.0,
) -> L2Result:
    """Replay FA-1's forward (Algorithm 1, one program per (sequence, query head), the module docstring) through
    the L2 of ``gpu``; programs launched head fastest, then sequence; ``sms``, ``l2_bytes``, ``occupancy``,
    ``sync`` and ``skew`` as :func:`attnio.algorithms.l2.replay`."""
    t0 = time.perf_counter()
    p, B_r, B_c, slots, cap = _prepare(w, gpu, occupancy, sms, l2_bytes, False)
    bpw = w.bytes_per_word
    H, Hkv, g, Nq, Nkv, B = w.heads, w.kv_heads, w.groups, w.Nq, w.Nkv, w.batch
    Rq, Rv = w.d * bpw, w.dv * bpw
    line = p.line
    exact = all(x % line == 0 for x in (Rq, Rv, min(B_r, Nq) * bpw, Nq * bpw))
    # FA1_TENSORS: Q K V O ell m
    tiles = _Tiles({0: ("rows", H, Nq, Rq), 1: ("rows", Hkv, Nkv, Rq), 2: ("rows", Hkv, Nkv, Rv),
                    3: ("rows", H, Nq, Rv), 4: ("stat", H, Nq, bpw), 5: ("stat", H, Nq, bpw)},
                   {0: B_r, 1: B_c, 2: B_c, 3: B_r, 4: B_r, 5: B_r}, B, line, p.sector)
    qs, ks = range(0, Nq, B_r), range(0, Nkv, B_c)

    def program(pid: int, pos: int) -> Iterator[tuple]:
        z, h = divmod(pid, H)
        hk = h // g
        yield tuple(tiles(t, z, h, r0, False, True) for t in (3, 4, 5) for r0 in qs)
        for c0 in ks:
            yield tiles(1, z, hk, c0, True, False), tiles(2, z, hk, c0, True, False)
            for r0 in qs:
                yield (tuple(tiles(t, z, h, r0, True, False) for t in (0, 3, 4, 5))
                       + tuple(tiles(t, z, h, r0, False, True) for t in (3, 4, 5)))

    sk = sync_skew(sync, skew)
    acc, programs = replay_launches(p, cap, slots, [(launch_order(1, H, B, "qhb"), program)], FA1_TENSORS, None, sk)
    return L2Result(p.name, cap, p.partitions, slots, programs, "qhb", None, exact, acc.traffic(),
                    acc.compulsory * p.sector, time.perf_counter() - t0, sync, sk)


def replay_flash1_backward(
    w: Workload, gpu: str | L2Preset, *, occupancy: int = 1, sms: int | None = None, l2_bytes: int | None = None,
    sync: str = "lockstep", skew: float = 1.0,
) -> L2Result:
    """Replay FA-1's backward (Algorithm 4 as :mod:`attnio.algorithms.flash1_bwd` runs it, one program per
    (sequence, query head), the module docstring) on a cold L2; keywords as :func:`replay_flash1`."""
    t0 = time.perf_counter()
    p, B_r, B_c, slots, cap = _prepare(w, gpu, occupancy, sms, l2_bytes, True)
    bpw = w.bytes_per_word
    H, Nq, Nkv, B = w.heads, w.Nq, w.Nkv, w.batch
    Rq, Rv = w.d * bpw, w.dv * bpw
    line = p.line
    exact = all(x % line == 0 for x in (Rq, Rv, min(B_r, Nq) * bpw, Nq * bpw))
    # FA1_BWD_TENSORS: Q K V O dO ell m dQ dK dV
    rows_q = {0: Rq, 3: Rv, 4: Rv, 7: Rq}
    specs = {t: ("rows", H, Nq, R) for t, R in rows_q.items()}
    specs |= {1: ("rows", H, Nkv, Rq), 2: ("rows", H, Nkv, Rv), 8: ("rows", H, Nkv, Rq), 9: ("rows", H, Nkv, Rv),
              5: ("stat", H, Nq, bpw), 6: ("stat", H, Nq, bpw)}
    tiles = _Tiles(specs, {t: (B_c if t in (1, 2, 8, 9) else B_r) for t in specs}, B, line, p.sector)
    qs, ks = range(0, Nq, B_r), range(0, Nkv, B_c)

    def program(pid: int, pos: int) -> Iterator[tuple]:
        z, h = divmod(pid, H)
        yield (tuple(tiles(7, z, h, r0, False, True) for r0 in qs)
               + tuple(tiles(t, z, h, c0, False, True) for t in (8, 9) for c0 in ks))
        for c0 in ks:
            yield tiles(1, z, h, c0, True, False), tiles(2, z, h, c0, True, False)
            for r0 in qs:
                yield tuple(tiles(t, z, h, r0, True, False) for t in (0, 3, 4, 7, 5, 6)) + (tiles(7, z, h, r0, False, True),)
            yield tiles(8, z, h, c0, False, True), tiles(9, z, h, c0, False, True)

    sk = sync_skew(sync, skew)
    acc, programs = replay_launches(p, cap, slots, [(launch_order(1, H, B, "qhb"), program)], FA1_BWD_TENSORS, None,
                                    sk)
    return L2Result(p.name, cap, p.partitions, slots, programs, "qhb", None, exact, acc.traffic(),
                    acc.compulsory * p.sector, time.perf_counter() - t0, sync, sk)
