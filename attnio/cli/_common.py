"""Helpers shared by subcommands: integer options that accept only integers, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def int_option(text: str) -> int:
    """argparse type: an integer written as digits (``1000``, ``2**10`` is not accepted)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def float_option(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=True, default=str)
    sys.stdout.write("\n")
