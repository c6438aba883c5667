"""z3 claims about sectors (docs/dram.md#sectors).

``dram.sectors.aligned-rows``: a row of R bytes at byte offset o touches ⌈(o + R)/32⌉ − ⌊o/32⌋ 32-byte sectors
(bounds/dram.py's ``SECTORS_TOUCHED``, the expression the replay evaluates); when o and R are multiples of 32
(rows 32-byte aligned and contiguous, row bytes a multiple of 32) that is exactly R/32, so a tile of such rows
touches requested bytes / 32 sectors. Without the alignment it fails: :func:`aligned_rows` with
``aligned=False`` drops the offset's alignment and z3 refutes it (o = 16, R = 32 touches 2 sectors, not 1), the
counterexample tests/test_dram.py checks.
"""

from __future__ import annotations

from attnio.bounds.dram import ROW_BYTES, ROW_OFFSET, SECTOR, SECTORS_TOUCHED
from attnio.bounds.expr import eq, substitute
from attnio.bounds.symbols import sym
from attnio.solver.claims.types import Implication

DOC = "docs/dram.md#sectors"
#: o = 32·a and R = 32·k: the alignment, as integer multiples.
ALIGN_A = sym("dram_a", lo=0, doc="sector index of a row's first byte (dram)")
ALIGN_K = sym("dram_k", doc="sectors per row when the row bytes are a multiple of 32 (dram)")


def aligned_rows(aligned: bool = True, suffix: str = "") -> Implication:
    """The claim; ``aligned=False`` leaves the offset unaligned (the tests' expected refutation)."""
    touched = substitute(SECTORS_TOUCHED, {SECTOR: 32})
    hyps = (eq(ROW_BYTES, 32 * ALIGN_K),) + ((eq(ROW_OFFSET, 32 * ALIGN_A),) if aligned else ())
    return Implication(
        f"dram.sectors.aligned-rows{suffix}",
        "identity",
        "[dram] A row of R bytes at byte offset o touches ⌈(o + R)/32⌉ − ⌊o/32⌋ = R/32 sectors of 32 bytes when o "
        "and R are multiples of 32 (rows 32-byte aligned, row bytes a multiple of 32), for every o = 32a, R = 32k.",
        hyps,
        eq(touched, ROW_BYTES / 32),
        provenance=DOC,
        meta="a fact of the sector count the L2 replay uses (bounds/dram.py), about no catalog bound",
    )


CLAIMS: list[Implication] = [aligned_rows()]
