#!/usr/bin/env bash
# Installs the pinned vitest that the history tests' Node project runs (tests/e2e/test_history_node.py),
# from the npm registry, into a project-local prefix: .cache/node-test (node_modules/.bin/vitest).
# Idempotent: when the pinned version is there it does nothing. In CI a failed install fails the
# run (the test never skips for a missing component); elsewhere it says so and the test fails.
# Usage: scripts/install-node-test.sh [prefix]
set -uo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-.cache/node-test}
pin="vitest@2.1.9"
manifest="$prefix/node_modules/vitest/package.json"
if [ -f "$manifest" ] && grep -q '"version": "2.1.9"' "$manifest" && [ -x "$prefix/node_modules/.bin/vitest" ]; then
  echo "node test tools: $pin is installed in $prefix" >&2
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "node test tools: npm is not installed, so $pin could not be installed" >&2
  [ -z "${CI:-}" ] || exit 1
  exit 0
fi
mkdir -p "$prefix"
printf '*\n' > "$prefix/.gitignore"
[ -f "$prefix/package.json" ] || printf '{"private": true}\n' > "$prefix/package.json"
echo "node test tools: installing $pin into $prefix" >&2
if ! npm install --prefix "$prefix" --save-exact --no-audit --no-fund --loglevel=error "$pin" >&2; then
  echo "node test tools: npm install failed" >&2
  [ -z "${CI:-}" ] || exit 1
fi
exit 0
