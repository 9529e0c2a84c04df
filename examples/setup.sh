#!/usr/bin/env bash
# Lays out the bundled example in a folder: a checkout of the example project (from the bundle)
# and a team repo (from examples/team), tied together with `armbench init` and `armbench pull`.
# Usage: examples/setup.sh <folder>   (prints the project checkout's path)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:?usage: examples/setup.sh <folder>}
mkdir -p "$dest"
export GIT_AUTHOR_NAME="armbench example" GIT_AUTHOR_EMAIL="example@armbench.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
git clone -q "$here/project.bundle" "$dest/calc"
git init -q -b main "$dest/team"
cp -R "$here/team/." "$dest/team/"
git -C "$dest/team" add -A
git -C "$dest/team" commit -q -m "The example team: a suite, a scripted tool and model aliases"
cd "$dest/calc"
armbench init --team ../team >/dev/null
armbench pull >/dev/null
echo "$dest/calc"
