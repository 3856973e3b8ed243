#!/usr/bin/env bash
# Installs what fetchcast needs beyond the Swift toolchain: SQLite and zlib headers (the C
# libraries it links), the sqlite3 shell (the benchmark's reference), and PostgreSQL 15 (the
# test command's throwaway cluster, scripts/postgres.sh, and psql, the benchmark's reference).
# Idempotent.
set -euo pipefail
need=()
for pkg in libsqlite3-dev zlib1g-dev sqlite3 postgresql-15; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # No system cluster: the tests start their own (scripts/postgres.sh).
  if [[ " ${need[*]} " == *" postgresql-15 "* ]] && [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    $sudo_cmd mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" | $sudo_cmd tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq -o Dpkg::Options::=--force-confold "${need[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "error: the Swift toolchain (swift) is not on PATH; install Swift 6.1 or later first" >&2; exit 1; }
