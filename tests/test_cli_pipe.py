"""A reader that stops early (``attnio bounds | head``): the command exits quietly, no traceback, exit 141."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from attnio import cli


class _ClosedPipe(io.StringIO):
    """stdout whose reader has gone: every write fails as a closed pipe does."""

    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("argv", [["bounds"], ["verify", "--list"], ["algorithms"], ["paper", "fa1-fig2"]])
def test_a_closed_stdout_exits_quietly_with_141(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert cli.main(argv) == cli.EXIT_BROKEN_PIPE == 141
    assert capsys.readouterr().err == ""


def test_an_open_stdout_still_exits_0(capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["bounds"]) == 0
    assert capsys.readouterr().out.count("\n") > 10


def test_a_real_pipe_closed_before_the_first_line_leaves_stderr_empty() -> None:
    """The real process: the reader closes its end before the command prints (it is still importing), so the
    first write meets a closed pipe; the interpreter's final flush must not print "Exception ignored"."""
    p = subprocess.Popen([sys.executable, "-m", "attnio.cli", "verify", "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141, err
    assert err == ""
