"""Mutation testing with cosmic-ray's operators and work database, run in forked workers.

cosmic-ray (``cosmic-ray init``) enumerates the mutants of one module and stores them in a session database;
``cr-filter-operators`` marks the excluded operators as skipped; ``cr-report`` prints the session. What this
script replaces is only cosmic-ray's per-mutant executor, which writes the mutant over the file and starts a
fresh ``pytest`` process for each one (about 1.2 s of interpreter and import start-up per mutant on the
2-core machine). Here one parent imports pytest, NumPy, Hypothesis and z3 once; each mutant runs in a forked
child that installs the mutated source (cosmic-ray's ``mutate_code``) for the module's one import name
(``attnio.…``) through a meta-path finder, so the files on disk are never touched, then runs ``pytest.main``
with the arguments of the config's ``test-command``. Outcomes are written back into the cosmic-ray session
(killed: pytest exited non-zero or the child ran past the timeout; survived: exit 0).

    python tools/mutation.py exec tools/mutation/machine.toml tools/mutation/_work/machine.sqlite
    python tools/mutation.py report tools/mutation/_work/*.sqlite      # score per file, survivors

Equivalent mutants are listed in tools/mutation/equivalent.toml, each with a one-line reason; ``report``
counts them apart (score = killed / (mutants − equivalent)). tools/mutation.sh runs everything.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import shlex
import signal
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ANNOTATION = "inside a type annotation: never evaluated (from __future__ import annotations)"
ROOT = Path(__file__).resolve().parent.parent
# the folders that setuptools maps into the installed package (pyproject.toml, [tool.setuptools.package-dir])
PACKAGE_DIRS = {"bounds": "attnio.bounds", "algorithms": "attnio.algorithms", "solver": "attnio.solver",
                "reports": "attnio.reports", "attnio": "attnio"}


def module_name(path: str) -> str:
    p = Path(path)
    return PACKAGE_DIRS[p.parts[0]] + "." + ".".join([*p.parts[1:-1], p.stem])


def pytest_args(test_command: str) -> list[str]:
    words = shlex.split(test_command)
    i = words.index("pytest")
    return words[i + 1:]


class _MutantLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, source: str) -> None:
        super().__init__(fullname, path)
        self._source = source

    def get_source(self, fullname: str) -> str:
        return self._source

    def get_code(self, fullname: str):  # never a cached .pyc: compile the mutant
        return compile(self._source, self.path, "exec", dont_inherit=True)


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, fullname: str, path: str, source: str) -> None:
        self.fullname, self.path, self.source = fullname, path, source

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.fullname:
            return None
        return importlib.util.spec_from_file_location(fullname, self.path,
                                                      loader=_MutantLoader(fullname, self.path, self.source))


def _child(fullname: str, path: str, source: str, args: list[str], log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.setpgid(0, 0)
    sys.meta_path.insert(0, _MutantFinder(fullname, path, source))
    import pytest

    try:
        rc = int(pytest.main(args))
    except BaseException:  # noqa: BLE001 - a mutant that breaks the test run is killed
        rc = 3
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


def _preload() -> None:
    """Import the heavy third-party modules once, in the parent (never the module under test)."""
    import _pytest.python  # noqa: F401
    import hypothesis  # noqa: F401
    import numpy  # noqa: F401
    import pytest  # noqa: F401

    for name in ("z3", "pandas", "cvc5"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    assert not any(m.startswith("attnio") for m in sys.modules), "the module under test was imported early"


def forget_survivors(session: str) -> set[str]:
    """Make the survivors of a session that are not listed as equivalent pending again (after tests were
    added: a killed mutant stays killed); return their job ids."""
    from cosmic_ray.work_db import WorkDB, WorkResultStorage, use_db
    from cosmic_ray.work_item import TestOutcome

    with use_db(session, WorkDB.Mode.open) as db:
        ids = {item.job_id for item, res in db.completed_work_items
               if res.test_outcome == TestOutcome.SURVIVED and survivor_kind(item.mutations[0], res) == "survived"}
        with db._session_maker.begin() as s:
            s.query(WorkResultStorage).filter(WorkResultStorage.job_id.in_(ids)).delete()
    return ids


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) of every type annotation. Every module here starts with ``from __future__ import
    annotations``, so an annotation is a string that is never evaluated: a mutant inside one is equivalent."""
    import ast

    tree = ast.parse(source)
    assert any(isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
               for n in tree.body), "annotations are evaluated in this module"
    spans = []
    for node in ast.walk(tree):
        anns = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            anns.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            anns.append(node.returns)
        spans += [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in anns]
    return spans


