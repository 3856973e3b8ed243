#!/usr/bin/env bash
# Builds the one release binary every script uses (scripts/demo.sh, scripts/install.sh,
# Notebooks/make-data.sh, scripts/cli-reference.sh, scripts/test.sh) and prints its path on
# stdout: .build/static/fetchcast, with the Swift standard library and Foundation linked in
# statically, so that the same binary is what scripts/install.sh copies (it runs where it is
# copied, without the toolchain's folder). Quiet unless the build fails; says on stderr whether it
# compiled or reused the build.
#
#   bin=$(scripts/build.sh)           # fetchcast only
#   bin=$(scripts/build.sh --tests)   # the test suites too (scripts/test.sh)
#   scripts/build.sh --flags          # the build's flags, for `swift test ... --skip-build`
#
# One build serves the tests and the binary (issue 41): SwiftPM's release build with testing
# enabled, the build `swift test -c release -Xswiftc -enable-testing` runs the suites from, in
# .build/. The static binary is then only a second link of that build's objects
# (`swiftc -static-stdlib`, a few seconds), not a second build: a `--static-swift-stdlib` build
# compiles every package again (490-640 s on 2 cores from a clean clone, BoringSSL twice), and
# cannot build the suites (Swift Testing has no static library in the toolchain). The objects were
# compiled against the toolchain's shared-library modules, whose Foundation does not name the
# libraries its static archive needs (CoreFoundation, _FoundationICU, ...): the link names them.
# `-enable-testing` costs the binary nothing measurable (docs/model.md's development-trace
# evaluation: byte-identical output, the same time within noise).
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-c release -Xswiftc -enable-testing)
if [[ "${1:-}" == "--flags" ]]; then
  echo "${flags[*]}"
  exit 0
fi
what=(--product fetchcast)
[[ "${1:-}" == "--tests" ]] && what=(--build-tests)
# SwiftPM evaluates a manifest that reads the environment (Hummingbird's does) again whenever a
# variable differs from the last build's, and then compiles that package again (about a minute):
# the demo, run with FETCHCAST_DB set, rebuilt what scripts/install.sh had built. So the build
# runs with the same few variables whoever calls it.
build_env=()
for name in $(compgen -e); do
  case $name in
    PATH|HOME|USER|TMPDIR|LANG|LC_ALL|XDG_*|SWIFTPM_*|SWIFT_*|GIT_*|SSL_CERT_*|CURL_CA_BUNDLE|http_proxy|https_proxy|no_proxy|HTTP_PROXY|HTTPS_PROXY|NO_PROXY)
      build_env+=("$name=${!name}") ;;
  esac
done
swift_build() { env -i "${build_env[@]}" swift build "$@"; }
# Builds; on failure prints SwiftPM's output and stops. Sets `log`.
build_or_fail() {
  if ! log=$(swift_build "${flags[@]}" "${what[@]}" 2>&1); then
    echo "$log" >&2
    echo "error: the release build failed (see above)" >&2
    exit 1
  fi
}
started=$SECONDS
build_or_fail
compiled=no
second=""
# ("Compiling plugin" lines, SwiftPM's own plugins, come with every --build-tests run. `grep -c`
# reads to the end: `grep -q` stopped at the first match, and under pipefail the first grep's
# SIGPIPE then made a fresh build look like one that compiled nothing.)
if (( $(grep -v "Compiling plugin" <<< "$log" | grep -c "Compiling") > 0 )); then
  compiled=yes
  # Measured: the build after a fresh one compiled Hummingbird's two modules again once (47 s,
  # same environment; why SwiftPM re-plans then is not known). Build again here, so the next
  # script that asks for this build finds nothing to compile.
  second=$SECONDS
  build_or_fail
  second=" (the second pass $((SECONDS - second)) s)"
fi
products=$(swift_build "${flags[@]}" --show-bin-path)
static=.build/static/fetchcast
if [[ ! -x "$static" || "$products/fetchcast" -nt "$static" ]]; then
  mkdir -p .build/static
  linked=$(mktemp .build/static/fetchcast.XXXXXX)
  if [[ "$(uname -s)" == Darwin ]]; then
    # macOS has the Swift runtime in the OS (and no static one): the build's binary is the one.
    link() { cp "$products/fetchcast" "$linked"; }
  else
    # SwiftPM's own link line for fetchcast (its object list, --gc-sections, the entry point),
    # with the standard library and Foundation static.
    link() {
      swiftc -emit-executable -o "$linked" @"$products/fetchcast.product/Objects.LinkFileList" \
        -static-stdlib -lCoreFoundation -l_FoundationCShims -l_FoundationCollections -l_FoundationICU \
        -lstdc++ -L "$products" -Xlinker --gc-sections -Xlinker --defsym -Xlinker main=fetchcast_main
    }
  fi
  if ! out=$(link 2>&1); then
    rm -f "$linked"
    echo "$out" >&2
    echo "error: linking the self-contained binary from the release build failed (see above)" >&2
    exit 1
  fi
  chmod 0755 "$linked"
  mv -f "$linked" "$static"
  compiled=yes
fi
if [[ $compiled == yes ]]; then
  echo "built fetchcast (release) in $((SECONDS - started)) s$second" >&2
else
  echo "reused the release build in .build/ (nothing to compile)" >&2
fi
echo "$PWD/$static"
