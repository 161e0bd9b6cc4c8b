#!/usr/bin/env bash
# Starts a throwaway Postgres for the store tests and prints its URL on the last line.
# Installs Debian's postgresql when missing (CI runs as root). The cluster lives under
# ${TMPDIR:-/tmp}/turnkit-ci-postgres and listens on 127.0.0.1:54329 only.
set -euo pipefail
PORT="${TURNKIT_PG_PORT:-54329}"
DIR="${TMPDIR:-/tmp}/turnkit-ci-postgres"
# The server's bin directory (a machine may have only the client, whose bin has no initdb).
bindir() { ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1 | xargs -r dirname; }
if [ -z "$(bindir)" ]; then
  echo "ci: installing postgresql (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >/dev/null
  apt-get install -y postgresql >/dev/null
fi
BIN="$(bindir)"
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ ! -f "$DIR/PG_VERSION" ]; then
  mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
  as_postgres "$BIN/initdb" -D "$DIR" -U postgres --auth=trust >/dev/null
fi
if ! as_postgres "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
  as_postgres "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR" start >/dev/null
fi
"$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'turnkit_test'" | grep -q 1 ||
  "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres turnkit_test
echo "postgres://postgres@127.0.0.1:$PORT/turnkit_test"
