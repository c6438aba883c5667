"""The workload options of ``attnio run`` (docs/workloads.md): batch, heads, K/V heads, N_q/N_kv, causal mask,
element type, and M from exactly one of ``--M`` (words), ``--smem`` (bytes) or ``--gpu`` (preset).

Kept in its own module so ``attnio/commands/run.py`` needs only two hooks: :func:`add_arguments` at the end of
its own, and ``if requested(args): return main(args)`` at the top of its ``main``. A run with none of these options
(and ``--N``, ``--M`` given) takes run.py's own path unchanged, and its ``--json`` gains :func:`plain_fields`.
"""

from __future__ import annotations

import argparse
from typing import Any

from attnio.commands._common import int_option, print_json

WORKLOAD_OPTIONS = ("batch", "heads", "kv_heads", "Nq", "Nkv", "dtype", "smem", "gpu", "schedule")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from attnio.workload import DTYPES, GPUS

    g = p.add_argument_group("workload (docs/workloads.md)")
    g.add_argument("--batch", type=int_option, default=None, help="batch size (default 1)")
    g.add_argument("--heads", type=int_option, default=None, help="query heads H (default 1)")
    g.add_argument("--kv-heads", dest="kv_heads", type=int_option, default=None, help="key/value heads H_kv, dividing H (default H; 1 = MQA)")
    g.add_argument("--Nq", type=int_option, default=None, help="query rows (default --N)")
    g.add_argument("--Nkv", type=int_option, default=None, help="key/value rows (default --N)")
    g.add_argument("--causal", action="store_true", help="causal mask, bottom-right aligned (query i sees keys j <= i + Nkv - Nq)")
    g.add_argument("--dtype", choices=sorted(DTYPES), default=None, help="element type: bytes per word (default fp32)")
    g.add_argument("--smem", default=None, help="fast memory in bytes, e.g. 192KiB, 164KB, 65536 (instead of --M)")
    g.add_argument("--gpu", choices=sorted(GPUS), default=None, help="fast memory = one SM's shared memory (instead of --M)")
    g.add_argument("--schedule", choices=["per-head", "grouped", "best"], default=None,
                   help="per-head (default), grouped (K/V tile shared by a group's query heads), or the cheaper")
    # --N and --M of run.py are no longer required on their own: --Nq/--Nkv and --smem/--gpu can stand for them
    for opt in ("--N", "--M"):
        action = p._option_string_actions.get(opt)
        if action is not None:
            action.required = False


def requested(args: argparse.Namespace) -> bool:
    """True when the run is a workload run (any workload option, or --N / --M left out)."""
    if getattr(args, "N", None) is None or getattr(args, "M", None) is None or getattr(args, "causal", False):
        return True
    return any(getattr(args, k, None) is not None for k in WORKLOAD_OPTIONS)


def build(args: argparse.Namespace) -> Any:
    from attnio.workload import Workload

    return Workload.build(
        batch=1 if args.batch is None else args.batch,
        heads=1 if args.heads is None else args.heads,
        kv_heads=args.kv_heads,
        N=args.N,
        Nq=args.Nq,
        Nkv=args.Nkv,
        d=args.d,
        dv=args.dv,
        causal=args.causal,
        dtype=args.dtype or "fp32",
        M=args.M,
        smem=args.smem,
        gpu=args.gpu,
    )


def run(args: argparse.Namespace) -> Any:
    """The workload run (count-only when asked), the cheaper schedule for ``--schedule best``."""
    from attnio.algorithms.workloads import GROUPED, run_workload
    from attnio.errors import InvalidParameter

    w = build(args)
    if args.eps is not None or args.B is not None:
        raise InvalidParameter("eps", args.eps, "not given with workload options (approximate algorithms run one head: drop the workload options)")
    if args.backend != "numpy":
        raise InvalidParameter("backend", args.backend, "numpy for workload runs")
    schedule = args.schedule or "per-head"
    kw = {"seed": args.seed, "count_only": args.count_only}
    if schedule != "best":
        return run_workload(args.algorithm, w, schedule=schedule, **kw)
    cands = ["per-head"] + (["grouped"] if args.algorithm in GROUPED else [])
    results = []
    for s in cands:
        try:
            results.append(run_workload(args.algorithm, w, schedule=s, **kw))
        except InvalidParameter:
            if s == "per-head":
                raise
    return min(results, key=lambda r: (r.measurement.io_words, r.schedule))


