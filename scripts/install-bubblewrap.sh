#!/usr/bin/env bash
# Installs bubblewrap (the `bwrap` every trial step runs in) when it is missing: with apt-get as
# root, or through sudo. Says how to install it by hand and exits 1 where neither works.
set -euo pipefail
command -v bwrap >/dev/null && exit 0
if [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  (sudo apt-get update -qq && sudo apt-get install -y -qq bubblewrap) >/dev/null
fi
if ! command -v bwrap >/dev/null; then
  echo "bubblewrap is not installed and could not be installed here: install the bubblewrap" \
       "package (Debian and Ubuntu: apt-get install bubblewrap), then run this again." >&2
  exit 1
fi
