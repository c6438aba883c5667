#!/usr/bin/env bash
# The long tier: the tests the default run leaves out (`slow`: over ~5 s; `nightly`: the per-claim re-proofs of
# the catalog beyond the default run's sample), with the CI Hypothesis profile. `--if-stale` runs them only when
# the repository's inputs differ from those of the last passing run, whose digest (sha256 over every tracked file
# but the digest file itself) is committed in reports/long-tier.json; a passing run writes it. CI runs
# `tools/long_tier.sh --if-stale` after the README's test line, so the long tier runs in CI exactly when its
# inputs changed since a developer last ran it (tests/README.md, "What runs where").
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -d .venv ]; then . .venv/bin/activate; fi
record=reports/long-tier.json
digest="$(git ls-files -z | grep -zv "^${record}\$" | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
if [ "${1:-}" = "--if-stale" ]; then
  shift
  if [ -f "$record" ] && grep -q "\"$digest\"" "$record"; then
    echo "long tier: inputs unchanged since its last passing run ($record): not run"
    exit 0
  fi
fi
set +e
ATTNIO_NIGHTLY=1 python -m pytest -q -m "slow or nightly" "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "long tier: pytest collected no tests: failing" >&2
  exit 1
fi
[ "$rc" -eq 0 ] || exit "$rc"
tmp="$(mktemp "${record}.XXXXXX")"
printf '{\n  "digest": "%s",\n  "note": "sha256 of every tracked file but this one, at the last passing run of tools/long_tier.sh"\n}\n' "$digest" >"$tmp"
mv "$tmp" "$record"
echo "long tier passed: $record written"
