#!/usr/bin/env bash
# Property-based API tests: schemathesis (PyPI) against /openapi.json of a running
# `fetchcast serve` holding Data/ubiqlog-sample.csv.gz, with an admin token and a bounded number
# of examples per route. Fails on any 5xx or any response that does not match the document.
#
#   scripts/schemathesis.sh             # run (FETCHCAST=path/to/fetchcast, SCHEMATHESIS_EXAMPLES=25)
#   scripts/schemathesis.sh --install   # only install schemathesis into .venv when missing
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x .venv/bin/schemathesis ]]; then
    python3 -m venv .venv
    .venv/bin/pip install -q "schemathesis==4.32.5"
fi
[[ "${1:-}" == --install ]] && exit 0
bin=${FETCHCAST:-.build/debug/fetchcast}
[ -x "$bin" ] || swift build --product fetchcast >/dev/null
examples=${SCHEMATHESIS_EXAMPLES:-25}
work=$(mktemp -d /tmp/fetchcast-schemathesis-XXXXXX)
server=""
cleanup() { [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "schemathesis admin $(printf %s "$token" | sha256sum | cut -d' ' -f1)" > "$work/tokens"
chmod 600 "$work/tokens"  # the server refuses a tokens file others may write
"$bin" serve --db "$work/store.sqlite" --port 0 --tokens "$work/tokens" 2> "$work/serve.err" &
server=$!
port=""
for _ in $(seq 1 200); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.err")
    [[ -n "$port" ]] && break
    sleep 0.05
done
[[ -n "$port" ]] || { cat "$work/serve.err" >&2; echo "error: fetchcast serve did not start" >&2; exit 1; }
curl -sf -H "Authorization: Bearer $token" --data-binary @Data/ubiqlog-sample.csv.gz "http://127.0.0.1:$port/v1/events" > /dev/null
.venv/bin/schemathesis run "http://127.0.0.1:$port/openapi.json" \
    --header "Authorization: Bearer $token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "$examples" --seed 1 --workers 1 --request-timeout 10 --no-color
