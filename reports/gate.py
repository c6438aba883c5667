"""The bound-regression gate: this run's deterministic figures against the committed ``reports/baseline.json``.

Figures (all exact, all deterministic, so the gate is strict):

- ``io``: reads and writes of every configuration of the default grid (count-only runs: the counts are the
  same as with arithmetic, which ``tests/test_machine.py`` checks), of every backward schedule at fixed points,
  and of every workload schedule, forward and backward, at named causal and GQA workloads;
- ``formulas``: every exact cost formula table (forward, backward, workload forward and backward, approximate),
  as :func:`bounds.expr.to_json` structures (never printed strings);
- ``bounds``: each catalog bound: kind, expression and regime as ``to_json`` structures, its constant;
- ``verdicts``: the z3 verdict of each claim, and the constant it proved;
- ``constants``: the tight-constants tables (forward and backward).

The grid's I/O comes from the sweep; every other figure from :mod:`attnio.reports.figures`, the one place the
report reads them from too.

:func:`compare` fails when an I/O count grows, a configuration or bound disappears, a proof is lost, a constant
worsens (a lower-bound constant falls, an upper-bound constant rises) or a bound or formula changes. Falling
I/O counts and new entries are reported as notes: ``attnio gate --update`` records them on purpose.

>>> base = {"schema": 1, "io": {"a": {"reads": 10, "writes": 2}}, "verdicts": {"c1": {"verdict": "proved"}}}
>>> cur = {"schema": 1, "io": {"a": {"reads": 11, "writes": 2}}, "verdicts": {"c1": {"verdict": "unknown"}}}
>>> compare(base, cur).problems
['io a: reads 10 -> 11 (+1 words)', 'verdict c1: proved -> unknown (proof lost)']
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

SCHEMA = 1
BASELINE = Path("reports/baseline.json")
SECTIONS = ("io", "formulas", "bounds", "verdicts", "constants")


class BaselineError(Exception):
    """The baseline is missing, unreadable or not a baseline: exit 2 with this message."""


@dataclass
class GateResult:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


# collecting ------------------------------------------------------------------------------------------


def gate_key(row: dict[str, Any]) -> str:
    f = lambda x: "-" if x is None else repr(x)  # noqa: E731
    return f"{row['algorithm']}|N={row['N']}|d={row['d']}|dv={row['dv']}|M={row['M']}|eps={f(row['eps'])}|B={f(row['B'])}"


def collect(grid: Any = None, *, verify: bool = True, workers: int | None = None, progress: bool = False) -> dict[str, Any]:
    """This run's figures: the grid's I/O from the sweep (``grid`` defaults to the embedded default grid, run
    count-only) and every other figure from :mod:`attnio.reports.figures` (its registered gate sources); the
    z3 verification runs claim by claim on the same executor (``workers``: as in :func:`reports.sweep.run_sweep`)."""
    import dataclasses

    from attnio import __version__
    from attnio.reports import figures
    from attnio.reports.grid import default_grid
    from attnio.reports.sources import merge_verdicts, verification_tasks
    from attnio.reports.store import Store
    from attnio.reports.sweep import run_sweep

    g = grid or default_grid()
    g = dataclasses.replace(g, configs=tuple(sorted({dataclasses.replace(c, count_only=True) for c in g.configs})))
    out: dict[str, Any] = {"schema": SCHEMA, "attnio": __version__}
    tasks = verification_tasks() if verify else []
    store = Store(":memory:")
    s = run_sweep(g, store, workers=workers, progress=progress, side=tasks)
    io: dict[str, Any] = {}
    for r in store.rows():
        io[gate_key(r)] = {"reads": r["reads"], "writes": r["writes"]} if r["status"] == "ok" else {"error": r["error"]}
    out["io"] = io
    for name, entries in figures.gate_entries(default_grid=grid is None).items():
        clash = sorted(set(out.get(name, {})) & set(entries))
        assert not clash, f"figures repeat keys of the sweep's {name}: {clash[:3]}"
        out.setdefault(name, {}).update(entries)
    tk = _triton_kernels()
    if "unavailable" in tk:
        out.setdefault("unavailable", []).extend(tk.pop("unavailable"))
    out.update(tk)
    if tasks:
        out["verdicts"] = {v["id"]: {"verdict": v["verdict"], "constant": v["constant"], "kind": v.get("kind", "")} for v in merge_verdicts(s.side)}
    return out


def _triton_kernels() -> dict[str, Any]:
    """Section ``triton``: counted bytes of the registered Triton kernel configurations (attnio.triton.gate);
    without Triton, an ``unavailable`` note instead (the section is then not gated)."""
    from attnio.triton import gate as triton_gate

    return triton_gate.gate_entries()


# comparing -------------------------------------------------------------------------------------------


def compare(baseline: dict[str, Any], current: dict[str, Any]) -> GateResult:
    res = GateResult()
    P, Nt = res.problems, res.notes
    bio, cio = baseline.get("io", {}), current.get("io", {})
    for k in sorted(bio):
        b, c = bio[k], cio.get(k)
        if c is None:
            P.append(f"io {k}: configuration missing from this run")
            continue
        if "error" in c and "error" not in b:
            P.append(f"io {k}: ran before, now fails: {c['error']}")
            continue
        for w in ("reads", "writes"):
            if w in b and w in c:
                if c[w] > b[w]:
                    P.append(f"io {k}: {w} {b[w]} -> {c[w]} (+{c[w] - b[w]} words)")
                elif c[w] < b[w]:
                    Nt.append(f"io {k}: {w} {b[w]} -> {c[w]} ({c[w] - b[w]} words, improved)")
    _new(Nt, "io", bio, cio)

    for sect in ("formulas", "bounds"):
        bb, cb = baseline.get(sect), current.get(sect)
        if bb is None:
            if cb:
                Nt.append(f"{sect}: {len(cb)} entries, none in the baseline")
            continue
        if cb is None:
            P.append(f"{sect}: section not produced in this run")
            continue
        for k in sorted(bb):
            if k not in cb:
                P.append(f"{sect} {k}: removed")
                continue
            for field_ in sorted(set(bb[k]) | set(cb[k])):
                if field_ == "constant" and sect == "bounds":
                    _constant(P, Nt, f"bound {k}", bb[k].get("kind"), bb[k].get(field_), cb[k].get(field_))
                elif bb[k].get(field_) != cb[k].get(field_):
                    P.append(f"{sect} {k}: {field_} changed: {_short(bb[k].get(field_))} -> {_short(cb[k].get(field_))}")
        _new(Nt, sect, bb, cb)

    for sect, missing, compare_entries in (
        ("verdicts", "verification not run or unavailable in this run", _compare_verdicts),
        ("constants", "table unavailable in this run", _compare_constants),
    ):
        b, c = baseline.get(sect), current.get(sect)
        if b is None:
            continue
        if c is None:
            P.append(f"{sect}: {missing}")
            continue
        compare_entries(P, Nt, b, c, current)
        _new(Nt, sect, b, c)
    from attnio.triton import gate as triton_gate

    tp, tn = triton_gate.compare(baseline, current)
    P.extend(tp)
    Nt.extend(tn)
    return res


def _compare_verdicts(P: list[str], Nt: list[str], bv: dict[str, Any], cv: dict[str, Any], current: dict[str, Any]) -> None:
    for k in sorted(bv):
        bverd = bv[k].get("verdict")
        c = cv.get(k)
        if c is None:
            if bverd == "proved":
                P.append(f"verdict {k}: claim missing (proof lost)")
            continue
        if bverd == "proved" and c.get("verdict") != "proved":
            P.append(f"verdict {k}: proved -> {c.get('verdict')} (proof lost)")
        elif bverd != c.get("verdict"):
            Nt.append(f"verdict {k}: {bverd} -> {c.get('verdict')}")
        kind = "upper" if bv[k].get("kind") == "tightest" else _kind_of(k, current)  # least c with f ≤ c·g
        _constant(P, Nt, f"verdict {k}", kind, bv[k].get("constant"), c.get("constant"))


def _compare_constants(P: list[str], Nt: list[str], bc: dict[str, Any], cc: dict[str, Any], current: dict[str, Any]) -> None:
    for k in sorted(bc):
        if k not in cc:
            P.append(f"constants {k}: removed")
            continue
        for f_ in sorted(set(bc[k]) | set(cc[k])):
            a, b = bc[k].get(f_), cc[k].get(f_)
            if a == b:
                continue
            kind = "lower" if f_.startswith("lower") else "upper" if f_.startswith("upper") else bc[k].get("kind")
            if kind in ("lower", "upper"):
                _constant(P, Nt, f"constants {k}.{f_}", kind, a, b)
            elif f_ in ("best_proved_bound", "best_schedule"):
                Nt.append(f"constants {k}: {f_} {a} -> {b}")
            else:
                P.append(f"constants {k}: {f_} changed: {_short(a)} -> {_short(b)}")


def lost_proofs(baseline: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Claim ids proved in the baseline and present but not proved in this run."""
    bv, cv = baseline.get("verdicts") or {}, current.get("verdicts") or {}
    return sorted(k for k, b in bv.items() if b.get("verdict") == "proved" and k in cv and cv[k].get("verdict") != "proved")


