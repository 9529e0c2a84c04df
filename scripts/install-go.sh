#!/usr/bin/env bash
# Installs Go (Debian's `golang-go` package) when it is missing: with apt-get as root, or through
# sudo (scripts/apt-install.sh). The history tests' Go module (tests/e2e/test_task_from_commit.py)
# drafts and tries a `go test` check with it. Says how to install it by hand and exits 1 where
# neither works.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" golang-go Go "Debian and Ubuntu" command -v go
