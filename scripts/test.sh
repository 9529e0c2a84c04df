#!/usr/bin/env bash
# Installs armbench with its test tools into .venv and runs every check: lint, types, then all tests.
# The one command behind the README's second Quick start line and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-bubblewrap.sh  # the sandbox's tests use the real bwrap: none skips without it
bash scripts/install-passt.sh  # a tool step's private network (pasta); its tests use the real one
bash scripts/install-postgres.sh  # the shared ledger's tests run a private PostgreSQL cluster (scripts/postgres.sh)
bash scripts/install-go.sh  # the history tests draft a Go module's `go test` check (tests/e2e/test_task_from_commit.py)
bash scripts/install-mmdebstrap.sh  # the environments' tests build a Debian root with python3 (tests/e2e/test_environments.py)
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# strict: a link tree of armbench's files that mypy can read (the default editable install is an
# import hook); a module added since needs this line again
.venv/bin/python -m pip install -q -e '.[test]' --config-settings editable_mode=strict
export PATH="$PWD/.venv/bin:$PATH"
if ! command -v jq >/dev/null; then  # the record's documented jq command is tested for real
  (apt-get update -qq && apt-get install -y -qq jq) >/dev/null 2>&1 || echo "jq could not be installed" >&2
fi
ruff check .
mypy  # pyproject.toml's [tool.mypy]: the armbench package, strict
bash scripts/install-agent-clis.sh
bash scripts/install-node-test.sh  # vitest for the history tests' Node project (tests/e2e/test_task_from_commit.py)
bash scripts/install-chromium.sh  # the dashboard's tests run in a real headless chromium
pytest -q -p no:cacheprovider "$@"
