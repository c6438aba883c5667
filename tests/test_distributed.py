"""Context parallelism on the P-device machine (algorithms/cluster.py, algorithms/context_parallel.py): outputs and
gradients equal the float64 one-device reference, every rank's sent and received words equal bounds/distributed.py's
formula, the links used are the schedule's, the causal work per rank equals its closed form, bad input is refused
naming the parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnio.algorithms.cluster import Cluster
from attnio.algorithms.context_parallel import distributed
from attnio.bounds import distributed as dist
from attnio.core.errors import InvalidParameter

RINGS = ("ring", "zigzag", "striped")


@st.composite
def cases(draw: st.DrawFn) -> dict:
    schedule = draw(st.sampled_from(sorted(dist.SCHEDULES)))
    P = draw(st.sampled_from([2, 3, 4]))
    kv = draw(st.sampled_from([1, 2, 4]))
    g = draw(st.sampled_from([1, 2]))
    extra = {}
    if schedule == "ulysses":
        kv = P * draw(st.sampled_from([1, 2]))
    if schedule == "attention2d":
        P = draw(st.sampled_from([4, 9]))
    if schedule == "hybrid":
        P = draw(st.sampled_from([4, 6, 8]))
        extra["intra"] = intra = draw(st.sampled_from([a for a in range(2, P // 2 + 1) if P % a == 0]))
        kv = intra * draw(st.sampled_from([1, 2]))
    parts = 2 * P if dist.SCHEDULES[schedule].layout == "zigzag" else P
    return dict(**extra, schedule=schedule, P=P, N=parts * draw(st.integers(1, 3)), d=draw(st.integers(1, 4)),
                dv=draw(st.integers(1, 4)), heads=kv * g, kv_heads=kv, batch=draw(st.integers(1, 2)),
                causal=draw(st.booleans()), seed=draw(st.integers(0, 9)))


@given(cases())
def test_every_rank_sends_and_receives_the_formula_and_the_outputs_are_exact(c: dict) -> None:
    r = distributed(**c, backward=True)
    f = dist.per_device(c["schedule"], P=c["P"], N=c["N"], d=c["d"], dv=c["dv"], heads=c["heads"],
                        kv_heads=c["kv_heads"], batch=c["batch"], intra=c.get("intra"))
    for p in ("forward", "backward"):
        assert r.sent[p] == [f[p]] * c["P"]
        assert r.received[p] == [f[p]] * c["P"]
        assert sum(r.links[p].values()) == c["P"] * f[p]
    assert max(r.errors.values()) < 1e-10, r.errors


@given(cases())
def test_links_are_the_schedules_own(c: dict) -> None:
    r = distributed(**c, backward=True)
    P = c["P"]
    for p, links in r.links.items():
        if c["schedule"] == "ulysses":  # all-to-all: every ordered pair, an equal share each
            expect = {(a, b): r.formula[p] // (P - 1) for a in range(P) for b in range(P) if a != b}
        elif c["schedule"] == "tokenring":  # the query side to r + 1 (P − 1 times); partial s back to r − s
            rows = c["batch"] * c["heads"] * (c["N"] // P)
            fwd = p == "forward"
            q, part = rows * (c["d"] if fwd else (c["d"] + c["dv"] + 2)), rows * ((c["dv"] + 1) if fwd else c["d"])
            expect = {}
            for a in range(P):
                expect[(a, (a + 1) % P)] = (P - 1) * q
                for s in range(1, P):
                    expect[(a, (a - s) % P)] = expect.get((a, (a - s) % P), 0) + part
        elif c["schedule"] == "attention2d":  # rings along grid rows and grid columns only
            q = math.isqrt(P)
            nxt = {(a, (a // q) * q + (a % q + 1) % q) for a in range(P)} | {(a, (a + q) % P) for a in range(P)}
            assert set(links) == nxt, links
            continue
        elif c["schedule"] == "hybrid":  # all-to-all inside each group of P_a ranks, the ring from r to r + P_a
            Pa = c["intra"]
            assert all(b // Pa == a // Pa or b == (a + Pa) % P for a, b in links), links
            assert {(a, (a + Pa) % P) for a in range(P)} <= set(links)
            continue
        else:  # ring shifts and ring collectives: only r -> r + 1, the whole volume
            expect = {(a, (a + 1) % P): r.formula[p] for a in range(P)}
        assert links == expect


def test_ring_forward_count_by_hand() -> None:
    """P = 4, N = 16, d = d_v = 2, H = 2, H_kv = 1: a K/V shard is 4 rows × (2 + 2) = 16 words; 3 shifts forward;
    backward 3 K/V shifts and 4 dK/dV shifts: 7 × 16 = 112. Ulysses at P = 2, N = 8, H = H_kv = 2: half of
    Q, K, V, O's 4·2·2 words each: 32."""
    assert dist.per_device("ring", P=4, N=16, d=2, heads=2, kv_heads=1) == {"forward": 48, "backward": 112}
    assert dist.per_device("allgather", P=4, N=16, d=2, heads=2, kv_heads=1) == {"forward": 48, "backward": 96}
    assert dist.per_device("ulysses", P=2, N=8, d=2, heads=2, kv_heads=2) == {"forward": 32, "backward": 32}


