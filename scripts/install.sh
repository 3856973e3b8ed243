#!/usr/bin/env bash
# Builds fetchcast (release: scripts/build.sh, which reuses the build scripts/demo.sh made) and
# installs the binary into $PREFIX/bin, default ~/.local/bin:
#   scripts/install.sh                        # ~/.local/bin/fetchcast, no sudo
#   PREFIX=/usr/local scripts/install.sh      # /usr/local/bin/fetchcast (may need sudo)
# Says where it installed and whether that directory is on PATH. Safe to re-run.
# FETCHCAST=path/to/fetchcast installs that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${PREFIX:-$HOME/.local}
bindir="$prefix/bin"
if [ -n "${FETCHCAST:-}" ]; then
  bin=$FETCHCAST  # a binary built already (the tests use this); nothing is built
else
  scripts/setup.sh
  # The self-contained release binary scripts/demo.sh uses too (scripts/build.sh): built once.
  echo "building fetchcast (release, static Swift standard library; the first build takes several minutes)…" >&2
  bin=$(scripts/build.sh)
fi
mkdir -p "$bindir"
install -m 0755 "$bin" "$bindir/fetchcast"
echo "installed $bindir/fetchcast ($("$bindir/fetchcast" --version))" >&2
case ":$PATH:" in
  *":$bindir:"*)
    echo "$bindir is on your PATH: run fetchcast --help" >&2 ;;
  *)
    echo "$bindir is not on your PATH; add it (e.g. to ~/.bashrc or ~/.zshrc):" >&2
    echo "  export PATH=\"$bindir:\$PATH\"" >&2
    echo "or run $bindir/fetchcast directly" >&2 ;;
esac
