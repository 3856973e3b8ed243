#!/usr/bin/env bash
# FetchCast on Citus, compared with plain PostgreSQL: the same commands on a throwaway
# single-node Citus cluster (scripts/citus.sh; Citus must be installed: docs/postgres.md, "On
# Citus"), its tables distributed after the first ingest (scripts/citus-distribute.sql), and on a
# plain cluster (scripts/postgres.sh). Every command must succeed on both and print the same
# (the store's URL and times of the moment aside); exits 1 otherwise, naming the command.
#
#   scripts/citus-check.sh [FETCHCAST]    FETCHCAST: the binary (default .build/debug/fetchcast)
#   CITUS_WORKERS=2 scripts/citus-check.sh      the same on a coordinator and 2 worker nodes
#
# Not part of the README's test command: Citus is not a Debian package.
set -euo pipefail
cd "$(dirname "$0")/.."
fetchcast=$(realpath "${1:-.build/debug/fetchcast}")
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/fetchcast-citus-check.XXXXXX")
citus_env=$(scripts/citus.sh start "${CITUS_WORKERS:-0}")
plain_env=$(scripts/postgres.sh start)
citus_dir=$(eval "$citus_env"; echo "$FETCHCAST_TEST_POSTGRES_DIR")
plain_dir=$(eval "$plain_env"; echo "$FETCHCAST_TEST_POSTGRES_DIR")
trap 'scripts/citus.sh stop "$citus_dir"; scripts/postgres.sh stop "$plain_dir"; rm -rf "$work"' EXIT
sample=$(realpath Data/ubiqlog-sample.csv.gz)

# Rows already stored (the sample's first 2,000, uncompressed: another file) and new names.
(zcat "$sample" || true) | head -2001 > "$work/again.csv"
printf 'time,device,app,event\n2015-03-13T08:00:00Z,dev-new,com.example.news,launch\n2015-03-13T08:05:00Z,19_F,com.whatsapp,launch\n' > "$work/new.csv"

# run_all NAME ENV: the commands on one database, each command's stdout in $work/NAME/.
run_all() {
  local name=$1 env=$2 out=$work/$1 failed=0
  eval "$env"
  local db=$FETCHCAST_TEST_POSTGRES
  mkdir -p "$out"
  step() {
    local label=$1; shift
    if ! (cd "$out" && "$@") > "$out/$label.out" 2> "$out/$label.err"; then
      echo "error: $name: $label failed: $(head -c 400 "$out/$label.err")" >&2
      failed=1
    fi
  }
  step 01-ingest "$fetchcast" ingest "$sample" --db "$db"
  if [ "$name" = citus ]; then
    local port=${db##*:}; port=${port%%/*}
    "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U fetchcast -d postgres \
      -f scripts/citus-distribute.sql > "$out/distribute.log" 2>&1 \
      || { echo "error: citus: scripts/citus-distribute.sql failed: $(cat "$out/distribute.log")" >&2; return 1; }
    citus_sql() { "$bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U fetchcast -d postgres -c "$1"; }
    local tables
    tables=$(citus_sql "SELECT string_agg(table_name || ':' || citus_table_type, ' ' ORDER BY table_name::text) FROM citus_tables")
    echo "citus: $tables"
    [ "$(citus_sql "SELECT count(*) FROM citus_tables WHERE table_name::text IN ('devices', 'event_log', 'file_counts', 'file_days', 'device_state') AND citus_table_type = 'distributed' AND colocation_id = (SELECT colocation_id FROM citus_tables WHERE table_name = 'devices'::regclass)")" = 5 ] \
      || { echo "error: citus: the five device-keyed tables are not distributed together" >&2; return 1; }
  fi
  step 02-ingest-same "$fetchcast" ingest "$sample" --db "$db"
  step 03-ingest-stored-rows "$fetchcast" ingest "$work/again.csv" --db "$db"
  step 04-ingest-new "$fetchcast" ingest "$work/new.csv" --db "$db"
  step 05-stats "$fetchcast" stats --db "$db"
  step 06-devices "$fetchcast" devices --db "$db" --format json
  step 07-predict "$fetchcast" predict --db "$db" --device 19_F --at 2013-12-18T23:44:37Z --count 5
  step 08-predict-new "$fetchcast" predict --db "$db" --device dev-new
  step 09-model "$fetchcast" model --db "$db" --device 19_F --app com.viber.voip
  step 10-export-events "$fetchcast" export events --db "$db" -o events.csv
  cp "$out/events.csv" "$out/10-export-events.out"
  step 11-export-model "$fetchcast" export model --db "$db" -o model.csv
  cp "$out/model.csv" "$out/11-export-model.out"
  step 12-evaluate "$fetchcast" evaluate --db "$db" --policies none,interval,learned --out eval
  cat "$out"/eval/*.csv > "$out/12-evaluate.out"
  # serve: a plan, an ingest over HTTP, a plan that includes it.
  local http_port
  http_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$fetchcast" serve --db "$db" --host 127.0.0.1 --port "$http_port" --insecure-no-auth > "$out/serve.log" 2>&1 &
  local server=$!
  for _ in $(seq 1 240); do curl -sf "http://127.0.0.1:$http_port/readyz" > /dev/null 2>&1 && break; sleep 0.5; done
  local u=http://127.0.0.1:$http_port
  curl -sf "$u/v1/devices/19_F/plan?at=2013-12-18T23:44:37Z&count=2" > "$out/13-plan.out" || { echo "error: $name: plan failed" >&2; failed=1; }
  printf 'time,device,app,event\n2015-03-14T08:00:00Z,dev-posted,com.example.news,launch\n' \
    | curl -sf --data-binary @- "$u/v1/events" > /dev/null || { echo "error: $name: POST /v1/events failed" >&2; failed=1; }
  curl -sf "$u/v1/devices/dev-posted/plan?at=2015-03-14T09:00:00Z&count=1" > "$out/14-plan-posted.out" || { echo "error: $name: plan after POST failed" >&2; failed=1; }
  kill -TERM "$server"; wait "$server" || { echo "error: $name: serve exited with $?" >&2; failed=1; }
  step 15-stats-after-serve "$fetchcast" stats --db "$db"
  if [ "$name" = citus ]; then
    echo "citus: device_state rows $(citus_sql "SELECT count(*) FROM device_state") in shards on $(citus_sql "SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'device_state'::regclass") node(s), event_log rows on $(citus_sql "SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name::text LIKE 'event_log%'") node(s), model_state rows $(citus_sql "SELECT count(*) FROM model_state")"
  fi
  return $failed
}

status=0
run_all plain "$plain_env" || status=1
run_all citus "$citus_env" || status=1
for f in "$work"/plain/*.out; do
  label=$(basename "$f" .out)
  # The store's URL and the times of the moment differ; nothing else may.
  normalise() { sed -E -e 's#postgres://[^ ]*#DB#g' -e 's#[0-9]+(\.[0-9]+)? ?(ms|s)\b#TIME#g' -e 's#"at_unix":[0-9]+#"at_unix":T#g' "$1"; }
  if ! diff <(normalise "$f") <(normalise "$work/citus/$label.out") > "$work/$label.diff"; then
    echo "error: $label differs on Citus:" >&2
    head -20 "$work/$label.diff" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "citus-check: every command answers on Citus as on PostgreSQL ($(ls "$work"/plain/*.out | wc -l) outputs, $(cat "$work"/plain/*.out | wc -l) lines compared)"
exit $status
