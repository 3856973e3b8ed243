#!/usr/bin/env bash
# Builds the one release binary every script uses (scripts/demo.sh, scripts/install.sh,
# Notebooks/make-data.sh, scripts/cli-reference.sh) and prints its path on stdout: the Swift
# standard library and Foundation linked in statically, so that the same binary is what
# scripts/install.sh copies (it runs where it is copied, without the toolchain's folder).
# Built in .build-static/, so a second script reuses the first one's build. Quiet unless the
# build fails; says on stderr whether it compiled or reused the build.
#
#   bin=$(scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-c release --product fetchcast --static-swift-stdlib --scratch-path .build-static)
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
  if ! log=$(swift_build "${flags[@]}" 2>&1); then
    echo "$log" >&2
    echo "error: the release build failed (see above)" >&2
    exit 1
  fi
}
started=$SECONDS
build_or_fail
if grep -q "Compiling" <<< "$log"; then
  # Measured: the build after a fresh one in a new .build-static/ compiled Hummingbird's two
  # modules again once (47 s, same environment; why SwiftPM re-plans then is not known). Build
  # again here, so the next script that asks for this build finds nothing to compile.
  build_or_fail
  echo "built fetchcast (release) in $((SECONDS - started)) s" >&2
else
  echo "reused the release build in .build-static/ (nothing to compile)" >&2
fi
echo "$(swift_build "${flags[@]}" --show-bin-path)/fetchcast"
