#!/usr/bin/env bash
# A throwaway single-node Citus cluster (PostgreSQL 15 with the citus extension), as
# scripts/postgres.sh: no system service, loopback only, SCRAM password, one temporary directory.
# Citus is not a Debian package: build it first (docs/postgres.md, "On Citus"). For
# scripts/citus-check.sh and by hand; the README's test command does not use it.
#
#   scripts/citus.sh start     prints FETCHCAST_TEST_POSTGRES=postgres://fetchcast@127.0.0.1:PORT/postgres,
#                              PGPASSWORD=…, FETCHCAST_TEST_POSTGRES_DIR=/tmp/fetchcast-citus.…
#                              (shared_preload_libraries=citus; CREATE EXTENSION citus and
#                              citus_set_coordinator_host('127.0.0.1', PORT) done in database postgres)
#   scripts/citus.sh stop DIR  stops the cluster in DIR and removes DIR
#   scripts/citus.sh citusdb DB  (with the exports set) CREATE DATABASE DB + citus extension + coordinator host
# As root the cluster runs as `nobody` (runuser), since initdb refuses root.
set -euo pipefail
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

# Runs SQL as the cluster's superuser over TCP (the password comes from PGPASSWORD).
sql() {
  local port=$1 db=$2; shift 2
  "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U fetchcast -d "$db" "$@"
}

citus_setup() {
  local port=$1 db=$2
  sql "$port" "$db" -c "CREATE EXTENSION IF NOT EXISTS citus" \
    -c "SELECT citus_set_coordinator_host('127.0.0.1', $port)" \
    -c "SELECT citus_set_node_property('127.0.0.1', $port, 'shouldhaveshards', true)" >/dev/null
}

case "${1:-}" in
start)
  [ -x "$bin/initdb" ] || { echo "error: $bin/initdb not found" >&2; exit 1; }
  [ -f "$($bin/pg_config --pkglibdir 2>/dev/null || echo /usr/lib/postgresql/15/lib)/citus.so" ] \
    || [ -f /usr/lib/postgresql/15/lib/citus.so ] || { echo "error: citus.so not installed" >&2; exit 1; }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/fetchcast-citus.XXXXXX")
  chmod 755 "$dir"
  password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
  printf '%s\n' "$password" > "$dir/pwfile"
  if [ "$(id -u)" -eq 0 ]; then chown -R nobody "$dir"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U fetchcast --pwfile="$dir/pwfile" --auth-local=scram-sha-256 \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; rm -rf "$dir"; exit 1; }
  rm -f "$dir/pwfile"
  for attempt in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # Citus connects to itself (shards on the coordinator) over TCP with libpq: the server reads
    # the password from this file (PGPASSFILE in its environment), as it is SCRAM only.
    printf '127.0.0.1:%s:*:fetchcast:%s\n' "$port" "$password" > "$dir/pgpass"
    chmod 600 "$dir/pgpass"
    if [ "$(id -u)" -eq 0 ]; then chown nobody "$dir/pgpass"; fi
    if as_owner env PGPASSFILE="$dir/pgpass" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_preload_libraries=citus -c log_min_error_statement=error -c citus.enable_statistics_collection=off" \
      start >/dev/null 2>&1; then
      export PGPASSWORD=$password
      if ! citus_setup "$port" postgres >"$dir/citus-setup.log" 2>&1; then
        cat "$dir/citus-setup.log" "$dir/server.log" >&2
        as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$dir"; echo "error: citus setup failed" >&2; exit 1
      fi
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
citusdb)
  db=${2:?usage: scripts/citus.sh citusdb DB (with FETCHCAST_TEST_POSTGRES and PGPASSWORD set)}
  url=${FETCHCAST_TEST_POSTGRES:?set FETCHCAST_TEST_POSTGRES (eval "\$(scripts/citus.sh start)")}
  port=${url##*:}; port=${port%%/*}
  sql "$port" postgres -c "CREATE DATABASE $db"
  citus_setup "$port" "$db"
  ;;
stop)
  dir=${2:?usage: scripts/citus.sh stop DIR}
  case "$dir" in */fetchcast-citus.*) ;; *) echo "error: $dir is not a directory this script made" >&2; exit 1 ;; esac
  if [ -d "$dir/data" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: scripts/citus.sh start | stop DIR | citusdb DB" >&2
  exit 64
  ;;
esac
