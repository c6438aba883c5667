"""The ``attnio`` command. Each subcommand lives in ``attnio/cli/<name>.py`` with its one line of help ``HELP``,
``add_arguments(parser)`` and ``main(args) -> int``; this file only dispatches and turns bad input into one line and
exit code 2."""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType
from typing import NoReturn

from attnio import __version__
from attnio.cli import (
    algorithms,
    bounds,
    decode,
    distributed,
    gate,
    kernel,
    paper,
    pebble,
    report,
    run,
    sweep,
    verify,
)
from attnio.core.errors import AttnioError, InvalidParameter, Unsupported

# The subcommands, in the order ``attnio --help`` lists them; each module's name is its command's.
COMMANDS: dict[str, ModuleType] = {
    mod.__name__.rpartition(".")[2]: mod
    for mod in (run, algorithms, bounds, verify, sweep, report, gate, decode, pebble, kernel, distributed, paper)
}


class UsageError(Exception):
    """A command line argparse refused: :func:`main` prints it as one line on stderr and returns 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr with a hint (not the usage block), and is returned
    as exit code 2 by :func:`main` instead of exiting the interpreter."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {one_line(message)} (see `{self.prog} --help`)")


def one_line(text: object) -> str:
    """``text`` on one line (an error message that spans lines would break the one-line contract)."""
    return " ".join(str(text).split())


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="attnio", description="I/O bounds of attention, proved and measured.")
    p.add_argument("--version", action="version", version=f"attnio {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, mod in COMMANDS.items():
        sp = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(sp)
        sp.set_defaults(_main=mod.main)
    return p


# The exit code of a command whose reader closed its output early (``attnio bounds | head``): what a shell reports
# for a program ended by SIGPIPE (128 + 13), so a pipeline under ``set -o pipefail`` still sees that the command
# did not finish, while nothing is printed.
EXIT_BROKEN_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv``. Exit codes: 0 done; 1 a documented failure (a regression, an unproved
    claim, the machine refusing a schedule); 2 bad input, on stderr as exactly one line; 141
    (:data:`EXIT_BROKEN_PIPE`) the reader of stdout went away (``| head``), quietly."""
    try:
        code = _dispatch(argv)
        sys.stdout.flush()  # inside the try: a closed pipe surfaces here, not at interpreter exit
        return code
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_BROKEN_PIPE


def _stdout_to_devnull() -> None:
    """Point stdout's file descriptor at /dev/null, so the interpreter's final flush of what is still buffered
    does not raise a second BrokenPipeError at exit (the recipe of Python's ``signal`` documentation)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture): nothing is flushed at exit
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _dispatch(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        print(e, file=sys.stderr)
        return 2
    if not getattr(args, "_main", None):
        commands = ", ".join(COMMANDS)
        print(f"attnio: error: no command given; commands are {commands} (see `attnio --help`)", file=sys.stderr)
        return 2
    try:
        return int(args._main(args) or 0)
    except (InvalidParameter, Unsupported) as e:
        print(f"attnio {args.command}: error: {one_line(e)}", file=sys.stderr)
        return 2
    except AttnioError as e:
        print(f"attnio {args.command}: {type(e).__name__}: {one_line(e)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
