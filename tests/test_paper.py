"""``attnio paper fa1-fig2``: the figure's attnio numbers are the exact formulas × heads × bytes (not fitted, not
typed in), the ratios are computed from them, and the block-size sweep falls as B_c grows, as in the paper."""

from __future__ import annotations

import json

import pytest

from attnio.bounds.costs import backward_cost, cost
from attnio.cli import main
from attnio.reports.paper_fa1 import PAPER, fa1_fig2


@pytest.fixture(scope="module")
def fig() -> dict:
    return fa1_fig2()


@pytest.mark.parametrize(("name", "bwd"), [("standard", "standard-bwd"), ("flash1", "flash1-bwd"), ("flash2", "flash2-bwd")])
def test_rows_equal_the_exact_formulas_times_heads_times_bytes(fig: dict, name: str, bwd: str) -> None:
    N, d, M = 1024, 64, 192 * 1024 // 2
    row = next(r for r in fig["rows"] if r["algorithm"] == name)
    assert row["forward_bytes"] == 2 * 64 * 16 * cost(name, N=N, d=d, M=M).io_words
    assert row["backward_bytes"] == 2 * 64 * 16 * backward_cost(bwd, N=N, d=d, M=M).io_words
    if row["paper_GB"] is not None:
        assert row["ratio_to_paper"] == pytest.approx(row["total_bytes"] / 1e9 / row["paper_GB"])


def test_paper_numbers_are_the_published_ones_and_flash_beats_standard(fig: dict) -> None:
    assert (PAPER["standard_GB"], PAPER["flash_GB"], PAPER["standard_GB_later_printing"]) == (40.3, 4.4, 35.3)
    assert fig["standard_over_flash1"]["attnio"] > 1 and fig["standard_over_flash1"]["paper"] > 1


def test_block_size_sweep_falls_as_B_c_grows(fig: dict) -> None:
    gb = [r["forward_bytes"] for r in fig["sweep"]]
    assert [r["B_c"] for r in fig["sweep"]] == [64, 128, 256, 512]
    assert all(a > b for a, b in zip(gb, gb[1:], strict=False))


def test_cli_prints_the_figure_and_its_assumptions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["paper", "fa1-fig2", "--no-sweep"]) == 0
    text = capsys.readouterr().out
    assert "40.3" in text and "4.4" in text and "assumptions:" in text and "dropout" in text
    assert main(["paper", "fa1-fig2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"rows", "sweep", "assumptions", "workload", "paper"} <= set(out)
