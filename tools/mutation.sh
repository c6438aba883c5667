#!/usr/bin/env bash
# Mutation testing of the modules everything rests on (docs/mutation.md). Not run in CI: it takes tens of
# minutes on the 2-core machine. Usage:
#   bash tools/mutation.sh                 # every module in tools/mutation/*.toml
#   bash tools/mutation.sh machine costs   # some of them
#   JOBS=2 bash tools/mutation.sh ...      # forked test runs at once (default 1)
#   SAMPLE=150 bash tools/mutation.sh poly # a seeded uniform random sample of each module's mutants
# After adding tests: run the earlier survivors again (killed mutants stay killed; the module's source must be
# unchanged since the session was made, or its mutant numbering no longer matches):
#   ATTNIO_HYPOTHESIS_PROFILE=mutation .venv/bin/python tools/mutation.py exec tools/mutation/M.toml \
#       tools/mutation/_work/M.sqlite --rerun-survivors
# Per module: cosmic-ray enumerates the mutants (init), cr-filter-operators drops the excluded operators,
# tools/mutation.py runs the test command of the config once per mutant in a forked child, and the score per
# file and the survivors are printed (equivalent mutants: tools/mutation/equivalent.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
BIN=$(dirname "$PY")
WORK=tools/mutation/_work
mkdir -p "$WORK"
export ATTNIO_HYPOTHESIS_PROFILE=mutation
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  names=(machine standard flash1 flash2 square_tiling split_v kv_stationary poly costs expr translator)
fi
for n in "${names[@]}"; do
  cfg=tools/mutation/$n.toml
  db=$WORK/$n.sqlite
  rm -f "$db"
  "$BIN/cosmic-ray" init "$cfg" "$db"
  "$BIN/cr-filter-operators" "$db" "$cfg"
  "$PY" tools/mutation.py exec "$cfg" "$db" --jobs "${JOBS:-1}" ${SAMPLE:+--sample "$SAMPLE"}
done
"$PY" tools/mutation.py report --survivors $(for n in "${names[@]}"; do echo "$WORK/$n.sqlite"; done)