def _kind_of(claim_id: str, current: dict[str, Any]) -> str | None:
    b = (current.get("bounds") or {}).get(claim_id)
    return b.get("kind") if b else None


def _constant(P: list[str], Nt: list[str], what: str, kind: str | None, old: Any, new: Any) -> None:
    if old == new:
        return
    a, b = _as_fraction(old), _as_fraction(new)
    if a is not None and b is None:
        P.append(f"{what}: constant {old} -> none (proved constant lost)")
    elif a is None:
        Nt.append(f"{what}: constant {old} -> {new}")
    elif kind == "lower" and b < a or kind == "upper" and b > a:
        P.append(f"{what}: constant {old} -> {new} (worse for a {kind} bound)")
    elif kind in ("lower", "upper"):
        Nt.append(f"{what}: constant {old} -> {new} (better)")
    else:
        P.append(f"{what}: constant {old} -> {new} (changed)")


def _as_fraction(x: Any) -> Fraction | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        return Fraction(str(x))
    except (ValueError, ZeroDivisionError):
        return None


def _new(Nt: list[str], sect: str, base: dict[str, Any], cur: dict[str, Any]) -> None:
    new = sorted(set(cur) - set(base))
    if new:
        Nt.append(f"{sect}: {len(new)} new entries not in the baseline (first: {new[0]})")


