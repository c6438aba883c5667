"""The JSON Schema of ``reports/baseline.json`` (the gate's baseline, :mod:`attnio.reports.gate`).

:func:`attnio.reports.gate.load_baseline` validates the whole file against :data:`BASELINE_SCHEMA` with the
``jsonschema`` package before any figure is collected, so a malformed entry is an exit-2 error naming its JSON
path, never a TypeError in the middle of the comparison. The schema types every field the gate reads; entries
may carry further fields (a newer attnio may record more), and sections the gate does not know are ignored.

>>> from jsonschema import Draft202012Validator
>>> v = Draft202012Validator(BASELINE_SCHEMA)
>>> v.is_valid({"schema": 1, "io": {"flash2|N=4": {"reads": 72, "writes": 12}}})
True
>>> [e.json_path for e in v.iter_errors({"schema": 1, "io": {}, "verdicts": {"c": "proved"}})]
['$.verdicts.c']
"""

from __future__ import annotations

from typing import Any

#: nesting depth a baseline may reach (the deepest formula in the catalog is far shallower); checked without
#: recursion before the schema, so a pathological file cannot exhaust Python's stack
MAX_DEPTH = 64

_EXPR: dict[str, Any] = {  # bounds.expr.to_json: [op, operand, ...], leaves ["sym", name] and ["const", "p/q"]
    "type": "array",
    "minItems": 1,
    "prefixItems": [{"type": "string"}],
    "items": {"anyOf": [{"$ref": "#/$defs/expr"}, {"type": "string"}, {"type": "number"}]},
}
_CONSTANT = {"type": ["string", "number", "null"]}


def _by_name(properties: dict[str, Any], **entry: Any) -> dict[str, Any]:
    """A section of the baseline: an object whose every value (one per figure, bound, claim...) is an object with
    these ``properties`` and the further keywords ``entry`` (``required``, ``anyOf``)."""
    return {"type": "object", "additionalProperties": {"type": "object", **entry, "properties": properties}}


BASELINE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "attnio gate baseline",
    "type": "object",
    "required": ["schema", "io"],
    "$defs": {"expr": _EXPR},
    "properties": {
        "schema": {"const": 1},
        "attnio": {"type": "string"},
        "unavailable": {"type": "array", "items": {"type": "string"}},
        "io": _by_name(
            {
                "reads": {"type": "integer", "minimum": 0},
                "writes": {"type": "integer", "minimum": 0},
                "error": {"type": "string"},
            },
            anyOf=[{"required": ["reads", "writes"]}, {"required": ["error"]}],
        ),
        "formulas": _by_name(
            {"reads": {"$ref": "#/$defs/expr"}, "writes": {"$ref": "#/$defs/expr"}, "valid": {"type": "array", "items": {"$ref": "#/$defs/expr"}}},
            required=["reads", "writes"],
        ),
        "bounds": _by_name(
            {
                "kind": {"type": "string"},
                "model": {"type": "string"},
                "explicit": {"type": "boolean"},
                "expr": {"$ref": "#/$defs/expr"},
                "regime": {"type": "array", "items": {"$ref": "#/$defs/expr"}},
                "constant": _CONSTANT,
            },
            required=["kind", "expr"],
        ),
        "verdicts": _by_name({"verdict": {"type": "string"}, "constant": _CONSTANT, "kind": {"type": "string"}}, required=["verdict"]),
        # counted bytes of Triton kernel configurations (attnio.triton.gate)
        "triton": _by_name({f: {"type": "integer", "minimum": 0} for f in ("reads_bytes", "writes_bytes", "total_bytes")}, required=["total_bytes"]),
        "constants": _by_name(
            {
                "lower_constant": _CONSTANT,
                "upper_constant": _CONSTANT,
                "best_proved_bound": {"type": ["string", "null"]},
                "best_schedule": {"type": ["string", "null"]},
                "kind": {"type": ["string", "null"]},
            }
        ),
    },
}


def too_deep(data: Any, limit: int = MAX_DEPTH) -> str | None:
    """The JSON path of the first value nested deeper than ``limit``, or None (iterative: no recursion).

    >>> too_deep({"a": [[1]]}, limit=2)
    '$.a[0]'
    >>> too_deep({"a": [1]}, limit=2) is None
    True
    """
    stack: list[tuple[Any, str, int]] = [(data, "$", 0)]
    while stack:
        x, path, depth = stack.pop()
        if not isinstance(x, dict | list):
            continue
        if depth >= limit:
            return path
        items = x.items() if isinstance(x, dict) else enumerate(x)
        for k, v in reversed(list(items)):
            stack.append((v, f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}", depth + 1))
    return None
