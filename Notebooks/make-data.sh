#!/usr/bin/env bash
# Regenerates every CSV the notebooks read (Notebooks/data/) from the bundled Data/ with the
# fetchcast binary. Deterministic: the same Data/ and fetchcast give byte-identical files.
#
#   Notebooks/make-data.sh                       # builds fetchcast (release) if needed
#   FETCHCAST=path/to/fetchcast Notebooks/make-data.sh
#
# Uses temporary stores under $TMPDIR (never the default ./fetchcast.sqlite) and python3
# (standard library only) for the calibration time split.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [[ -z "${FETCHCAST:-}" ]]; then
    if command -v fetchcast >/dev/null; then
        FETCHCAST=$(command -v fetchcast)
    else
        FETCHCAST=$(scripts/build.sh)
    fi
fi
fc() { "$FETCHCAST" "$@"; }
gz() { gzip -n -9; }   # -n: no name or timestamp, so the output is reproducible

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetchcast-notebooks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=Notebooks/data
rm -rf "$out"
mkdir -p "$out/evaluate" "$out/evaluate-detail" "$out/calibration" \
    "$out/frontier-device" "$out/frontier-device-hourly" "$out/frontier-app" "$out/conditions"
sample=Data/ubiqlog-sample.csv.gz
publish=Data/news-publish-excerpt.csv.gz

echo "== launch-patterns: the whole sample" >&2
db=$tmp/sample.sqlite
fc ingest --quiet --db "$db" "$sample"
fc export events --db "$db" | gz > "$out/events.csv.gz"
fc export model --db "$db" --top-apps 10 | gz > "$out/model.csv.gz"
fc export cousage --db "$db" --top-apps 10 > "$out/cousage.csv"

echo "== freshness-vs-energy: every policy and budget" >&2
fc evaluate "$sample" --policies none,interval,oracle,hourly,learned --budgets 2,4,8,12,24,48 \
    --out "$tmp/evaluate" 2>/dev/null
cp "$tmp/evaluate/summary.csv" "$tmp/evaluate/devices.csv" "$tmp/evaluate/slices.csv" "$tmp/evaluate/run.json" "$out/evaluate/"
fc evaluate "$sample" --policies interval,hourly,learned --budgets 24 --detail \
    --out "$tmp/evaluate-detail" 2>/dev/null
cp "$tmp/evaluate-detail/launches.csv.gz" "$tmp/evaluate-detail/fetches.csv.gz" "$tmp/evaluate-detail/run.json" \
    "$out/evaluate-detail/"
# The learned policy's weighed fetches, only the columns the notebook reads and values of at
# least 0.025 (it never fetches below that), to keep the file small.
gzip -dc "$tmp/evaluate-detail/decisions.csv.gz" \
    | awk -F, 'BEGIN { OFS = "," } NR == 1 || $6 >= 0.025 { print $3, $4, $5, $6, $7, $9, $10 }' \
    | gz > "$out/evaluate-detail/decisions.csv.gz"

echo "== freshness-vs-energy: serving plans, the frontier for both visibilities" >&2
# Device visibility: the live policies and `planned` (a client asking for a plan every hour and
# one second after each event it sees) ...
fc evaluate "$sample" --policies interval,weekly,hourly,learned,oracle,planned --replan 1h --replan-on-event \
    --visibility device --budgets 6,12,24,48,96 --out "$tmp/frontier-device" 2>/dev/null
# ... a push scheduler sweeping every hour, no event hooks ...
fc evaluate "$sample" --policies planned --replan 1h --visibility device --budgets 6,12,24,48,96 \
    --out "$tmp/frontier-device-hourly" 2>/dev/null
# ... and an app backend that sees only its own app's events (⌊B/k⌋ a day per app).
fc evaluate "$sample" --policies planned --replan 1h --replan-on-event --visibility app \
    --budgets 6,12,24,48,96 --out "$tmp/frontier-app" 2>/dev/null
for run in frontier-device frontier-device-hourly frontier-app; do
    cp "$tmp/$run/summary.csv" "$tmp/$run/run.json" "$out/$run/"
done

echo "== freshness-vs-energy: device conditions, condition-aware and -blind learned" >&2
# The sample with its generated state layer (Data/README.md): battery joules against hit rate.
fc evaluate Data/ubiqlog-sample-conditions.csv.gz --policies interval,hourly,learned,learned-blind,oracle \
    --budgets 6,12,24,48,96 --out "$tmp/conditions" 2>/dev/null
