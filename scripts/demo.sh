#!/usr/bin/env bash
# The main job on the bundled data, with the default store ./fetchcast.sqlite:
# ingest Data/ -> learn the model -> predictions for one device -> replay every policy ->
# evaluation CSVs in out/evaluation. Safe to re-run (re-ingesting a file adds nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# One release build, shared with scripts/install.sh (scripts/build.sh): say what the wait is for.
echo "building fetchcast (release; the first build compiles the HTTP and PostgreSQL stacks too: 10-12 minutes on 2 cores)…" >&2
bin=$(scripts/build.sh)
step() { printf '\n== %s\n' "$*" >&2; }

step "fetchcast ingest Data/ubiqlog-sample.csv.gz"
$bin ingest Data/ubiqlog-sample.csv.gz
step "fetchcast stats"
$bin stats
step "fetchcast model --device 19_F --app com.viber.voip"
$bin model --device 19_F --app com.viber.voip
# One second after 19_F opened WhatsApp late on 2013-12-18: what would the scheduler fetch now?
step "fetchcast predict --device 19_F --at 2013-12-18T23:44:37Z --count 5"
$bin predict --device 19_F --at 2013-12-18T23:44:37Z --count 5
policies=none,interval,weekly,hourly,planned,learned,oracle
step "fetchcast evaluate Data/ubiqlog-sample.csv.gz --policies $policies --replan-on-event --budgets 12,24 --out out/evaluation"
$bin evaluate Data/ubiqlog-sample.csv.gz --policies $policies --replan-on-event --budgets 12,24 --out out/evaluation
step "evaluation CSVs (docs/evaluation.md; plots: Notebooks/freshness-vs-energy.ipynb)"
ls -l out/evaluation >&2
