#!/usr/bin/env bash
# The long run (tests/README.md, "What runs where"): every test, the nightly tier included (each claim of the
# catalog re-proved per test by z3 and cvc5), the nightly Hypothesis profile (1,000 examples a test), the marker
# audit, the 30 slowest tests; then every claim proved by z3 and cvc5 and compared with the committed proof
# record (reports/crosscheck.json): any difference fails. Run from a checkout whose .venv has the README's test
# extras installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d .venv ]; then . .venv/bin/activate; fi

ATTNIO_NIGHTLY=1 ATTNIO_MARKER_AUDIT=1 ATTNIO_HYPOTHESIS_PROFILE=nightly python -m pytest -q --durations=30 "$@"

# Every claim by both solvers into a fresh record, compared entry by entry (fingerprint, verdicts) with the
# committed one; the header (versions, encoding digest) must match too.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
rc=0
attnio verify --solver both --record "$tmp/proofs.json" >"$tmp/verify.txt" || rc=$?
tail -n 1 "$tmp/verify.txt"
python - "$tmp/proofs.json" reports/crosscheck.json <<'PY'
import json, sys
new, old = (json.load(open(p, encoding="utf-8")) for p in sys.argv[1:3])
diff = [f"header {k}: {old.get(k)!r} -> {new.get(k)!r}" for k in ("schema", "versions", "encoding") if old.get(k) != new.get(k)]
for cid in sorted(set(new["claims"]) | set(old["claims"])):
    a, b = old["claims"].get(cid), new["claims"].get(cid)
    if a != b:
        diff.append(f"{cid}: {a} -> {b}")
print("\n".join(diff) if diff else f"the record holds every verdict of this run ({len(new['claims'])} claims)")
sys.exit(1 if diff else 0)
PY
exit "$rc"
