#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for the tests and benchmarks: no system service, no
# listening beyond 127.0.0.1, everything in one temporary directory.
#
#   scripts/postgres.sh start          starts one; prints shell exports on stdout:
#                                      FETCHCAST_TEST_POSTGRES=postgres://fetchcast@127.0.0.1:PORT/postgres
#                                      PGPASSWORD=…   FETCHCAST_TEST_POSTGRES_DIR=/tmp/fetchcast-pg.…
#   scripts/postgres.sh restart DIR [S] stops the cluster in DIR (fast: its sessions end), waits S
#                                      seconds (default 3) and starts it again on the same port
#   scripts/postgres.sh stop DIR       stops the cluster in DIR and removes DIR
#
# Use: eval "$(scripts/postgres.sh start)"; …; scripts/postgres.sh stop "$FETCHCAST_TEST_POSTGRES_DIR"
# initdb refuses to run as root: as root, the cluster runs as `nobody` (runuser) in a directory
# that user owns. Logins use SCRAM with a random password (given as PGPASSWORD, not in the URL).
# Debian's postgresql-15 (scripts/setup.sh installs it); PG_BIN overrides where its binaries are.
set -euo pipefail
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
  [ -x "$bin/initdb" ] || { echo "error: $bin/initdb not found; install postgresql-15 (scripts/setup.sh) or set PG_BIN" >&2; exit 1; }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/fetchcast-pg.XXXXXX")
  chmod 755 "$dir"
  password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
  printf '%s\n' "$password" > "$dir/pwfile"
  if [ "$(id -u)" -eq 0 ]; then chown -R nobody "$dir"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U fetchcast --pwfile="$dir/pwfile" --auth-local=scram-sha-256 \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; rm -rf "$dir"; exit 1; }
  rm -f "$dir/pwfile"
  # A free port: the kernel picks one, then the server takes it (retried if another took it first).
  for attempt in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    options="-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$options" start >/dev/null 2>&1; then
      printf '%s\n' "$options" > "$dir/options"
      echo "export FETCHCAST_TEST_POSTGRES=postgres://fetchcast@127.0.0.1:$port/postgres"
      echo "export PGPASSWORD=$password"
      echo "export FETCHCAST_TEST_POSTGRES_DIR=$dir"
      exit 0
    fi
  done
  cat "$dir/server.log" >&2 || true
  rm -rf "$dir"
  echo "error: could not start PostgreSQL (see the log above)" >&2
  exit 1
  ;;
restart)
  dir=${2:?usage: scripts/postgres.sh restart DIR [SECONDS]}
  case "$dir" in */fetchcast-pg.*) ;; *) echo "error: $dir is not a directory this script made" >&2; exit 1 ;; esac
  [ -f "$dir/options" ] || { echo "error: $dir has no cluster this script started" >&2; exit 1; }
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  sleep "${3:-3}"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(cat "$dir/options")" start >/dev/null
  ;;
stop)
  dir=${2:?usage: scripts/postgres.sh stop DIR}
  case "$dir" in */fetchcast-pg.*) ;; *) echo "error: $dir is not a directory this script made" >&2; exit 1 ;; esac
  if [ -d "$dir/data" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: scripts/postgres.sh start | restart DIR [SECONDS] | stop DIR" >&2
  exit 64
  ;;
esac
