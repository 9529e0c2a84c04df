#!/usr/bin/env bash
# Rebuilds examples/project.bundle, the bundled example's project history, with fixed dates so
# its commits (and the startingCommit values in examples/team) are the same on every machine.
# Maintainers only: the bundle is committed; run this only to change the example project.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME="armbench example" GIT_AUTHOR_EMAIL="example@armbench.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
git init -q -b main "$work/calc"
cd "$work/calc"
step() {  # step <n> <message>: copy the files of commit n, commit with a fixed date
  cp -R "$here/project-src/$1/." .
  git add -A
  GIT_AUTHOR_DATE="2026-01-0$1T12:00:00Z" GIT_COMMITTER_DATE="2026-01-0$1T12:00:00Z" \
    git commit -q -m "$2"
  echo "$1 $(git rev-parse HEAD) $2"
}
step 1 "calc: add, clamp and parse_int, with tests for add"
step 2 "tests: parse_int should read negative numbers"
step 3 "calc: parse_int reads a leading minus"
step 4 "calc: clamp includes its upper bound, with a test"
git bundle create -q "$here/project.bundle" HEAD main