def train(args: argparse.Namespace) -> dict[str, Any]:
    """``--backward`` with workload options: a training step (forward, then its backward).

    flash2 has a workload backward (flash2-bwd: causal masks, N_q ≠ N_kv, GQA/MQA; per-head or grouped, the same
    schedule as the forward; ``best``: the cheaper training step). Other algorithms run a one-head training step of
    one representative head, its counts × batch·H: plain workloads only (no mask, N_q = N_kv, H_kv = H)."""
    from attnio.algorithms.run_backward import train_step
    from attnio.algorithms.workloads_bwd import BACKWARD_OF, train_workload
    from attnio.errors import Unsupported

    w = build(args)
    if args.algorithm in BACKWARD_OF:
        kw = {"seed": args.seed, "count_only": args.count_only}
        scheds = ["per-head", "grouped"] if args.schedule == "best" else [args.schedule or "per-head"]
        steps = [train_workload(args.algorithm, w, schedule=s, **kw).as_dict() for s in scheds]
        return min(steps, key=lambda t: (t["total"]["io"], t["forward"]["schedule"]))
    opts = [o for o, on in (("--causal", w.causal), (f"--Nq {w.Nq} != --Nkv {w.Nkv}", w.Nq != w.Nkv),
                            (f"--kv-heads {w.kv_heads} < --heads {w.heads}", w.kv_heads != w.heads),
                            (f"--schedule {args.schedule}", args.schedule not in (None, "per-head"))) if on]
    if opts:
        raise Unsupported(
            f"--backward for {args.algorithm} runs its one-head backward schedule: no workload backward for "
            f"{', '.join(opts)} (workload backward schedules: {', '.join(BACKWARD_OF)} -> "
            f"{', '.join(BACKWARD_OF.values())})"
        )
    ts = train_step(args.algorithm, N=w.Nq, d=w.d, dv=w.dv, M=w.M, seed=args.seed, count_only=args.count_only).as_dict()
    k = w.query_heads_total
    for part in ts.values():
        for key in ("reads", "writes", "io"):
            part[key] *= k
        if "per_array" in part:
            part["per_array"] = {n: {a: v * k for a, v in c.items()} for n, c in part["per_array"].items()}
    add_bytes(ts, w)
    ts["workload"] = w.as_dict()
    ts["heads_run"] = 1  # the representative head; counts are × batch·heads
    return ts


def add_bytes(parts: dict[str, Any], w: Any = None) -> None:
    """``io_bytes``, ``reads_bytes``, ``writes_bytes`` in each of ``forward``, ``backward``, ``total`` (fp32 unless
    a workload is given)."""
    bpw = 4 if w is None else w.bytes_per_word
    for part in parts.values():
        if isinstance(part, dict) and "io" in part:
            part["io_bytes"] = part["io"] * bpw
            part["reads_bytes"] = part["reads"] * bpw
            part["writes_bytes"] = part["writes"] * bpw


def main(args: argparse.Namespace) -> int:
    if getattr(args, "backward", False):
        ts = train(args)
        if args.json:
            print_json(ts)
            return 0
        w = build(args)
        print(f"training step of {args.algorithm}: {w.batch}×{w.heads} heads ({w.kv_heads} K/V){' causal' if w.causal else ''}, Nq={w.Nq} Nkv={w.Nkv} d={w.d} dv={w.dv} {w.dtype}, M={w.M:,d} words ({w.memory})")
        for key in ("forward", "backward", "total"):
            part = ts[key]
            print(f"  {key:<8} {part['io']:>20,d} words {part['io_bytes']:>22,d} bytes" + (f"  ({part['algorithm']}" + (f", {part['schedule']}" if "schedule" in part else "") + ")" if "algorithm" in part else ""))
        return 0
    r = run(args)
    out = r.as_dict()
    if args.json:
        print_json(out)
        return 0
    w = r.workload
    print(
        f"{out['algorithm']} ({out['schedule']})  batch={w.batch} heads={w.heads} kv_heads={w.kv_heads} Nq={w.Nq} Nkv={w.Nkv} "
        f"d={w.d} dv={w.dv}{' causal' if w.causal else ''} {w.dtype} ({w.bytes_per_word} B/word)  M={w.M:,d} words ({w.memory})"
    )
    print(f"  blocks {out['blocks']}")
    for k in ("reads", "writes", "io"):
        print(f"  {k:<6} {out[k]:>20,d} words {w.io_bytes(out[k]):>22,d} bytes")
    print(f"  peak   {out['peak_fast_words']:>20,d} words of fast memory (M={w.M:,d})" + ("  OVERFLOW (audit mode)" if out["overflowed"] else ""))
    if out["max_abs_error"] is not None:
        print(f"  max |O − O_ref| = {out['max_abs_error']:.3e} (float64 reference)")
    print(f"  {out['seconds']:.3f} s")
    return 0


def plain_fields(out: dict[str, Any]) -> dict[str, Any]:
    """``io_bytes`` and the one-head fp32 workload of a plain run (no workload options)."""
    from attnio.workload import Workload

    w = Workload.build(N=out["N"], d=out["d"], dv=out["dv"], M=out["M"])
    return {"io_bytes": w.io_bytes(out["io"]), "workload": w.as_dict()}
