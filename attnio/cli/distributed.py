"""``attnio distributed --schedule ring --P 8 --N … --d … --heads … --kv-heads …``: attention split over P devices
(context parallelism): the exact words and bytes each device sends and receives (bounds/distributed.py), the causal
work per device, the times on a link preset and a GPU's peak, the ring's overlap condition, and at small sizes the
counts measured on the simulated P-device machine beside the formula (docs/distributed.md)."""

from __future__ import annotations

import argparse

from attnio.cli._common import int_option, print_json

HELP = "attention over P devices (ring, zigzag, striped, all-gather, Ulysses): exact words each device sends and receives, work, link times"
"""The one-line help of ``attnio distributed`` (``attnio --help``, ``attnio distributed --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--schedule", required=True, help="ring, zigzag, striped, allgather, tokenring, hybrid, attention2d or ulysses")
    p.add_argument("--intra", type=int_option, default=None,
                   help="hybrid: ranks per all-to-all group P_a (a divisor of P, 2 <= P_a <= P/2; the ring runs across groups)")
    p.add_argument("--P", type=int_option, required=True, help="devices (>= 2; attention2d: a perfect square)")
    p.add_argument("--N", type=int_option, required=True, help="sequence length (a multiple of P; zigzag, allgather: 2P)")
    p.add_argument("--d", type=int_option, required=True, help="head dimension of Q and K")
    p.add_argument("--dv", type=int_option, default=None, help="value width (default d)")
    p.add_argument("--heads", type=int_option, default=1, help="query heads H")
    p.add_argument("--kv-heads", type=int_option, default=None, help="K/V heads H_kv (default H; ulysses: a multiple of P)")
    p.add_argument("--batch", type=int_option, default=1)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--backward", action="store_true", help="the backward too (a training step's communication)")
    p.add_argument("--link", default="nvlink4", help="link preset (nvlink3, nvlink4, nvlink5, ib-ndr, ib-xdr, roce400, pcie4, pcie5)")
    p.add_argument("--gpu", default="h100", help="GPU preset for the peak FLOP/s (a100, h100, h200, b200, a6000)")
    p.add_argument("--dtype", default="bf16", help="element type (fp32, fp16, bf16, fp8): bytes per word")
    p.add_argument("--simulate", choices=["auto", "yes", "no"], default="auto",
                   help="run the simulated P-device machine (auto: when batch·heads·N² <= 2^24)")
    p.add_argument("--seed", type=int_option, default=0)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def main(args: argparse.Namespace) -> int:
    from attnio.algorithms.context_parallel import plan

    out = plan(args.schedule, P=args.P, N=args.N, d=args.d, dv=args.dv, heads=args.heads, kv_heads=args.kv_heads,
               batch=args.batch, causal=args.causal, backward=args.backward, dtype=args.dtype, link=args.link,
               gpu=args.gpu, simulate={"auto": None, "yes": True, "no": False}[args.simulate], seed=args.seed,
               intra=args.intra)
    agree = out["measured"]["measured_equals_formula"] if out["simulated"] else True
    if args.json:
        print_json(out)
        return 0 if agree else 1
    print(f"{out['schedule']} ({out['layout']} layout) on P={out['P']}{'' if out['intra'] is None else ' (groups of ' + str(out['intra']) + ')'}: b={out['batch']} H={out['heads']} "
          f"H_kv={out['kv_heads']} N={out['N']} d={out['d']} d_v={out['dv']}{' causal' if out['causal'] else ''} "
          f"{out['dtype']} ({out['bytes_per_word']} B/word)")
    print(f"  {out['source']}")
    for p, w in out["formula_words"].items():
        t = out["times"][p]
        print(f"  {p:<8} per device: sends = receives = {w:,} words ({out['formula_bytes'][p]:,} bytes; {out['provenance']})"
              f"\n           on {out['link']['name']}: {_t(t['comm_s'])} of transfer; busiest device's attention "
              f"{_t(t['compute_s_max'])} at {out['peak_flops'] / 1e12:g} TFLOP/s ({out['gpu']})")
    lb = out["lower_bound"]
    if lb is None:
        print("  lower bound: none for a causal mask (DIST-QK needs every S_ij; docs/bounds/distributed.md)")
    else:
        print(f"  lower bound ({lb['id']}, {lb['status']}, {lb['doc']}): some device receives ≥ {lb['words']:,.1f} words "
              f"({lb['branch']}; {lb['scope']}); " + ", ".join(f"{p} ÷ bound {r:.3f}" for p, r in lb["ratio"].items()))
    work = out["pairs_per_device"]
    print(f"  work (unmasked pairs) per device: min {min(work):,}, max {max(work):,}; max ÷ mean {out['imbalance_max_over_mean']:.3f}")
    if out["overlap"]:
        o = out["overlap"]
        print(f"  ring step: transfer {_t(o['comm_s_fwd'])} vs attention {_t(o['compute_s_fwd'])}: "
              f"{'hidden' if o['hidden_fwd'] else 'EXPOSED'} (hidden ⇔ N/P ≥ F·β/(2g·BW) = {o['threshold_rows_fwd']:.1f} rows)")
        if args.backward:
            print(f"  ring backward step: transfer {_t(o['comm_s_bwd'])} vs {_t(o['compute_s_bwd'])}: "
                  f"{'hidden' if o['hidden_bwd'] else 'EXPOSED'} (hidden ⇔ N/P ≥ {o['threshold_rows_bwd']:.1f} rows)")
    if out["simulated"]:
        m = out["measured"]
        sent = {p: sorted(set(v)) for p, v in m["sent"].items()}
        print(f"  simulated machine: words sent per device {sent}; formula {'EQUAL' if agree else 'DIFFERENT'}; "
              "errors vs float64 " + ", ".join(f"{k} {v:.1e}" for k, v in m["errors"].items()))
    else:
        print("  simulated machine: not run at this size (--simulate yes forces it; the formula equals the machine on "
              "every size tested, tests/test_distributed.py)")
    return 0 if agree else 1


def _t(seconds: float) -> str:
    """A time with a unit that shows it: 2.084 ms, 37.28 µs, 12.5 ns.

    >>> _t(0.002084), _t(3.7e-5), _t(1.25e-8)
    ('2.084 ms', '37.00 µs', '12.50 ns')
    """
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e9:.2f} ns"