def _short(x: Any, n: int = 160) -> str:
    s = json.dumps(x, sort_keys=True, separators=(",", ":"))
    return s if len(s) <= n else s[: n - 1] + "…"


# the baseline file -----------------------------------------------------------------------------------


def load_baseline(path: str | Path = BASELINE) -> dict[str, Any]:
    """Read and validate the whole baseline (:data:`attnio.reports.baseline_schema.BASELINE_SCHEMA`, with the
    ``jsonschema`` package) before anything else runs. Any problem is a :class:`BaselineError` naming the file
    and, for a malformed entry, its JSON path."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    from attnio.reports.baseline_schema import BASELINE_SCHEMA, MAX_DEPTH, too_deep

    p = Path(path)
    fix = "restore it from git or rewrite it with `attnio gate --update`"
    if not p.is_file():
        raise BaselineError(f"no baseline at {p}: create it on purpose with `attnio gate --update` and commit it")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(min(limit, 2000))  # json's C scanner recurses: a low limit raises before the C stack ends
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise BaselineError(f"{p} cannot be read ({e.strerror or e})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BaselineError(f"{p} is not valid JSON ({e}); {fix}") from None
    except RecursionError:
        raise BaselineError(f"{p} is nested too deeply to be an attnio baseline; {fix}") from None
    finally:
        sys.setrecursionlimit(limit)
    deep = too_deep(data)
    if deep is not None:
        raise BaselineError(f"{p}: {deep} is nested deeper than {MAX_DEPTH} levels, not an attnio baseline entry; {fix}")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("io"), dict):
        raise BaselineError(f"{p} is not an attnio baseline (schema {SCHEMA} with an 'io' table); {fix}")
    err = best_match(Draft202012Validator(BASELINE_SCHEMA).iter_errors(data))
    if err is not None:
        msg = " ".join(err.message.split())
        msg = msg if len(msg) <= 200 else msg[:199] + "…"
        raise BaselineError(f"{p}: entry {err.json_path} is malformed: {msg}; {fix}")
    return data


def dumps(figures: dict[str, Any]) -> str:
    """JSON with one line per entry of each section (readable ``git diff``), keys sorted."""
    c = lambda x: json.dumps(x, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))  # noqa: E731
    parts = []
    for k in sorted(figures):
        v = figures[k]
        if isinstance(v, dict) and v:
            inner = ",\n".join(f"  {c(ik)}: {c(v[ik])}" for ik in sorted(v))
            parts.append(f" {c(k)}: {{\n{inner}\n }}")
        else:
            parts.append(f" {c(k)}: {c(v)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
