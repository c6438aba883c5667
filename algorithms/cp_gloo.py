"""The context-parallel schedules run for real: P processes on this machine, torch.distributed with the gloo backend
over loopback TCP, each rank running :func:`attnio.algorithms.context_parallel.rank_program` (the same code the
simulated machine runs) with a communicator whose moves are gloo's. Bytes are counted at the collectives, from the
tensors handed to gloo: a ring shift (``isend`` / ``irecv``) counts the tensor sent and the tensor received;
``all_gather`` counts (P − 1) × its input each way, ``reduce_scatter`` (P − 1) × its output each way and
``all_to_all`` every slice bound for (or received from) another rank: the volume the collective's definition moves
between ranks, whatever algorithm gloo uses inside (docs/distributed.md#gloo).

torch is optional: it is imported inside the functions. :func:`run_gloo` starts the processes
(``torch.multiprocessing``, spawn), waits for them with a deadline and kills any still running when it passes, so no
process outlives the call.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from typing import Any

import numpy as np

from attnio.algorithms import context_parallel as cp
from attnio.algorithms.cluster import Comm
from attnio.algorithms.reference import default_scale
from attnio.bounds import distributed as dist
from attnio.core.errors import AttnioError


class GlooComm(Comm):
    """A rank's communicator over torch.distributed (gloo); ``bytes_sent`` and ``bytes_received`` count the tensors
    handed to gloo (float64: 8 bytes a word)."""

    def __init__(self, rank: int, P: int) -> None:
        super().__init__(rank, P)
        self.bytes_sent = 0
        self.bytes_received = 0

    def _totals(self, out: int, inn: int) -> None:
        """Words of a gloo collective: per-rank totals only (gloo routes them itself, so no link is credited)."""
        self.sent += out
        self.received += inn

    def _bytes(self, out: int, inn: int) -> None:
        self.bytes_sent += out
        self.bytes_received += inn

    def _exchange(self, x: np.ndarray, dst: int, src: int) -> np.ndarray:
        import torch
        import torch.distributed as td

        t = torch.from_numpy(np.ascontiguousarray(x))
        y = torch.empty_like(t)
        ops = [td.P2POp(td.isend, t, dst), td.P2POp(td.irecv, y, src)]
        for req in td.batch_isend_irecv(ops):
            req.wait()
        self._bytes(t.numel() * t.element_size(), y.numel() * y.element_size())
        return y.numpy()

    def all_gather(self, x: np.ndarray, axis: int) -> np.ndarray:
        import torch
        import torch.distributed as td

        t = torch.from_numpy(np.ascontiguousarray(x))
        outs = [torch.empty_like(t) for _ in range(self.P)]
        td.all_gather(outs, t)
        b = t.numel() * t.element_size()
        self._bytes((self.P - 1) * b, (self.P - 1) * b)
        self._totals((self.P - 1) * x.size, (self.P - 1) * x.size)
        return np.concatenate([o.numpy() for o in outs], axis=axis)

    def reduce_scatter(self, x: np.ndarray, axis: int) -> np.ndarray:
        import torch
        import torch.distributed as td

        chunks = [torch.from_numpy(np.ascontiguousarray(c)) for c in np.split(x, self.P, axis=axis)]
        out = torch.empty_like(chunks[self.rank])
        td.reduce_scatter(out, chunks)
        b = out.numel() * out.element_size()
        self._bytes((self.P - 1) * b, (self.P - 1) * b)
        self._totals((self.P - 1) * out.numel(), (self.P - 1) * out.numel())
        return out.numpy()

    def _all_to_all(self, slices: list[np.ndarray]) -> list[np.ndarray]:
        import torch
        import torch.distributed as td

        ins = [torch.from_numpy(s) for s in slices]
        outs = [torch.empty_like(t) for t in ins]
        td.all_to_all(outs, ins)
        others = [j for j in range(self.P) if j != self.rank]
        self._bytes(sum(ins[j].numel() * ins[j].element_size() for j in others),
                    sum(outs[j].numel() * outs[j].element_size() for j in others))
        return [o.numpy() for o in outs]


def _worker(rank: int, P: int, port: int, jobs: list[dict[str, Any]], outdir: str, timeout_s: float) -> None:
    """One rank: join the gloo group, run each job's schedule on its shard, write its outputs and counts to
    ``outdir`` (one file per job, written atomically)."""
    import datetime

    import torch
    import torch.distributed as td

    torch.set_num_threads(1)
    td.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=P,
                          timeout=datetime.timedelta(seconds=timeout_s))
    try:
        for i, job in enumerate(jobs):
            x = cp.inputs(batch=job["batch"], heads=job["heads"], kv_heads=job["kv_heads"], N=job["N"], d=job["d"],
                          dv=job["dv"], seed=job["seed"])
            rows = dist.rows_of(dist.SCHEDULES[job["schedule"]].layout, P, job["N"], rank)
            comm = GlooComm(rank, P)
            scale = default_scale(job["d"], None)
            sh = cp.make_shard(x, dist.SCHEDULES[job["schedule"]].layout, P, job["N"], rank)
            cp.forward(job["schedule"], comm, sh, job["N"], job["causal"], scale, job["intra"] or 1)
            # bytes sent, received and words sent, received: after the forward, then at the end
            counts = [comm.bytes_sent, comm.bytes_received, comm.sent, comm.received]
            arrays = {"O": sh.o}
            if job["backward"]:
                g = cp.backward(job["schedule"], comm, sh, cp.shard(x["dO"], rows), job["N"], job["causal"], scale,
                                job["intra"] or 1)
                arrays.update(zip(("dQ", "dK", "dV"), g, strict=True))
            counts += [comm.bytes_sent, comm.bytes_received, comm.sent, comm.received]
            tmp = os.path.join(outdir, f"job{i}-rank{rank}.tmp.npz")
            np.savez(tmp, counts=np.array(counts, dtype=np.int64), **arrays)
            os.replace(tmp, os.path.join(outdir, f"job{i}-rank{rank}.npz"))  # atomic: whole or absent
        td.barrier()
    finally:
        td.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def job(schedule: str, *, N: int, d: int, heads: int = 1, kv_heads: int | None = None, dv: int | None = None,
        batch: int = 1, causal: bool = False, backward: bool = False, seed: int = 0, intra: int | None = None
        ) -> dict[str, Any]:
    """One schedule run, as :func:`run_gloo` takes it."""
    return dict(intra=intra, schedule=schedule, N=N, d=d, dv=d if dv is None else dv, heads=heads,
                kv_heads=heads if kv_heads is None else kv_heads, batch=batch, causal=causal, backward=backward, seed=seed)


def run_gloo(jobs: list[dict[str, Any]], *, P: int, timeout_s: float = 300.0) -> list[dict[str, Any]]:
    """Run each job (:func:`job`) on one group of P gloo processes (started once: most of the time is their start);
    return per job the bytes each rank sent and received per pass (counted at the collectives), the words the
    formula gives, and the relative errors of O (and dQ, dK, dV) against torch autograd on the whole sequence. Every
    process is ended before it returns: joined, or killed at the deadline."""
    import torch.multiprocessing as mp

    for j in jobs:
        dist.check(j["schedule"], P=P, N=j["N"], heads=j["heads"], kv_heads=j["kv_heads"], batch=j["batch"], intra=j["intra"])
    with tempfile.TemporaryDirectory(prefix="attnio-gloo-") as outdir:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        ctx = mp.start_processes(_worker, args=(P, free_port(), jobs, outdir, timeout_s), nprocs=P, join=False,
                                 start_method="spawn")
        deadline = time.monotonic() + timeout_s
        try:
            while not ctx.join(timeout=1.0):
                if time.monotonic() > deadline:
                    raise AttnioError(f"the {P} gloo processes did not finish within {timeout_s} s")
        finally:
            for p in ctx.processes:
                if p.is_alive():
                    p.kill()
                p.join(10)
        loaded = [[dict(np.load(os.path.join(outdir, f"job{i}-rank{r}.npz"))) for r in range(P)] for i in range(len(jobs))]
    return [_result(j, P, ranks) for j, ranks in zip(jobs, loaded, strict=True)]


def _result(j: dict[str, Any], P: int, ranks: list[dict[str, np.ndarray]]) -> dict[str, Any]:
    counts = [r["counts"].tolist() for r in ranks]
    arrays = {k: [r[k] for r in ranks] for k in ("O", "dQ", "dK", "dV") if k in ranks[0]}
    N = j["N"]
    layout = dist.SCHEDULES[j["schedule"]].layout
    rows = [dist.rows_of(layout, P, N, r) for r in range(P)]
    kv_rows = [dist.kv_rows_of(layout, P, N, r) for r in range(P)]
    x = cp.inputs(batch=j["batch"], heads=j["heads"], kv_heads=j["kv_heads"], N=N, d=j["d"], dv=j["dv"], seed=j["seed"])
    ref = torch_reference(x, j["causal"])
    formula = dist.per_device(j["schedule"], P=P, N=N, d=j["d"], dv=j["dv"], heads=j["heads"], kv_heads=j["kv_heads"],
                              batch=j["batch"], intra=j["intra"])
    passes = ("forward", "backward") if j["backward"] else ("forward",)
    at = {"forward": [(c[0], c[1], c[2], c[3]) for c in counts],
          "backward": [(c[4] - c[0], c[5] - c[1], c[6] - c[2], c[7] - c[3]) for c in counts]}
    return {
        "job": j, "P": P, "bytes_per_word": 8,
        "bytes_sent": {p: [a[0] for a in at[p]] for p in passes},
        "bytes_received": {p: [a[1] for a in at[p]] for p in passes},
        "words_sent": {p: [a[2] for a in at[p]] for p in passes},
        "words_received": {p: [a[3] for a in at[p]] for p in passes},
        "formula_words": {p: formula[p] for p in passes},
        "errors": {k: _rel(cp.assemble(v, kv_rows if k in ("dK", "dV") else rows, N), ref[k]) for k, v in arrays.items()},
    }


def torch_reference(x: dict[str, np.ndarray], causal: bool) -> dict[str, np.ndarray]:
    """O and, by torch autograd on the whole sequence in float64, dQ, dK, dV: torch's own
    ``scaled_dot_product_attention`` (``is_causal``, ``enable_gqa``), an implementation attnio did not write."""
    import torch

    Q, K, V = (torch.from_numpy(x[k]).clone().requires_grad_(True) for k in ("Q", "K", "V"))
    O = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal, enable_gqa=Q.shape[1] != K.shape[1])
    O.backward(torch.from_numpy(x["dO"]))
    return {"O": O.detach().numpy(), "dQ": Q.grad.numpy(), "dK": K.grad.numpy(), "dV": V.grad.numpy()}


def _rel(x: np.ndarray, ref: np.ndarray) -> float:
    s = float(np.max(np.abs(ref)))
    e = float(np.max(np.abs(x - ref)))
    return e / s if s > 1e-12 else e
