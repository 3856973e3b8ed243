#!/usr/bin/env bash
# Every test: installs what is missing, then runs the Swift test suites.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --build-tests
swift test --skip-build