def in_annotation(pos: tuple[int, int], spans) -> bool:
    return any(lo <= tuple(pos) < hi for lo, hi in spans)


def exec_session(config_path: str, session: str, jobs: int, limit: int | None, sample: int | None, seed: int,
                 only: set[str] | None = None) -> None:
    from cosmic_ray.config import load_config
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    cfg = load_config(config_path)
    rel = str(cfg["module-path"])
    path = str(ROOT / rel)
    fullname = module_name(rel)
    args = pytest_args(cfg.test_command)
    timeout = cfg.timeout
    original = Path(path).read_text(encoding="utf-8")
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.chdir(ROOT)
    _preload()
    tmp = tempfile.mkdtemp(prefix="attnio-mutation-")
    with use_db(session, WorkDB.Mode.open) as db:
        pending = sorted(db.pending_work_items, key=lambda w: (w.mutations[0].start_pos, w.mutations[0].operator_name))
        if only is not None:
            pending = [w for w in pending if w.job_id in only]
        if sample is not None and sample < len(pending):  # a uniform random sample, the same for a given seed
            import random

            pending = random.Random(seed).sample(pending, sample)
            pending.sort(key=lambda w: (w.mutations[0].start_pos, w.mutations[0].operator_name))
        if limit is not None:
            pending = pending[:limit]
        running: dict[int, tuple] = {}  # pid -> (item, diff, started, log)
        done = 0
        t0 = time.monotonic()

        def reap_one() -> None:
            """Wait for one child (killing those past the timeout) and record its outcome."""
            nonlocal done
            while True:
                now = time.monotonic()
                for pid, (_item, _diff, started, _log) in running.items():
                    if now - started > timeout:
                        try:
                            os.killpg(pid, signal.SIGKILL)
                        except OSError:
                            pass
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid:
                    break
                time.sleep(0.01)
            item, diff, started, log = running.pop(pid)
            elapsed = time.monotonic() - started
            out = Path(log).read_text(errors="replace")[-4000:]
            os.unlink(log)
            if os.WIFEXITED(status):
                outcome = TestOutcome.SURVIVED if os.WEXITSTATUS(status) == 0 else TestOutcome.KILLED
            else:
                outcome, out = TestOutcome.KILLED, f"timeout (or signal {status})"
            out = f"[{elapsed:.1f} s] " + out
            db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.NORMAL, test_outcome=outcome,
                                                  output=out, diff=diff))
            done += 1
            if done % 25 == 0:
                print(f"{rel}: {done}/{len(pending)} mutants in {time.monotonic() - t0:.0f} s", flush=True)

        spans = annotation_spans(original)
        for item in pending:
            mut = item.mutations[0]
            if in_annotation(mut.start_pos, spans):
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=ANNOTATION))
                continue
            op = get_operator(mut.operator_name)(**(mut.operator_args or {}))
            mutated = mutate_code(original, op, mut.occurrence)
            if mutated is None:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.NO_TEST))
                continue
            diff = "\n".join(difflib.unified_diff(original.split("\n"), mutated.split("\n"), "a/" + rel, "b/" + rel,
                                                  lineterm="", n=0))
            while len(running) >= jobs:
                reap_one()
            log = os.path.join(tmp, f"{item.job_id}.log")
            pid = os.fork()
            if pid == 0:
                _child(fullname, path, mutated, args, log)
            running[pid] = (item, diff, time.monotonic(), log)
        while running:
            reap_one()
        print(f"{rel}: {done} mutants run in {time.monotonic() - t0:.0f} s", flush=True)


def _mutated_line(diff: str) -> tuple[str, str]:
    minus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " / ".join(minus), " / ".join(plus)


