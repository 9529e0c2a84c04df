#!/usr/bin/env bash
# A reference external driver in shell and jq: works one armbench run until it is done.
#   examples/drivers/driver.sh <run> <tool>[,<tool>...] [name]
# Declares a sandbox (run it in CI or a container), lets armbench prepare each trial's clone
# and launch the tool there, and reports what the launch said. Prints the done envelope.
set -euo pipefail
run=$1
tools=$(jq -nc --arg t "${2:-}" '$t | split(",") | map(select(. != ""))')
can=$(jq -nc --arg name "${3:-shell-driver}" --argjson tools "$tools" \
  '{driver: $name, isolation: "sandbox", env: true, unattended: true, workspace: ["clone"], tools: $tools}')
ab=${ARMBENCH:-armbench}
result=$(mktemp)
trap 'rm -f "$result"' EXIT
while :; do
  got=$("$ab" workflow next "$run" --prepare --can "$can" | tail -n1)
  if jq -e '.error' <<<"$got" >/dev/null; then jq -r '.error.message' <<<"$got" >&2; exit 2; fi
  if jq -e '.data.done' <<<"$got" >/dev/null; then jq -c '.data.done' <<<"$got"; exit 0; fi
  if jq -e '.data.wait' <<<"$got" >/dev/null; then sleep "$(jq -r '.data.wait.retryAfterS' <<<"$got")"; continue; fi
  lease=$(jq -r '.data.lease.id' <<<"$got")
  mapfile -t launch < <(jq -r '.data.lease.launch[1:][]' <<<"$got")
  "$ab" "${launch[@]}" --result "$result" >/dev/null
  "$ab" workflow report "$run" --lease "$lease" --result "$result" >/dev/null
done
