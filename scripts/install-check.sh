#!/usr/bin/env bash
# Checks that scripts/install.sh installs a self-contained binary (issue 27, item 13): it
# installs into a temporary prefix, then requires that the binary links no Swift runtime library
# (libswift*, Foundation) and that it runs with an empty environment from a folder of its own,
# where the toolchain's libraries cannot be found.
#
#   scripts/install-check.sh
#
# The binary is scripts/build.sh's: a static link of the release build in .build/ (its first build
# takes several minutes; later runs rebuild only what changed).
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d "${TMPDIR:-/tmp}/fetchcast-install-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

PREFIX="$work/prefix" scripts/install.sh 2> "$work/install.log" || { cat "$work/install.log" >&2; exit 1; }
bin="$work/prefix/bin/fetchcast"
if ldd "$bin" | grep -E 'libswift|libFoundation|lib_FoundationICU|libdispatch|libBlocksRuntime' >&2; then
    echo "error: $bin links the Swift runtime above: it would not run without the toolchain's folder" >&2
    exit 1
fi
# A copy elsewhere, run with no environment at all, ingests the sample and answers a plan.
mkdir -p "$work/elsewhere"
cp "$bin" "$work/elsewhere/fetchcast"
cp Data/ubiqlog-sample.csv.gz "$work/elsewhere/"
(
    cd "$work/elsewhere"
    env -i ./fetchcast --version > /dev/null
    env -i ./fetchcast ingest --quiet --db s.sqlite ubiqlog-sample.csv.gz
    env -i ./fetchcast stats --db s.sqlite > stats.txt
    grep -Eq '32,?890' stats.txt
    env -i ./fetchcast predict --db s.sqlite --device 19_F --count 1 > /dev/null 2>&1
) || { echo "error: the installed binary did not run on its own (see above)" >&2; exit 1; }
echo "install-check: $bin is self-contained ($(ldd "$bin" | wc -l) shared libraries, none of Swift's); it ingests and plans with an empty environment" >&2
