#!/usr/bin/env bash
# Installs PostgreSQL's server (Debian's `postgresql` package) when it is missing: with apt-get as
# root, or through sudo. The ledger's contract tests, the scale-out tests and benchmark run a
# private cluster of it (scripts/postgres.sh). Says how to install it by hand and exits 1 where
# neither works.
set -euo pipefail
found() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; }
found && exit 0
if [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq postgresql) >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  (sudo apt-get update -qq && sudo apt-get install -y -qq postgresql) >/dev/null
fi
if ! found; then
  echo "PostgreSQL is not installed and could not be installed here: install the postgresql" \
       "package (Debian and Ubuntu: apt-get install postgresql), then run this again." >&2
  exit 1
fi
