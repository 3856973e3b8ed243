#!/usr/bin/env bash
# Checks that a change altered no output: builds the release `fetchcast` at BASE_REV and at the
# work tree, runs the same commands with both on the bundled sample (Data/ubiqlog-sample.csv.gz,
# with the news excerpt) and on the development trace (../shared/data/ubiqlog-dev.csv.gz, when
# present), and compares every output byte for byte: stdout, stderr, exit status and every file
# written. Exits 1 at the first difference set, printing the first differing lines of each.
#
#   scripts/identical-outputs.sh BASE_REV
#
# Commands (each store is fresh): ingest (--format json, then the same files again), stats
# (table, json), devices (table, json, csv), files (table, json), model (a device, a device and
# app), predict (default time and a fixed --at; table, json, csv), export (events, model,
# cousage, predictions with fixed --from/--to), evaluate (every policy, --detail, from the trace
# files, from the store, and with --prior-from/--prior-devices/--devices on the dev trace).
#
# Masked, because they legitimately change between two runs or two versions (nothing else is):
#   - ingest stderr: the "N events in S s (R events/s)" timing of each file (the line is compared
#     with the seconds and rate replaced by "#");
#   - ingest --format json: each file's "seconds";
#   - files: "ingested_at" (json) and the ingested_at column (table), the wall clock at ingest;
#   - run.json: "version" (the tool's version);
#   - evaluate stderr: its progress lines ("FILE: N events" while reading, "replaying N devices ×
#     M policy runs: …"; at most one every 10 s when stderr is not a terminal: how many depends on
#     the machine's speed).
# Everything else, including the detail .csv.gz files, is compared as written.
#
# The BASE_REV build is kept in ${IDENTICAL_CACHE:-$HOME/.cache/fetchcast-identical}/<commit>
# (source from `git archive`, its own .build), so a second run against the same commit only
# rebuilds the work tree. Environment: KEEP=1 keeps the output directories.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

