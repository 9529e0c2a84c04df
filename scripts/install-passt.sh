#!/usr/bin/env bash
# Installs passt (its `pasta` gives each trial's tool a private network namespace with user-mode
# networking: the internet, but not the host's loopback or abstract sockets) when it is missing:
# with apt-get as root, or through sudo (scripts/apt-install.sh). Says how to install it by hand
# and exits 1 where neither works.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" passt passt "Debian 12+ and Ubuntu 23.04+" command -v pasta
