#!/usr/bin/env bash
# Installs bubblewrap (the `bwrap` every trial step runs in) when it is missing: with apt-get as
# root, or through sudo (scripts/apt-install.sh). Says how to install it by hand and exits 1 where
# neither works.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" bubblewrap bubblewrap "Debian and Ubuntu" command -v bwrap
