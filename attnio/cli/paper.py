"""``attnio paper fa1-fig2``: a published figure of measured HBM traffic beside attnio's exact counts."""

from __future__ import annotations

import argparse

from attnio.cli._common import print_json

HELP = "a published figure beside attnio's exact counts (fa1-fig2: FlashAttention Figure 2; decode: published decode bandwidths)"
"""The one-line help of ``attnio paper`` (``attnio --help``, ``attnio paper --help``)."""

FIGURES = ("fa1-fig2", "decode")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("figure", choices=FIGURES, help="fa1-fig2: FlashAttention (Dao et al. 2022) Figure 2, GPT-2 medium on an A100; "
                   "decode: published decode bandwidths (flash-attention, PyTorch, onnxruntime) beside attnio's bytes")
    p.add_argument("--no-sweep", action="store_true", help="leave out the block-size sweep (Figure 2 middle)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def main(args: argparse.Namespace) -> int:
    if args.figure == "decode":
        from attnio.reports.paper_decode import published_rows
        from attnio.reports.paper_decode import render_text as render_decode

        rows = published_rows()
        if args.json:
            print_json({"figure": "decode", "rows": rows})
        else:
            print(render_decode(rows))
        return 0
    from attnio.reports.paper_fa1 import fa1_fig2, render_text

    f = fa1_fig2(sweep=not args.no_sweep)
    if args.json:
        print_json(f)
    else:
        print(render_text(f))
    return 0
