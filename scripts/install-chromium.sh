#!/usr/bin/env bash
# Installs Debian's chromium (the headless browser tests/e2e/test_dashboard.py drives through
# Playwright) when it is missing: with apt-get as root, or through sudo (scripts/apt-install.sh).
# Playwright's own browser download is never used. Says how to install it by hand and exits 1
# where neither works.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" chromium chromium Debian command -v chromium
