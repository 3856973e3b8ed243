#!/usr/bin/env bash
# Every test: installs what is missing, runs the Swift test suites (with a throwaway PostgreSQL
# cluster for the PostgreSQL engine's cases), fuzzes the trace reader
# for 60 s (a crash or sanitizer report fails the run), re-executes the notebooks, then checks
# that the installed binary runs without the toolchain (scripts/install-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Python runs schemathesis and the notebooks: its packages (pinned; .venv and Notebooks/.venv,
# installed when missing) download while the build below compiles.
if ! command -v python3 >/dev/null; then
    echo "error: python3 is needed for scripts/schemathesis.sh and the notebooks (Notebooks/run-all.py); install Python 3 with venv and pip." >&2
    exit 1
fi
python_log=$(mktemp)
(
    scripts/schemathesis.sh --install
    [[ -x Notebooks/.venv/bin/python ]] || python3 -m venv Notebooks/.venv
    Notebooks/.venv/bin/python -m pip install --quiet --disable-pip-version-check -r Notebooks/requirements.txt
) > "$python_log" 2>&1 &
python_setup=$!
# The suites run optimised: a release build with testing enabled (the tests' `@testable import`s).
# On 2 cores, from a clean clone, it builds in 13-15 min, about what a debug build takes, and the
# suites then take about 3 min against the debug build's 16 (their replays are CPU-bound).
# The tests' own code compiles at -Onone (Package.swift): optimising it cost about 2 min more.
# It is the one release build (scripts/build.sh --tests): the self-contained binary that
# scripts/install.sh installs and scripts/demo.sh runs is a second link of its objects, so the
# steps below run that binary, and install-check and the demo compile nothing (issue 41; the
# static build they made before took 490-640 s of a clean clone's 26-29 min).
# Where a clean clone's build time goes (2026-11-30, 2 cores): of its 680-790 s on CI, BoringSSL
# compiled twice (swift-nio-ssl's and swift-crypto's copies, both needed by postgres-nio) takes
# about 330 s. The HTTP client HummingbirdTesting needs (AsyncHTTPClient, NIOHTTP2, NIOHPACK,
# NIOSOCKS, swift-algorithms, ...; about 130 s) is no longer built: the serve tests have a
# loopback client of their own (Tests/FetchCastServeTests/Support/TestHTTP.swift).
read -ra build <<< "$(scripts/build.sh --flags)"
echo "== [+${SECONDS}s] building fetchcast and its tests (scripts/build.sh --tests: release with testing enabled; the first build takes several minutes)" >&2
bin=$(scripts/build.sh --tests)
# A throwaway PostgreSQL 15 cluster (scripts/postgres.sh: a temporary directory, a free port on
# 127.0.0.1, stopped and removed on exit) for the PostgreSQL cases of the suites; they find it
# through FETCHCAST_TEST_POSTGRES (and PGPASSWORD), and are reported skipped without it.
echo "== [+${SECONDS}s] starting a throwaway PostgreSQL 15 cluster (scripts/postgres.sh)" >&2
postgres_env=$(scripts/postgres.sh start)
eval "$postgres_env"
trap 'scripts/postgres.sh stop "$FETCHCAST_TEST_POSTGRES_DIR"' EXIT
echo "== [+${SECONDS}s] running the Swift test suites (PostgreSQL at ${FETCHCAST_TEST_POSTGRES})" >&2
swift test "${build[@]}" --skip-build
# A PostgreSQL restart under load (issue 40): no acknowledged POST lost, only 200s and 503s with
# Retry-After, plans back within 10 s of the database's return (docs/postgres.md).
echo "== [+${SECONDS}s] a PostgreSQL restart under load (fetchcast bench restart)" >&2
"$bin" bench restart --db "$FETCHCAST_TEST_POSTGRES" \
    --restart-command "scripts/postgres.sh restart $FETCHCAST_TEST_POSTGRES_DIR 3"
