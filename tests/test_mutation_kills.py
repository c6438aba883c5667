"""Tests added after mutation testing (tools/mutation.sh, docs/mutation.md): each one pins down a behaviour
that a surviving mutant changed without any earlier test noticing."""

from __future__ import annotations
