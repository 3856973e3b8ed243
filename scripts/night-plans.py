#!/usr/bin/env python3
"""What a plan asked at night holds, the way a backend asks (docs/model.md, "The pickup clock").

For every night of a device that has 7 days of use before it and a launch in the 24 h before
HH:00 local (`--hour`, default 2), it asks `fetchcast predict --device D --at <that instant>
--horizon 24 --format json` and compares the plan with the day's *first pickup* (the first
launch from that instant on that follows 2 h or more without a launch of the device). It prints,
per group of devices (`--group NAME=FILE`, one device per line; default: one group, all):

- nights, and the share whose plan is non-empty or holds a look before a pickup (a fetch whose
  reason begins "... was first used by"), and such fetches a night;
- covered: the share of nights on which one of those fetches is of the first pickup's app, in
  the 30 min before it;
- timed: ... on which one of them, of any app, is in those 30 min; app: ... on which the app
  is among them.

Standard library only; it reads the trace (gzip or plain CSV) and runs `fetchcast` (--fetchcast,
default the self-contained build's). Example (from a clone, on the bundled sample):

    mkdir -p out && fetchcast ingest Data/ubiqlog-sample.csv.gz --db out/nights.sqlite
    scripts/night-plans.py --db out/nights.sqlite Data/ubiqlog-sample.csv.gz
"""

import argparse
import collections
import csv
import datetime
import gzip
import json
import os
import subprocess
import sys

TAU = 1800
SILENCE = 7200


def launches_by_device(path):
    opener = gzip.open if path.endswith(".gz") else open
    out = collections.defaultdict(set)
    with opener(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            if r["event"] != "launch":
                continue
            t = r["time"]
            try:
                utc, offset = float(t), 0
            except ValueError:
                d = datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))
                utc, offset = d.timestamp(), int(d.utcoffset().total_seconds())
            out[r["device"]].add((utc, r["app"], offset))
    return {k: sorted(v) for k, v in out.items()}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace", help="the trace the store was ingested from (CSV, gzip or plain)")
    p.add_argument("--db", required=True, help="the store (fetchcast --db)")
    p.add_argument("--hour", type=int, default=2, help="local hour of the night's question (default 2)")
    p.add_argument("--group", action="append", default=[], metavar="NAME=FILE", help="a group of devices, one per line")
    p.add_argument("--fetchcast", default=os.path.join(here, "..", ".build", "static", "fetchcast"))
    a = p.parse_args()
    groups = {}
    for g in a.group:
        name, _, path = g.partition("=")
        with open(path) as f:
            for device in f.read().split():
                groups[device] = name
    stats = collections.defaultdict(collections.Counter)
    for device, ls in sorted(launches_by_device(a.trace).items()):
        days = sorted({int((t + o) // 86400) for t, _, o in ls})
        for i, day in enumerate(days):
            if i < 7:
                continue
            offset = next(o for t, _, o in ls if int((t + o) // 86400) == day)
            at = day * 86400 + a.hour * 3600 - offset
            before = [x for x in ls if x[0] < at]
            if not before or at - before[-1][0] > 86400:
                continue
            previous, pickup = before[-1][0], None
            for t, app, _ in ls:
                if t < at:
                    continue
                if t - previous >= SILENCE:
                    pickup = (t, app)
                    break
                previous = t
            r = subprocess.run(
                [a.fetchcast, "predict", "--db", a.db, "--device", device, "--at", str(at), "--horizon", "24",
                 "--format", "json", "--count", "1000"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"night-plans: fetchcast predict failed for {device} at {at}: {r.stderr.strip()}")
            plan = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
            looks = [f for f in plan if " was first used by " in f["reason"]]
            s = stats[groups.get(device, "all") if groups else "all"]
            s["nights"] += 1
            s["non_empty"] += bool(plan)
            s["with_look"] += bool(looks)
            s["look_fetches"] += len(looks)
            if pickup:
                t, app = pickup
                before_it = [f for f in looks if t - TAU <= f["fetch_at_unix"] < t]
                s["pickups"] += 1
                s["covered"] += any(f["app"] == app for f in before_it)
                s["timed"] += bool(before_it)
                s["app"] += any(f["app"] == app for f in looks)
    print("group,nights,non_empty,with_look,look_fetches_per_night,covered,timed,app")
    for name, s in sorted(stats.items()):
        n, k = s["nights"], max(1, s["pickups"])
        print(f"{name},{n},{s['non_empty'] / n:.3f},{s['with_look'] / n:.3f},{s['look_fetches'] / n:.2f},"
              f"{s['covered'] / k:.3f},{s['timed'] / k:.3f},{s['app'] / k:.3f}")


if __name__ == "__main__":
    main()