scripts/postgres.sh stop "$FETCHCAST_TEST_POSTGRES_DIR"
trap - EXIT
unset FETCHCAST_TEST_POSTGRES PGPASSWORD FETCHCAST_TEST_POSTGRES_DIR
# The fuzzer runs on one core while the steps up to the wait for it (schemathesis, the notebooks,
# install-check, the demo), which mostly use one process at a time, run beside it; its log is
# shown if it fails.
echo "== [+${SECONDS}s] fuzzing the trace reader for 60 s (scripts/fuzz.sh), beside the steps up to the wait for it" >&2
fuzz_log=$(mktemp)
scripts/fuzz.sh 60 > "$fuzz_log" 2>&1 &
fuzz=$!
echo "== [+${SECONDS}s] the Python packages (installed while the build ran)" >&2
wait "$python_setup" || { cat "$python_log" >&2; echo "error: installing the Python packages failed (see above)" >&2; exit 1; }
rm -f "$python_log"

# The HTTP API: schemathesis against /openapi.json of a running `fetchcast serve` (bounded examples).
echo "== [+${SECONDS}s] the HTTP API against its OpenAPI document (scripts/schemathesis.sh)" >&2
FETCHCAST="$bin" scripts/schemathesis.sh

# Notebooks: re-execute each headless from a clean kernel (fails if any cell fails).
echo "== [+${SECONDS}s] re-executing the notebooks headless" >&2
Notebooks/.venv/bin/python Notebooks/run-all.py
# ... and on a user's own `evaluate --out` folder (FETCHCAST_EVALUATE_OUT, docs/analytics.md): other
# policies and budgets than the sample's runs; the executed copy must say it read that folder.
user_run=$(mktemp -d)
"$bin" habits generate --seed 2 -o "$user_run/habits.csv.gz" 2>/dev/null
"$bin" evaluate "$user_run/habits.csv.gz" --policies hourly,weekly,learned --budgets 6,12 \
    --out "$user_run/out" 2>/dev/null
cp Notebooks/freshness-vs-energy.ipynb "$user_run/"
FETCHCAST_EVALUATE_OUT="$user_run/out" Notebooks/.venv/bin/python Notebooks/run-all.py --save "$user_run/freshness-vs-energy.ipynb"
grep -q "sections 1-3 read $user_run/out" "$user_run/freshness-vs-energy.ipynb" \
    || { echo "error: the notebook did not read FETCHCAST_EVALUATE_OUT" >&2; exit 1; }
rm -rf "$user_run"

# The installed binary is self-contained (scripts/build.sh's static link of the build above).
echo "== [+${SECONDS}s] scripts/install-check.sh" >&2
scripts/install-check.sh

# The README's first command, on a store of its own: it reuses the release build install-check
# made (one release build serves the demo and the install, issue 41).
echo "== [+${SECONDS}s] scripts/demo.sh (FETCHCAST_DB in a temporary folder)" >&2
demo=$(mktemp -d)
FETCHCAST_DB="$demo/demo.sqlite" scripts/demo.sh > "$demo/out.txt" 2> "$demo/err.txt" \
    || { cat "$demo/err.txt" >&2; echo "error: scripts/demo.sh failed" >&2; exit 1; }
grep -q "reused the release build" "$demo/err.txt" \
    || { cat "$demo/err.txt" >&2; echo "error: scripts/demo.sh built again what scripts/install.sh had built" >&2; exit 1; }
grep -q "wrote out/evaluation/summary.csv" "$demo/err.txt" \
    || { cat "$demo/err.txt" >&2; echo "error: scripts/demo.sh did not evaluate" >&2; exit 1; }
rm -rf "$demo"

# The analysis scripts' arithmetic on hand-computed cases (standard library only).
echo "== [+${SECONDS}s] scripts/paired-bootstrap.py --self-test" >&2
python3 scripts/paired-bootstrap.py --self-test
echo "== [+${SECONDS}s] waiting for the fuzzer" >&2
wait "$fuzz" || { cat "$fuzz_log" >&2; echo "error: scripts/fuzz.sh failed (see above)" >&2; exit 1; }
tail -n 1 "$fuzz_log" >&2
rm -f "$fuzz_log"

echo "== [+${SECONDS}s] every test passed" >&2
