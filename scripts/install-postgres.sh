#!/usr/bin/env bash
# Installs PostgreSQL's server (Debian's `postgresql` package) when it is missing: with apt-get as
# root, or through sudo (scripts/apt-install.sh). The ledger's contract tests, the scale-out tests
# and benchmark run a private cluster of it (scripts/postgres.sh). Says how to install it by hand
# and exits 1 where neither works.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" postgresql PostgreSQL "Debian and Ubuntu" \
  bash -c 'ls /usr/lib/postgresql/*/bin/initdb || command -v initdb'