[[ $# -eq 1 ]] || { echo "usage: scripts/identical-outputs.sh BASE_REV" >&2; exit 64; }
base=$(git rev-parse --verify "$1^{commit}") || { echo "error: '$1' is not a commit" >&2; exit 64; }

cache="${IDENTICAL_CACHE:-$HOME/.cache/fetchcast-identical}/$base"
base_bin="$cache/.build/release/fetchcast"
if [[ ! -x "$base_bin" ]]; then
    echo "== building fetchcast at ${base:0:12} (release) in $cache" >&2
    rm -rf "$cache/src.tmp"
    mkdir -p "$cache/src.tmp"
    git archive "$base" | tar -x -C "$cache/src.tmp"
    # The source tree is replaced whole; .build beside it survives for the next run.
    rm -rf "$cache/src" && mv "$cache/src.tmp" "$cache/src"
    if ! log=$(swift build -c release --product fetchcast --package-path "$cache/src" --scratch-path "$cache/.build" 2>&1); then
        echo "$log" >&2; echo "error: the release build at $base failed" >&2; exit 1
    fi
fi
echo "== building fetchcast in the work tree (release: scripts/build.sh, the binary the scripts run)" >&2
work_bin=$(scripts/build.sh)

out=$(mktemp -d "${TMPDIR:-/tmp}/fetchcast-identical.XXXXXX")
if [[ "${KEEP:-0}" == 1 ]]; then echo "outputs kept in $out" >&2; else trap 'rm -rf "$out"' EXIT; fi

sample="$root/Data/ubiqlog-sample.csv.gz"
news="$root/Data/news-publish-excerpt.csv.gz"
dev="$root/../shared/data/ubiqlog-dev.csv.gz"
policies=none,interval,oracle,hourly,weekly,learned,planned

# run NAME CMD...: runs `fetchcast CMD...` in the current directory, keeping stdout, stderr and
# the exit status as NAME.out, NAME.err, NAME.rc.
run() {
    local name=$1; shift
    local rc=0
    "$bin" "$@" >"$name.out" 2>"$name.err" || rc=$?
    echo "$rc" >"$name.rc"
}

# mask_json FILE KEY...: deletes the keys wherever they occur in each JSON document of FILE.
mask_json() {
    local file=$1; shift
    local filter=".";
    for k in "$@"; do filter="$filter | walk(if type == \"object\" then del(.\"$k\") else . end)"; done
    jq -c "$filter" "$file" >"$file.masked" && mv "$file.masked" "$file"
}

# mask_progress FILE...: deletes evaluate's progress lines (their number depends on the speed).
mask_progress() {
    sed -E -i -e '/^replaying [0-9]+ devices × [0-9]+ policy runs: /d' -e '/: [0-9]+ events$/d' "$@"
}

# suite NAME TRACE...: every command on a fresh store holding TRACE...
suite() {
    local name=$1; shift
    local dir="$dest/$name"
    mkdir -p "$dir" && cd "$dir"
    local db="$dir/store.sqlite"
    run ingest --db "$db" "$@" --format json
    mask_json ingest.out seconds
    sed -E -i 's/ in [0-9.]+ s \([0-9. kM]+ events\/s\)/ in # s (# events\/s)/' ingest.err
    run ingest-again --db "$db" "$@" --format json
    mask_json ingest-again.out seconds
    run stats --db "$db"
    run stats-json --db "$db" --format json
    run devices --db "$db"
    run devices-json --db "$db" --format json --top 5
    run devices-csv --db "$db" --format csv
    run files --db "$db"
    sed -E -i 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)/<ingested_at>/' files.out
    run files-json --db "$db" --format json
    mask_json files-json.out ingested_at ingestedAt
    run model --db "$db" --device 19_F
    run model-app --db "$db" --device 19_F --app com.viber.voip
    run predict --db "$db"
    run predict-at --db "$db" --at 2014-06-01T12:00:00+00:00 --count 20
    run predict-json --db "$db" --device 19_F --at 2014-06-01T12:00:00+00:00 --format json --budget 12
    run predict-csv --db "$db" --at 2014-06-01T12:00:00+00:00 --format csv --not-before 2014-06-01T13:00:00+00:00
    run export-events --db "$db" events
    run export-events-json --db "$db" events --format json --device 19_F
    run export-model --db "$db" model --top-apps 3
    run export-cousage --db "$db" cousage
    run export-predictions --db "$db" predictions --device 19_F --from 2014-06-01T00:00:00+00:00 --to 2014-06-02T00:00:00+00:00
    run evaluate-files evaluate "$@" --policies "$policies" --budgets 12,24 --detail --out "$dir/eval-files"
    run evaluate-store evaluate --db "$db" --policies "$policies" --budgets 12 --detail --out "$dir/eval-store"
    mask_progress evaluate-files.err evaluate-store.err
    for r in "$dir"/eval-*/run.json; do [[ -f "$r" ]] && mask_json "$r" version; done
    rm -f "$db"*
    cd "$dest"
}

for side in base work; do
    if [[ $side == base ]]; then bin=$base_bin; else bin=$work_bin; fi
    # Both sides run in the same directory, so paths in outputs match.
    dest="$out/run"
    mkdir -p "$dest"
    echo "== running the commands with the $side build" >&2
    suite sample "$sample" "$news"
    if [[ -f "$dev" ]]; then
        suite dev "$dev"
        mkdir -p "$dest/dev-prior" && cd "$dest/dev-prior"
        run evaluate-prior evaluate "$dev" --devices "$root/Data/splits/ubiqlog-dev-test.txt" \
            --prior-from "$dev" --prior-devices "$root/Data/splits/ubiqlog-dev-train.txt" \
            --policies learned,planned,interval --budgets 24 --detail --out "$dest/dev-prior/eval"
        mask_json eval/run.json version
        mask_progress evaluate-prior.err
        cd "$dest"
    else
        echo "note: $dev not found; the development trace is skipped" >&2
    fi
    cd "$out" && mv "$dest" "$out/$side"
done

# Compare: the same files on both sides, each byte-identical.
cd "$out"
status=0
files=$( (cd base && find . -type f; cd ../work && find . -type f) | sort -u)
count=0
for f in $files; do
    count=$((count + 1))
    if [[ ! -f "base/$f" || ! -f "work/$f" ]]; then
        echo "DIFFERENT: $f exists only in $([[ -f base/$f ]] && echo base || echo work)"; status=1; continue
    fi
    if ! cmp -s "base/$f" "work/$f"; then
        echo "DIFFERENT: $f"
        status=1
        if [[ $f == *.gz ]]; then
            diff <(zcat "base/$f") <(zcat "work/$f") | head -10 || true
        else
            diff "base/$f" "work/$f" | head -10 || true
        fi
    fi
done
if [[ $status == 0 ]]; then
    echo "identical: $count outputs of ${base:0:12} and the work tree match byte for byte"
else
    echo "error: outputs differ between ${base:0:12} and the work tree (see above)" >&2
fi
exit $status
