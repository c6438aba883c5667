"""``attnio run ALGORITHM --N --d --M``: one run on the machine, exact counts, error against float64."""

from __future__ import annotations

import argparse

from attnio.commands import _workload
from attnio.commands._common import int_option, print_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("algorithm", help="an algorithm name (see `attnio algorithms`), or `auto`")
    p.add_argument("--N", type=int_option, required=True, help="sequence length")
    p.add_argument("--d", type=int_option, required=True, help="head dimension")
    p.add_argument("--dv", type=int_option, default=None, help="value width d_v (default d)")
    p.add_argument("--M", type=int_option, required=True, help="fast-memory capacity in words")
    p.add_argument("--seed", type=int_option, default=0, help="seed of the random inputs")
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    p.add_argument("--count-only", action="store_true", help="counts only, no arithmetic (any N)")
    p.add_argument("--eps", type=float, default=None, help="approximate algorithms: max error per output entry")
    p.add_argument("--B", type=float, default=None, help="approximate algorithms: bound on |input entries|")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--backward",
        action="store_true",
        help="training step: run the forward, then its backward (flash2 → flash2-bwd, ...); JSON has forward, backward, total",
    )
    _workload.add_arguments(p)  # batch, heads, GQA, Nq/Nkv, causal, dtype, --smem/--gpu (docs/workloads.md)


def main(args: argparse.Namespace) -> int:
    from attnio.algorithms.registry_backward import BACKWARD
    from attnio.algorithms.run import run

    if _workload.requested(args):
        return _workload.main(args)
    if args.backward or args.algorithm in BACKWARD:
        return _main_backward(args)

    extra = {}
    if args.eps is not None or args.B is not None:
        extra = {"eps": args.eps, "B": args.B}
    r = run(
        args.algorithm,
        N=args.N,
        d=args.d,
        dv=args.dv,
        M=args.M,
        seed=args.seed,
        backend=args.backend,
        count_only=args.count_only,
        **extra,
    )
    out = r.as_dict()
    out.update(_workload.plain_fields(out))
    if args.json:
        print_json(out)
        return 0
    print(f"{out['algorithm']}  N={out['N']} d={out['d']} dv={out['dv']} M={out['M']}  blocks={out['blocks']}")
    print(f"  reads  {out['reads']:>16,d} words")
    print(f"  writes {out['writes']:>16,d} words")
    print(f"  io     {out['io']:>16,d} words")
    print(f"  peak   {out['peak_fast_words']:>16,d} words of fast memory (M={out['M']:,d})" + ("  OVERFLOW (audit mode)" if out["overflowed"] else ""))
    if out["max_abs_error"] is not None:
        print(f"  max |O − O_ref| = {out['max_abs_error']:.3e} (float64 reference)")
    print(f"  {out['seconds']:.3f} s on {out['backend']}")
    return 0


def _main_backward(args: argparse.Namespace) -> int:
    """``attnio run <forward> --backward`` (a training step) and ``attnio run <name>-bwd`` (a backward alone)."""
    from attnio.algorithms.registry_backward import BACKWARD
    from attnio.algorithms.run_backward import run_backward, train_step
    from attnio.errors import InvalidParameter

    if args.eps is not None or args.B is not None:
        raise InvalidParameter("eps" if args.eps is not None else "B", args.eps if args.eps is not None else args.B,
                               "not given: the backward schedules are exact")
    kw = dict(N=args.N, d=args.d, dv=args.dv, M=args.M, count_only=args.count_only, backend=args.backend)
    if args.algorithm in BACKWARD:
        if args.backward:
            raise InvalidParameter("algorithm", args.algorithm, "a forward algorithm with --backward (it runs its backward itself)")
        parts = {"backward": run_backward(args.algorithm, seed=args.seed, **kw).as_dict()}
    else:
        parts = train_step(args.algorithm, seed=args.seed, **kw).as_dict()
    _workload.add_bytes(parts)  # io_bytes (fp32) in forward, backward, total
    if args.json:
        print_json(parts if "forward" in parts else parts["backward"])
        return 0
    for key, out in parts.items():
        if key == "total":
            print(f"total (training step)  reads {out['reads']:,d}  writes {out['writes']:,d}  io {out['io']:,d}  "
                  f"peak {out['peak_fast_words']:,d} words")
            continue
        print(f"{key}: {out['algorithm']}  N={out['N']} d={out['d']} dv={out['dv']} M={out['M']}  blocks={out['blocks']}")
        print(f"  reads  {out['reads']:>16,d} words")
        print(f"  writes {out['writes']:>16,d} words")
        print(f"  io     {out['io']:>16,d} words")
        print(f"  peak   {out['peak_fast_words']:>16,d} words of fast memory (M={out['M']:,d})" + ("  OVERFLOW (audit mode)" if out["overflowed"] else ""))
        if out.get("max_abs_error") is not None:
            print(f"  max |O − O_ref| = {out['max_abs_error']:.3e} (float64 reference)")
        if out.get("rel_errors"):
            print("  " + ", ".join(f"{k} rel. error {v:.2e}" for k, v in out["rel_errors"].items()) + " (float64 analytic backward)")
    return 0