@given(st.sampled_from(sorted(set(dist.SCHEDULES) - {"hybrid", "attention2d"})), st.sampled_from([2, 4, 8]), st.integers(1, 4), st.booleans(),
       st.integers(1, 2))
def test_pairs_per_rank_equal_a_brute_force_count(schedule: str, P: int, k: int, causal: bool, b: int) -> None:
    """(hybrid takes intra and attention2d a square P: their own tests below)"""
    N = 2 * P * k
    H = P * 2
    got = [dist.pairs(schedule, P=P, N=N, heads=H, causal=causal, r=r, batch=b) for r in range(P)]
    if schedule == "ulysses":
        per_head = sum(i + 1 for i in range(N)) if causal else N * N
        assert got == [b * (H // P) * per_head] * P
    else:
        rows = [dist.rows_of(dist.SCHEDULES[schedule].layout, P, N, r) for r in range(P)]
        assert sorted(i for rw in rows for i in rw) == list(range(N))
        per_key = schedule == "tokenring"  # K/V stay: a rank computes every query against its own keys
        assert got == [b * H * sum(((N - i) if per_key else (i + 1)) if causal else N for i in rw) for rw in rows]
    assert sum(got) == b * H * (N * (N + 1) // 2 if causal else N * N)


@pytest.mark.parametrize(("P", "Pa"), [(4, 2), (6, 3), (8, 2), (8, 4)])
def test_hybrid_pairs_equal_a_brute_force_count(P: int, Pa: int) -> None:
    """A hybrid rank attends H/P_a heads of its group's chunk of P_a·n consecutive rows against all keys."""
    N, H = 4 * P, 2 * Pa
    S = N // (P // Pa)
    for causal in (False, True):
        got = [dist.pairs("hybrid", P=P, N=N, heads=H, causal=causal, r=r, intra=Pa) for r in range(P)]
        want = [(H // Pa) * sum((i + 1) if causal else N for i in range((r // Pa) * S, (r // Pa + 1) * S)) for r in range(P)]
        assert got == want
        assert sum(got) == H * (N * (N + 1) // 2 if causal else N * N)


@pytest.mark.parametrize("P", [4, 9, 16])
def test_attention2d_pairs_equal_a_brute_force_count(P: int) -> None:
    """Grid cell (a, b) attends query block a (its grid row's query chunks) against key block b (its grid column's
    K/V chunks)."""
    q, N, H = math.isqrt(P), 2 * P, 3
    for causal in (False, True):
        got = [dist.pairs("attention2d", P=P, N=N, heads=H, causal=causal, r=r) for r in range(P)]
        want = []
        for r in range(P):
            a, b = divmod(r, q)
            qs = [i for j in range(q) for i in dist.rows_of("grid", P, N, a * q + j)]
            ks = [k for j in range(q) for k in dist.kv_rows_of("grid", P, N, j * q + b)]
            want.append(H * sum(1 for i in qs for k in ks if k <= i or not causal))
        assert got == want
        assert sum(got) == H * (N * (N + 1) // 2 if causal else N * N)


def test_zigzag_balances_the_causal_work_and_the_contiguous_ring_does_not() -> None:
    P, N = 8, 64
    ring = [dist.pairs("ring", P=P, N=N, heads=1, causal=True, r=r) for r in range(P)]
    zig = [dist.pairs("zigzag", P=P, N=N, heads=1, causal=True, r=r) for r in range(P)]
    assert len(set(zig)) == 1
    assert (min(ring), max(ring)) == (36, 7 * 64 + 36)  # n(n+1)/2 and (P−1)n² + n(n+1)/2 at n = 8: 13.4× apart


@pytest.mark.parametrize(("kw", "param"), [
    (dict(schedule="ulysses", P=4, N=16, heads=2, kv_heads=2), "heads"),
    (dict(schedule="ulysses", P=4, N=16, heads=8, kv_heads=2), "kv_heads"),
    (dict(schedule="zigzag", P=4, N=12, heads=1, kv_heads=1), "N"),
    (dict(schedule="ring", P=3, N=10, heads=1, kv_heads=1), "N"),
    (dict(schedule="ring", P=2, N=8, heads=3, kv_heads=2), "kv_heads"),
    (dict(schedule="tree", P=2, N=8, heads=1, kv_heads=1), "schedule"),
    (dict(schedule="ring", P=1, N=8, heads=1, kv_heads=1), "P"),
    (dict(schedule="hybrid", P=8, N=16, heads=4, kv_heads=4), "intra"),
    (dict(schedule="hybrid", P=8, N=16, heads=4, kv_heads=4, intra=3), "intra"),
    (dict(schedule="hybrid", P=8, N=16, heads=4, kv_heads=4, intra=8), "intra"),
    (dict(schedule="hybrid", P=8, N=16, heads=4, kv_heads=2, intra=4), "kv_heads"),
    (dict(schedule="ring", P=8, N=16, heads=4, kv_heads=2, intra=4), "intra"),
    (dict(schedule="attention2d", P=8, N=16, heads=4, kv_heads=2), "P"),
])
def test_bad_input_names_the_parameter(kw: dict, param: str) -> None:
    with pytest.raises(InvalidParameter) as e:
        dist.check(**kw)
    assert e.value.name == param
    assert str(e.value).startswith(f"{param}=")


def test_a_failing_rank_stops_the_others_instead_of_hanging() -> None:
    def rank(c):
        if c.rank == 1:
            raise ValueError("boom")
        return c.ring_shift(np.zeros(2))

    with pytest.raises(ValueError, match="boom"):
        Cluster(3, timeout_s=30).run(rank)


def test_a_rank_computes_only_on_what_it_holds() -> None:
    """Each rank's inputs are its own rows: ring rank r starts from rows_of(r) only (the schedule reaches other rows
    through ring_shift, counted); a schedule that skipped the shifts would see only its own keys and be wrong."""
    r = distributed("ring", P=2, N=4, d=1, causal=False)
    assert r.sent["forward"] == [4, 4] and r.errors["O"] < 1e-12


def test_overlap_condition_matches_the_times() -> None:
    kw = dict(P=8, d=128, dv=128, heads=32, kv_heads=8, bytes_per_word=2, flops=989.4e12, link_name="nvlink4")
    th = dist.overlap(N=8 * 1024, **kw)["threshold_rows_fwd"]
    for n in (int(th) - 1, int(th) + 1, 64, 4096):
        o = dist.overlap(N=8 * n, **kw)
        assert o["hidden_fwd"] == (n >= th)
        assert o["hidden_bwd"] == (n >= o["threshold_rows_bwd"])
    with pytest.raises(InvalidParameter, match="^link="):
        dist.link("token-ring")


def test_cli_prints_the_formula_and_the_simulated_counts(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from attnio.cli import main

    assert main(["distributed", "--schedule", "zigzag", "--P", "4", "--N", "32", "--d", "4", "--heads", "4",
                 "--kv-heads", "2", "--causal", "--backward", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    f = dist.per_device("zigzag", P=4, N=32, d=4, heads=4, kv_heads=2)
    assert out["formula_words"] == f and out["simulated"] is True
    assert out["measured"]["measured_equals_formula"] is True
    assert out["measured"]["sent"] == {"forward": [f["forward"]] * 4, "backward": [f["backward"]] * 4}
    assert out["formula_bytes"]["forward"] == 2 * f["forward"]  # bf16 by default
    assert out["imbalance_max_over_mean"] == 1.0
    assert main(["distributed", "--schedule", "ring", "--P", "8", "--N", "32768", "--d", "128", "--heads", "32",
                 "--kv-heads", "8", "--causal"]) == 0
    text = capsys.readouterr().out
    assert "58,720,256 words" in text and "hidden" in text and "not run at this size" in text


@pytest.mark.parametrize(("argv", "line"), [
    (["--schedule", "ulysses", "--P", "8", "--N", "64", "--d", "8", "--heads", "4"], "heads=4 is invalid"),
    (["--schedule", "ring", "--P", "8", "--N", "60", "--d", "8"], "N=60 is invalid"),
    (["--schedule", "ring", "--P", "8", "--N", "64", "--d", "8", "--link", "nvlink9"], "link='nvlink9' is invalid"),
    (["--schedule", "ring", "--P", "1", "--N", "64", "--d", "8"], "P=1 is invalid"),
    (["--schedule", "zigzag", "--P", "4", "--N", "12", "--d", "8"], "N=12 is invalid: valid range is a multiple of 8"),
    (["--schedule", "hybrid", "--P", "8", "--N", "16", "--d", "8", "--heads", "4"], "intra=None is invalid"),
    (["--schedule", "ring", "--P", "8", "--N", "16", "--d", "8", "--intra", "2"], "intra=2 is invalid"),
    (["--schedule", "hybrid", "--P", "8", "--N", "16", "--d", "8", "--intra", "2"], "kv_heads=1 is invalid"),
])
def test_cli_bad_input_is_one_line_and_exit_2(argv: list[str], line: str, capsys: pytest.CaptureFixture[str]) -> None:
    from attnio.cli import main

    assert main(["distributed", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and line in err