cp "$tmp/conditions/summary.csv" "$out/conditions/"

echo "== freshness-vs-energy: generated regular users (fetchcast habits generate --seed 1)" >&2
# Six archetypes, six weeks (docs/habits.md): every policy, and `planned` asking every hour with
# no events (a push backend that hears of no launch).
fc habits generate --seed 1 --out "$tmp/habits.csv.gz" 2>/dev/null
fc evaluate "$tmp/habits.csv.gz" --policies none,interval,hourly,weekly,learned,oracle --budgets 6,12,24 \
    --out "$tmp/habits" 2>/dev/null
fc evaluate "$tmp/habits.csv.gz" --policies planned --replan 1h --budgets 6,12,24 --out "$tmp/habits-planned" 2>/dev/null
mkdir -p "$out/habits"
{ cat "$tmp/habits/summary.csv"; tail -n +2 "$tmp/habits-planned/summary.csv"; } > "$out/habits/summary.csv"
{ cat "$tmp/habits/devices.csv"; tail -n +2 "$tmp/habits-planned/devices.csv"; } > "$out/habits/devices.csv"

echo "== push-delivery: the same plans and polling through APNs and FCM (delivery semantics d1)" >&2
# An app backend (visibility app) sending silent pushes at its plans' times (every hour and after
# each of its app's events), against fixed polling and hourly sent the same way: direct (the
# fetch when asked, v1), APNs and FCM at their defaults, and APNs at a stricter 0.5 an hour,
# where `planned` sends what `predict --delivery` answers (send_at, the default) and, to compare,
# a push at every fetch_at.
push_flags=(--policies interval,hourly,planned --replan 1h --replan-on-event --visibility app --budgets 12,24)
fc evaluate "$sample" "${push_flags[@]}" --out "$tmp/delivery-direct" 2>/dev/null
fc evaluate "$sample" "${push_flags[@]}" --delivery apns --out "$tmp/delivery-apns" 2>/dev/null
fc evaluate "$sample" "${push_flags[@]}" --delivery apns --push-per-hour 0.5 --out "$tmp/delivery-apns-strict" 2>/dev/null
fc evaluate "$sample" "${push_flags[@]}" --delivery apns --push-per-hour 0.5 --push-timing fetch-at \
    --out "$tmp/delivery-apns-strict-fetch-at" 2>/dev/null
fc evaluate "$sample" "${push_flags[@]}" --delivery fcm --out "$tmp/delivery-fcm" 2>/dev/null
for run in direct apns apns-strict apns-strict-fetch-at fcm; do
    mkdir -p "$out/delivery/$run"
    cp "$tmp/delivery-$run/summary.csv" "$tmp/delivery-$run/run.json" "$out/delivery/$run/"
    [[ $run == direct ]] || cp "$tmp/delivery-$run/delivery.csv" "$out/delivery/$run/"
done

echo "== calibration: fit on each device's first 21 days, score on the rest" >&2
python3 Notebooks/split-trace.py "$sample" 21 "$tmp/train.csv.gz" "$out/calibration/split.csv"
db=$tmp/train.sqlite
fc ingest --quiet --db "$db" "$tmp/train.csv.gz"
fc export model --db "$db" --top-apps 5 | gz > "$out/calibration/model-train.csv.gz"

echo "== calibration: quiet periods learned from a real publish stream" >&2
# A reader device in the stream's time zone, launching the news app at the excerpt's start and
# end, ingested first: publishes with an empty device reach the devices already in the store.
printf '%s\n' "time,device,app,event,result,bytes,duration_ms" \
    "2025-08-04T00:00:00+02:00,news-reader,news.google.top-stories,launch,,," \
    "2025-09-01T00:00:00+02:00,news-reader,news.google.top-stories,launch,,," > "$tmp/news-reader.csv"
db=$tmp/news.sqlite
fc ingest --quiet --db "$db" "$tmp/news-reader.csv"
fc ingest --quiet --db "$db" "$publish"
fc export model --db "$db" --device news-reader --app news.google.top-stories > "$out/calibration/news-model.csv"
fc export events --db "$db" --device '' | gz > "$out/calibration/news-publishes.csv.gz"

echo "wrote $(find "$out" -type f | wc -l) files to $out/" >&2
