"""Exact red-blue pebbling of tiny computation graphs (see docs/pebbling.md)."""
