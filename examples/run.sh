#!/usr/bin/env bash
# The main job: installs armbench into .venv, lays out the bundled example in a temporary folder
# (a project checkout and a team repo), and runs a real benchmark of it on the SQLite ledger.
# The example's two arms are scripted stand-ins, not models.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-bubblewrap.sh  # every trial step runs in a bubblewrap sandbox
python3 -m venv .venv
.venv/bin/python -m pip install -q -e .
export PATH="$PWD/.venv/bin:$PATH"
work=$(mktemp -d -t armbench-example-XXXXXX)
checkout=$(bash examples/setup.sh "$work")
echo "The example project is at $checkout; its team repo at $work/team." >&2
cd "$checkout"
armbench run example --sandbox > "$work/done.json"
echo "The done envelope is at $work/done.json; the record under $checkout/.armbench/runs/." >&2
