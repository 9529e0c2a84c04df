#!/usr/bin/env bash
# Installs one Debian package with apt-get when a check finds what it provides missing: as root,
# or through sudo when sudo needs no password. Says how to install it by hand and exits 1 where
# neither works; exits 0, doing nothing, when the check passes first. The install-*.sh scripts
# call it.
# Usage: scripts/apt-install.sh <package> <name> <systems> <check command...>
#   e.g. scripts/apt-install.sh bubblewrap bubblewrap "Debian and Ubuntu" command -v bwrap
set -euo pipefail
package=$1 name=$2 systems=$3
shift 3
found() { "$@" >/dev/null 2>&1; }
found "$@" && exit 0
if [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq "$package") >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  (sudo apt-get update -qq && sudo apt-get install -y -qq "$package") >/dev/null
fi
if ! found "$@"; then
  echo "$name is not installed and could not be installed here: install the $package" \
       "package ($systems: apt-get install $package), then run this again." >&2
  exit 1
fi
