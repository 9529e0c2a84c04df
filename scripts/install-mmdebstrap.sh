#!/usr/bin/env bash
# Installs mmdebstrap (the environments' tests build a minimal Debian root with python3 with it)
# when it is missing: with apt-get as root, or through sudo (scripts/apt-install.sh). Says how to
# install it by hand and exits 1 where neither works.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" mmdebstrap mmdebstrap "Debian and Ubuntu" command -v mmdebstrap
