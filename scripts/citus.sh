#!/usr/bin/env bash
# A throwaway Citus cluster (PostgreSQL 15 with the citus extension), as scripts/postgres.sh:
# no system service, loopback only, SCRAM password, one temporary directory. Citus is not a
# Debian package: build it first (docs/postgres.md, "On Citus"). For scripts/citus-check.sh and
# by hand; the README's test command does not use it.
#
#   scripts/citus.sh start [WORKERS]   a coordinator and WORKERS worker nodes (default 0: the
#                                      shards on the coordinator), each its own server on a free
#                                      port of 127.0.0.1; prints, as scripts/postgres.sh does,
#                                      FETCHCAST_TEST_POSTGRES=postgres://fetchcast@127.0.0.1:PORT/postgres
#                                      (the coordinator), PGPASSWORD=…, FETCHCAST_TEST_POSTGRES_DIR=…
#   scripts/citus.sh stop DIR          stops every node in DIR and removes DIR
#
# The nodes connect to one another over TCP with libpq, so each server reads the password from
# DIR/pgpass (PGPASSFILE in its environment). As root the servers run as `nobody` (runuser),
# since initdb refuses root.
set -euo pipefail
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

# Runs SQL on a node, as the clusters' superuser (the password from PGPASSWORD).
sql() {
  local port=$1; shift
  "$bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U fetchcast -d postgres "$@"
}

# Creates and starts the node NAME in $dir/NAME; prints its port.
start_node() {
  local name=$1 node=$dir/$1 port
  mkdir -p "$node"
  printf '%s\n' "$password" > "$node/pwfile"
  if [ "$(id -u)" -eq 0 ]; then chown -R nobody "$node"; fi
  as_owner "$bin/initdb" -D "$node/data" -U fetchcast --pwfile="$node/pwfile" --auth-local=scram-sha-256 \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$node/initdb.log" 2>&1 \
    || { cat "$node/initdb.log" >&2; return 1; }
  rm -f "$node/pwfile"
  for attempt in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    if as_owner env PGPASSFILE="$dir/pgpass" "$bin/pg_ctl" -D "$node/data" -l "$node/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $node -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_preload_libraries=citus -c log_min_error_statement=error -c citus.enable_statistics_collection=off" \
      start >/dev/null 2>&1; then
      echo "$port"
      return 0
    fi
  done
  cat "$node/server.log" >&2 || true
  echo "error: could not start the $name node" >&2
  return 1
}

case "${1:-}" in
start)
  workers=${2:-0}
  [ -x "$bin/initdb" ] || { echo "error: $bin/initdb not found" >&2; exit 1; }
  [ -f "$("$bin/pg_config" --pkglibdir 2>/dev/null || echo /usr/lib/postgresql/15/lib)/citus.so" ] \
    || { echo "error: citus is not installed for $bin (docs/postgres.md, \"On Citus\")" >&2; exit 1; }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/fetchcast-citus.XXXXXX")
  chmod 755 "$dir"
  password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
  printf '127.0.0.1:*:*:fetchcast:%s\n' "$password" > "$dir/pgpass"
  chmod 600 "$dir/pgpass"
  if [ "$(id -u)" -eq 0 ]; then chown nobody "$dir" "$dir/pgpass"; fi
  export PGPASSWORD=$password
  fail() { echo "error: $1" >&2; "$0" stop "$dir"; exit 1; }
  coordinator=$(start_node coordinator) || fail "the coordinator did not start"
  sql "$coordinator" -c "CREATE EXTENSION citus" -c "SELECT citus_set_coordinator_host('127.0.0.1', $coordinator)" >/dev/null \
    || fail "citus did not start on the coordinator"
  if [ "$workers" -eq 0 ]; then
    sql "$coordinator" -c "SELECT citus_set_node_property('127.0.0.1', $coordinator, 'shouldhaveshards', true)" >/dev/null \
      || fail "the coordinator does not take shards"
  fi
  for i in $(seq 1 "$workers"); do
    port=$(start_node "worker$i") || fail "worker $i did not start"
    sql "$port" -c "CREATE EXTENSION citus" >/dev/null || fail "citus did not start on worker $i"
    sql "$coordinator" -c "SELECT citus_add_node('127.0.0.1', $port)" >/dev/null || fail "worker $i was not added"
  done
  echo "export FETCHCAST_TEST_POSTGRES=postgres://fetchcast@127.0.0.1:$coordinator/postgres"
  echo "export PGPASSWORD=$password"
  echo "export FETCHCAST_TEST_POSTGRES_DIR=$dir"
  ;;
stop)
  dir=${2:?usage: scripts/citus.sh stop DIR}
  case "$dir" in */fetchcast-citus.*) ;; *) echo "error: $dir is not a directory this script made" >&2; exit 1 ;; esac
  for data in "$dir"/*/data; do
    [ -d "$data" ] && { as_owner "$bin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true; }
  done
  rm -rf "$dir"
  ;;
*)
  echo "usage: scripts/citus.sh start [WORKERS] | stop DIR" >&2
  exit 64
  ;;
esac
