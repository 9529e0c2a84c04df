#!/usr/bin/env bash
# A private PostgreSQL cluster for the tests and benchmarks, and nothing else.
#
#   scripts/postgres.sh start STATE_DIR   prints armbench's ledger URL (postgresql://...) on stdout
#   scripts/postgres.sh stop STATE_DIR    stops it and removes its data
#
# The cluster listens on 127.0.0.1 only, on a free port, with random passwords (scram-sha-256);
# its data folder is STATE_DIR/data. initdb and postgres refuse to run as root, so as root (CI)
# they run as `nobody`, in a data folder under /tmp (TMPDIR may be closed to nobody) that
# STATE_DIR/data points to.
#
# The URL printed is the role `armbench`'s, on the database `armbench`: not a superuser (no
# COPY ... FROM PROGRAM, no server files), owning nothing; the ledger's tables are made and owned
# by the superuser `postgres` (`armbench ledger grant`), and armbench may only select and insert
# their rows. The superuser's URL is in STATE_DIR/admin-url (mode 0600), for making databases.
set -euo pipefail
cmd=${1:?usage: postgres.sh start|stop STATE_DIR}
state=${2:?usage: postgres.sh start|stop STATE_DIR}
here="$(cd "$(dirname "$0")" && pwd)"
bindir=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1)" 2>/dev/null || true)
[ -x "$bindir/initdb" ] || bindir=$(dirname "$(command -v initdb || echo /nonexistent/initdb)")

as_owner() {
  if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
  bash "$here/install-postgres.sh"
  [ -x "$bindir/initdb" ] || bindir=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
  mkdir -p "$state"
  if [ "$(id -u)" = 0 ]; then
    data=$(mktemp -d /tmp/armbench-pg.XXXXXX)  # not under TMPDIR: it may be closed to nobody
    chown nobody:nogroup "$data"
    ln -sfn "$data" "$state/data"
  else
    data="$state/data"
    mkdir -p "$data"
  fi
  chmod 0700 "$data"
  password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  pwfile="$data/.pw"
  (umask 077; printf '%s\n' "$password" > "$pwfile")
  [ "$(id -u)" = 0 ] && chown nobody:nogroup "$pwfile"
  as_owner "$bindir/initdb" -D "$data/cluster" -U postgres --pwfile="$pwfile" \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  as_owner "$bindir/pg_ctl" -D "$data/cluster" -l "$data/log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off -c max_connections=200" start >/dev/null
  writer=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  PGPASSWORD="$password" "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -q \
    -v ON_ERROR_STOP=1 -c "CREATE ROLE armbench LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE \
    NOREPLICATION PASSWORD '$writer'" -c "CREATE DATABASE armbench" >/dev/null
  armbench=$(command -v armbench || echo "$here/../.venv/bin/armbench")
  "$armbench" ledger grant "postgresql://postgres:$password@127.0.0.1:$port/armbench" armbench \
    >/dev/null 2>"$data/grant.log" || { cat "$data/grant.log" >&2; exit 1; }
  (umask 077; echo "postgresql://postgres:$password@127.0.0.1:$port/postgres" > "$state/admin-url")
  echo "postgresql://armbench:$writer@127.0.0.1:$port/armbench" > "$state/url"
  cat "$state/url"
  ;;
stop)
  data=$(readlink -f "$state/data" 2>/dev/null || true)
  if [ -n "$data" ] && [ -d "$data/cluster" ]; then
    as_owner "$bindir/pg_ctl" -D "$data/cluster" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  [ -n "$data" ] && rm -rf "$data"
  rm -rf "$state/data" "$state/url" "$state/admin-url"
  ;;
*) echo "usage: postgres.sh start|stop STATE_DIR" >&2; exit 2 ;;
esac
