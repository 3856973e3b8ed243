#!/usr/bin/env bash
# Fuzzes the trace reader (gzip, CSV, JSON Lines, timestamps) with libFuzzer and AddressSanitizer
# for SECONDS (default 60), starting from the seed corpus Fuzz/corpus/.
#
#   scripts/fuzz.sh [SECONDS]
#
# Builds .build-fuzz/trace-reader-fuzz from the FetchCastCore and FetchCastTrace sources and
# Fuzz/TraceReaderFuzz.swift with `swiftc -sanitize=fuzzer,address` (libFuzzer ships with the
# Swift toolchain), then runs it on one core. New inputs that reach new code go to
# .build-fuzz/corpus (the committed seeds are never modified); a crash, a sanitizer report or a
# broken promise in the entry file writes the input to .build-fuzz/crashes/ and exits non-zero.
# Prints executions per second and coverage at the end.
#
# Reproduce a crash:  .build-fuzz/trace-reader-fuzz .build-fuzz/crashes/crash-<sha1>
# Environment: FUZZ_MAX_LEN (default 4096) bounds the input size.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 64; }
max_len="${FUZZ_MAX_LEN:-4096}"

scripts/setup.sh   # zlib headers (the gzip decoder links libz)
command -v swiftc >/dev/null || { echo "error: swiftc is not on PATH; install the Swift 6.1 (or later) toolchain first" >&2; exit 1; }
resource_dir="$(dirname "$(dirname "$(command -v swiftc)")")/lib/swift/clang/lib/linux"
if ! compgen -G "$resource_dir/libclang_rt.fuzzer-*.a" >/dev/null; then
    echo "error: this Swift toolchain has no libFuzzer runtime ($resource_dir/libclang_rt.fuzzer-*.a); use a swift.org Linux toolchain" >&2
    exit 1
fi

build=.build-fuzz
mkdir -p "$build/corpus" "$build/crashes"
binary="$build/trace-reader-fuzz"
sources=(Fuzz/TraceReaderFuzz.swift Fuzz/Crypto/SHA256Stub.swift Sources/FetchCastBench/HandWrittenSHA256.swift $(find Sources/FetchCastCore Sources/FetchCastTrace Sources/CZlib -type f | sort))
stamp="$build/sources.sha256"
if [[ ! -x "$binary" ]] || ! sha256sum "${sources[@]}" scripts/fuzz.sh | cmp -s - "$stamp"; then
    echo "== building $binary (swiftc -sanitize=fuzzer,address)" >&2
    flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -package-name fetchcast -I "$build" -I Sources/CZlib)
    # One module at a time, as SwiftPM would: FetchCastCore, then FetchCastTrace. Its
    # SHA-256 comes from swift-crypto; the fuzz build links a stand-in (Fuzz/Crypto/): the
    # hand-written SHA-256 that `fetchcast bench sha256` checks against swift-crypto.
    swiftc "${flags[@]}" -wmo -module-name Crypto -emit-module -emit-module-path "$build/Crypto.swiftmodule" \
        -c Fuzz/Crypto/SHA256Stub.swift Sources/FetchCastBench/HandWrittenSHA256.swift -o "$build/Crypto.o"
    swiftc "${flags[@]}" -wmo -module-name FetchCastCore -emit-module -emit-module-path "$build/FetchCastCore.swiftmodule" \
        -c $(find Sources/FetchCastCore -name '*.swift' | sort) -o "$build/FetchCastCore.o"
    swiftc "${flags[@]}" -wmo -module-name FetchCastTrace -emit-module -emit-module-path "$build/FetchCastTrace.swiftmodule" \
        -c $(find Sources/FetchCastTrace -name '*.swift' | sort) -o "$build/FetchCastTrace.o"
    swiftc "${flags[@]}" -module-name TraceReaderFuzz Fuzz/TraceReaderFuzz.swift \
        "$build/Crypto.o" "$build/FetchCastCore.o" "$build/FetchCastTrace.o" -lz -use-ld=lld -o "$binary"
    sha256sum "${sources[@]}" scripts/fuzz.sh > "$stamp"
fi

# Inputs go to a file per process, on tmpfs when there is one.
scratch="$(mktemp -d "${TMPDIR:-/dev/shm}/fetchcast-fuzz.XXXXXX" 2>/dev/null || mktemp -d)"
log="$build/last-run.log"
trap 'rm -rf "$scratch"' EXIT

echo "== fuzzing the trace reader for ${seconds} s (seeds: Fuzz/corpus, $(ls Fuzz/corpus | wc -l) files; max_len $max_len)" >&2
status=0
FUZZ_SCRATCH="$scratch" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:symbolize=1" \
    "$binary" "$build/corpus" Fuzz/corpus \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$build/crashes/" -print_final_stats=1 -print_pcs=0 2>"$log" || status=$?

# The last status line: '#N DONE cov: C ft: F corp: K/S exec/s: E ...'.
summary="$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)"
execs="$(grep -E '^stat::number_of_executed_units' "$log" | tail -n 1 | awk '{print $2}' || true)"
rate="$(grep -E '^stat::average_exec_per_sec' "$log" | tail -n 1 | awk '{print $2}' || true)"
echo "fuzz: ${execs:-?} executions, ${rate:-?} exec/s; last status: ${summary:-none}" >&2
if [[ $status -ne 0 ]] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|broken promise|Fatal error' "$log"; then
    grep -E -A 40 'ERROR:|broken promise|Fatal error' "$log" | head -n 60 >&2 || true
    echo "error: the trace reader fuzzer found a problem (exit $status); inputs in $build/crashes/, log in $log" >&2
    exit 1
fi
echo "fuzz: no crash in ${seconds} s (log in $log)" >&2
