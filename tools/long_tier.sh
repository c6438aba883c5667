#!/usr/bin/env bash
# The long tier: the slow tests (over ~5 s) the default run leaves out, with the CI Hypothesis profile. (The
# per-claim re-proofs beyond the default run's sample, tier `nightly`, are tools/nightly.sh's: in CI the claims a
# change touched are re-proved by `attnio verify --stale --solver both`, against the proof record.) `--if-stale` runs them only when
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
python -m pytest -q -m "slow" "$@"
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
