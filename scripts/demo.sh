#!/usr/bin/env bash
# The main job on the bundled data, with the default store ./fetchcast.sqlite:
# ingest Data/ -> store summary. Safe to re-run (re-ingesting a file adds nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release --product fetchcast 2>&1 | grep -Ev '^\[|^Building|^Compiling|^Write|^Linking' || true
bin=.build/release/fetchcast
echo "== fetchcast ingest Data/ubiqlog-sample.csv.gz" >&2
$bin ingest Data/ubiqlog-sample.csv.gz
echo "== fetchcast stats" >&2
$bin stats
