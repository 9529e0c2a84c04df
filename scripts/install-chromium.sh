#!/usr/bin/env bash
# Installs Debian's chromium (the headless browser tests/e2e/test_dashboard.py drives through
# Playwright) when it is missing: with apt-get as root, or through sudo. Playwright's own browser
# download is never used. Says how to install it by hand and exits 1 where neither works.
set -euo pipefail
command -v chromium >/dev/null && exit 0
if [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  (sudo apt-get update -qq && sudo apt-get install -y -qq chromium) >/dev/null
fi
if ! command -v chromium >/dev/null; then
  echo "chromium is not installed and could not be installed here: install the chromium" \
       "package (Debian: apt-get install chromium), then run this again." >&2
  exit 1
fi
