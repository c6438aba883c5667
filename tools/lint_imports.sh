#!/usr/bin/env bash
# Check the layer contracts of pyproject.toml ([tool.importlinter]) on the package as it installs.
# The design card's folders (bounds/, algorithms/, ...) are mapped into the one import package `attnio` by the
# build backend, so import-linter (which reads a package's files from its folder) is run on the built wheel,
# unpacked into a temporary folder, from outside the repository (lint-imports puts its working folder on sys.path).
# The wheel is built from a copy of the working tree in the temporary folder, so nothing (build/, *.egg-info) is
# written into the repository.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${VIRTUAL_ENV:-}" ] && [ -d "$root/.venv" ]; then . "$root/.venv/bin/activate"; fi  # the README's venv
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents {} "$tmp/src" 2>/dev/null || true)
python -m pip wheel -q --no-deps --no-build-isolation -w "$tmp/wheel" "$tmp/src" >/dev/null
python -m zipfile -e "$tmp"/wheel/*.whl "$tmp/site"
cd "$tmp/site"
PYTHONPATH="$tmp/site" lint-imports "$root/pyproject.toml"