def load_equivalent() -> list[dict]:
    p = ROOT / "tools" / "mutation" / "equivalent.toml"
    if not p.exists():
        return []
    return tomllib.loads(p.read_text(encoding="utf-8")).get("equivalent", [])


def load_rules() -> list[dict]:
    p = ROOT / "tools" / "mutation" / "equivalent.toml"
    if not p.exists():
        return []
    return tomllib.loads(p.read_text(encoding="utf-8")).get("rule", [])


_SPANS: dict[str, list] = {}


def survivor_kind(mut, res) -> str:
    """'annotation', 'equivalent' (listed in tools/mutation/equivalent.toml) or 'survived'."""
    import re

    rel = str(mut.module_path)
    if rel not in _SPANS:
        _SPANS[rel] = annotation_spans((ROOT / rel).read_text(encoding="utf-8"))
    if in_annotation(mut.start_pos, _SPANS[rel]):
        return "annotation"
    before, after = _mutated_line(res.diff or "")
    if any(e["file"] == rel and e["operator"] == mut.operator_name and e["before"] == before and e["after"] == after
           for e in load_equivalent()):
        return "equivalent"
    if any(re.fullmatch(r["operator"], mut.operator_name) and re.search(r["before"], before) and re.search(r["after"], after)
           for r in load_rules()):
        return "equivalent"
    return "survived"


def report(sessions: list[str], show: bool) -> int:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    rows = []
    for s in sessions:
        with use_db(s, WorkDB.Mode.open) as db:
            items = db.completed_work_items
            n_all = db.num_work_items
        rel = None
        killed = survived = equiv = skipped = annotations = 0
        survivors = []
        for item, res in items:
            mut = item.mutations[0]
            rel = str(mut.module_path)
            if res.worker_outcome in (WorkerOutcome.SKIPPED, WorkerOutcome.NO_TEST):
                if res.output == ANNOTATION:
                    annotations += 1
                skipped += 1
                continue
            if res.test_outcome == TestOutcome.SURVIVED:
                kind = survivor_kind(mut, res)
                if kind == "annotation":
                    annotations += 1
                elif kind == "equivalent":
                    equiv += 1
                else:
                    survived += 1
                    survivors.append((mut.start_pos[0], mut.operator_name, *_mutated_line(res.diff or "")))
            else:
                killed += 1
        run = killed + survived + equiv
        pending = n_all - len(items)
        score = killed / (run - equiv) if run - equiv else float("nan")
        rows.append((rel or s, run, killed, equiv, survived, pending, score, annotations))
        if show:
            for line, op, before, after in sorted(survivors):
                print(f"  SURVIVED {rel}:{line} {op}\n      - {before}\n      + {after}")
    print(f"{'file':30} {'run':>5} {'killed':>6} {'equiv.':>6} {'survived':>8} {'score':>7}   {'not run':>7} {'in annot.':>9}")
    for rel, run, killed, equiv, survived, pending, score, annotations in rows:
        print(f"{rel:30} {run:5d} {killed:6d} {equiv:6d} {survived:8d} {100 * score:6.1f}%   {pending:7d} {annotations:9d}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("exec")
    e.add_argument("config")
    e.add_argument("session")
    e.add_argument("--jobs", type=int, default=1)
    e.add_argument("--limit", type=int, default=None, help="run only the first LIMIT pending mutants")
    e.add_argument("--sample", type=int, default=None, help="run a random sample of SAMPLE pending mutants")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--rerun-survivors", action="store_true", help="run the survivors of an earlier exec again")
    r = sub.add_parser("report")
    r.add_argument("sessions", nargs="+")
    r.add_argument("--survivors", action="store_true")
    a = ap.parse_args()
    if a.cmd == "exec":
        only = None
        if a.rerun_survivors:
            only = forget_survivors(a.session)
            print(f"{len(only)} survivors to run again", flush=True)
        exec_session(a.config, a.session, a.jobs, a.limit, a.sample, a.seed, only)
        return 0
    return report(a.sessions, a.survivors)


if __name__ == "__main__":
    sys.exit(main())
