"""``attnio run ALGORITHM --N --d --M``: one run on the machine (a forward, a backward ``<name>-bwd``, or with
``--backward`` a training step; plain or over a workload), exact counts, error against float64. One path:
:func:`attnio.algorithms.run.run`."""

from __future__ import annotations

import argparse
from typing import Any

from attnio.cli import _workload
from attnio.cli._common import int_option, print_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("algorithm", help="an algorithm name (see `attnio algorithms`, `attnio algorithms --backward`), or `auto`")
    p.add_argument("--N", type=int_option, default=None, help="sequence length (or --Nq and --Nkv)")
    p.add_argument("--d", type=int_option, required=True, help="head dimension")
    p.add_argument("--dv", type=int_option, default=None, help="value width d_v (default d)")
    p.add_argument("--M", type=int_option, default=None, help="fast-memory capacity in words (or --smem, --gpu)")
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
    p.add_argument("--mask", default=None, metavar="SPEC",
                   help="a mask for flash2 / flash2-bwd (docs/masks.md): window:LEFT,RIGHT (-1 unbounded), prefix:P, "
                        "document:0,s1,...,N (cu_seqlens), or causal; instead of --causal")
    p.add_argument("--tiles", default=None, metavar="BRxBC",
                   help="flash2 forward tiles: BRxBC (e.g. 128x128) or a kernel's own: fa2, fa3 (need --gpu), flex (docs/masks.md)")
    p.add_argument("--load", choices=["span", "tile"], default="span",
                   help="what a masked flash2 loads of a visited tile: span (needed keys; default) or tile (whole, as the kernels do)")
    p.add_argument("--documents", choices=["packed", "varlen"], default="packed",
                   help="a document mask's tiles: packed (global, FlexAttention's; default) or varlen (each sequence from its own start, FA-2's varlen)")
    _workload.add_arguments(p)  # batch, heads, GQA, Nq/Nkv, causal, dtype, --smem/--gpu (docs/workloads.md)


MASK_FORMS = "window:LEFT,RIGHT, prefix:P, document:0,s1,...,N or causal"


def parse_mask(spec: str) -> Any:
    """The mask named by ``--mask``: ``window:L,R`` (SlidingWindow), ``prefix:P`` (PrefixLM), ``document:c0,…``
    (Document, cu_seqlens), ``causal`` (Causal).

    >>> parse_mask("window:3,0"), parse_mask("causal")
    (SlidingWindow(window_left=3, window_right=0), Causal(window_left=-1, window_right=0))
    """
    from attnio.bounds import masks
    from attnio.core.errors import InvalidParameter

    kind, _, rest = spec.partition(":")
    try:
        nums = [int(x) for x in rest.split(",")] if rest else []
    except ValueError:
        raise InvalidParameter("mask", spec, MASK_FORMS) from None
    if kind == "window" and len(nums) == 2:
        return masks.SlidingWindow(*nums)
    if kind == "prefix" and len(nums) == 1:
        return masks.PrefixLM(nums[0])
    if kind == "document" and nums:
        return masks.Document(nums)
    if kind == "causal" and not rest:
        return masks.Causal()
    raise InvalidParameter("mask", spec, MASK_FORMS)


def parse_tiles(spec: str | None) -> Any:
    """``--tiles``: ``BRxBC`` as a pair, a preset name as itself.

    >>> parse_tiles("128x64"), parse_tiles("fa2"), parse_tiles(None)
    ((128, 64), 'fa2', None)
    """
    from attnio.bounds.kernel_tiles import PRESETS
    from attnio.core.errors import InvalidParameter

    if spec is None or spec in PRESETS:
        return spec
    a, x, b = spec.partition("x")
    if not (x and a.isdigit() and b.isdigit() and int(a) >= 1 and int(b) >= 1):
        raise InvalidParameter("tiles", spec, "BRxBC with integers >= 1 (e.g. 128x128), or one of " + ", ".join(PRESETS))
    return int(a), int(b)


def main(args: argparse.Namespace) -> int:
    from attnio.algorithms import registry
    from attnio.algorithms.run import run
    from attnio.core.errors import InvalidParameter

    if args.backward and registry.get(args.algorithm).pass_ == "backward":
        raise InvalidParameter("algorithm", args.algorithm, "a forward algorithm with --backward (it runs its backward itself)")
    w = _workload.build(args) if _workload.requested(args) else None
    plain = {} if w is not None else {"N": args.N, "d": args.d, "dv": args.dv, "M": args.M}
    tiles = parse_tiles(args.tiles)
    r = run(args.algorithm, w, pass_="step" if args.backward else None,
            schedule=args.schedule or ("per-head" if w or tiles or args.load != "span" or args.documents != "packed" else None),
            seed=args.seed, backend=args.backend, count_only=args.count_only, eps=args.eps, B=args.B,
            mask=None if args.mask is None else parse_mask(args.mask), tiling=tiles, load=args.load,
            documents=args.documents, **plain)
    out = r.as_dict()
    if args.json:
        print_json(out)
        return 0
    w = r.workload
    print(f"{args.algorithm}{' training step' if args.backward else ''}: batch={w.batch} heads={w.heads} kv_heads={w.kv_heads} "
          f"Nq={w.Nq} Nkv={w.Nkv} d={w.d} dv={w.dv}{' causal' if w.causal else ''}{' mask ' + args.mask if args.mask else ''}{' load ' + args.load if args.load != 'span' else ''} {w.dtype} ({w.bytes_per_word} B/word)  "
          f"M={w.M:,d} words ({w.memory})")
    for key, part in (("forward", out["forward"]), ("backward", out["backward"])) if args.backward else ((r.pass_, out),):
        _print_part(key, part, w.M)
    if args.backward:
        t = out["total"]
        print(f"total (training step)  reads {t['reads']:,d}  writes {t['writes']:,d}  io {t['io']:,d} words ({t['io_bytes']:,d} bytes)  "
              f"peak {t['peak_fast_words']:,d} words")
    return 0


def _print_part(key: str, out: dict[str, Any], M: int) -> None:
    print(f"{key}: {out['algorithm']}" + (f", {out['schedule']}" if out["schedule"] else "") + f"  blocks={out['blocks']}")
    for k in ("reads", "writes", "io"):
        print(f"  {k:<6} {out[k]:>20,d} words {out[k + '_bytes']:>22,d} bytes")
    print(f"  peak   {out['peak_fast_words']:>20,d} words of fast memory (M={M:,d})" + ("  OVERFLOW (audit mode)" if out["overflowed"] else ""))
    if out.get("max_abs_error") is not None:
        print(f"  max |O − O_ref| = {out['max_abs_error']:.3e} (float64 reference)")
    if out.get("rel_errors"):
        print("  " + ", ".join(f"{k} rel. error {v:.2e}" for k, v in out["rel_errors"].items()) + " (float64 analytic backward)")
    print(f"  {out['seconds']:.3f} s on {out['backend']}")
