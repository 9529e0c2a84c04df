#!/usr/bin/env bash
# Installs the pinned coding-agent CLIs that tests/agents drives, from the npm registry, into a
# project-local prefix: .cache/agent-clis (its binaries in .cache/agent-clis/node_modules/.bin).
# Idempotent: when every pinned version is already there it does nothing. It never fails the
# caller: when npm is missing or the install fails it says so, and tests/agents skips with that.
# Usage: scripts/install-agent-clis.sh [prefix]
set -uo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-.cache/agent-clis}
pins=(  # package@version and the binary it installs
  "@anthropic-ai/claude-code@2.1.197 claude"
  "@openai/codex@0.171.0 codex"
  "opencode-ai@1.18.33 opencode"
  "@google/gemini-cli@0.61.0 gemini"
)

installed() {  # prints the version of package $1 under the prefix, or nothing
  local manifest="$prefix/node_modules/$1/package.json"
  [ -f "$manifest" ] && sed -n 's/^  "version": "\(.*\)",\{0,1\}$/\1/p' "$manifest" | head -1
}

packages=() missing=()
for entry in "${pins[@]}"; do
  pin=${entry% *} bin=${entry##* }
  name=${pin%@*} version=${pin##*@}
  packages+=("$pin")
  if [ "$(installed "$name")" != "$version" ] || [ ! -x "$prefix/node_modules/.bin/$bin" ]; then
    missing+=("$pin")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "agent CLIs: the pinned versions are installed in $prefix" >&2
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "agent CLIs: npm is not installed, so ${missing[*]} could not be installed" >&2
  [ -z "${CI:-}" ] || exit 1
  exit 0
fi
mkdir -p "$prefix"
printf '*\n' > "$prefix/.gitignore"
[ -f "$prefix/package.json" ] || printf '{"private": true}\n' > "$prefix/package.json"
echo "agent CLIs: installing ${missing[*]} into $prefix" >&2
if ! npm install --prefix "$prefix" --save-exact --no-audit --no-fund --loglevel=error \
    "${packages[@]}" >&2; then
  echo "agent CLIs: npm install failed; tests/agents will skip the CLIs it cannot find" >&2
  [ -z "${CI:-}" ] || exit 1  # CI must test the real CLIs: a failed install fails the run
fi
exit 0
