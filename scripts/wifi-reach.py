#!/usr/bin/env python3
"""How many launches can a Wi-Fi-only policy make fresh at all? (docs/model.md, "Device
conditions": the bound under every app `unmetered`)

A fetch makes a needy launch fresh only if it comes within tau before it (at the launch's own
instant too: a fetch there comes before the launch, evaluation rule 3); under
`{"network": "unmetered"}` it must also come while the device is on Wi-Fi. So no policy, however
clairvoyant, makes fresh a needy launch whose preceding tau holds no instant on Wi-Fi. This
script reads a trace's `state` rows (a field holds until the device's next row that sets it;
unknown counts as cellular, as `fetchcast evaluate` prices it) and the per-launch file of
`fetchcast evaluate --detail` (`launches.csv.gz`), and prints per policy in that file:

- needy: its needy launches (the same for every policy);
- reachable: the share of them with Wi-Fi at some instant in [launch - tau, launch] (the
  bound);
- hit rate, and the share of needy launches it made fresh that were reachable.

Standard library only. Example (from a clone):

    C=Data/ubiqlog-sample-conditions.csv.gz
    fetchcast evaluate $C --devices Data/splits/ubiqlog-dev-test.txt --policies learned --budgets 24 --detail --out out/reach
    scripts/wifi-reach.py $C out/reach/launches.csv.gz
"""

import argparse
import bisect
import csv
import gzip
from datetime import datetime


def seconds(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def read_networks(trace):
    """Per device, the instants its network changed and whether it was then on Wi-Fi."""
    changes = {}
    with gzip.open(trace, "rt", newline="") as f:
        for row in csv.DictReader(f):
            if row["event"] == "state" and row.get("network"):
                changes.setdefault(row["device"], []).append((seconds(row["time"]), row["network"] == "wifi"))
    for rows in changes.values():
        rows.sort(key=lambda r: r[0])
    return changes


def on_wifi_within(changes, start, end):
    """Whether the device is on Wi-Fi at some instant in [start, end]."""
    times = [t for t, _ in changes]
    i = bisect.bisect_right(times, start) - 1  # the row in effect at start
    if i >= 0 and changes[i][1]:
        return True
    j = i + 1
    while j < len(changes) and changes[j][0] <= end:
        if changes[j][1]:
            return True
        j += 1
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace", help="the trace with `state` rows (gzip CSV)")
    parser.add_argument("launches", help="launches.csv.gz of `fetchcast evaluate --detail` on that trace")
    parser.add_argument("--tau", type=float, default=1800, help="the freshness window, seconds (default 1800)")
    args = parser.parse_args()

    networks = read_networks(args.trace)
    counts = {}
    with gzip.open(args.launches, "rt", newline="") as f:
        for row in csv.DictReader(f):
            if row["needy"] != "1":
                continue
            key = (row["policy"], row["budget"])
            c = counts.setdefault(key, [0, 0, 0, 0])  # needy, reachable, fresh, fresh and reachable
            t = seconds(row["time"])
            reachable = on_wifi_within(networks.get(row["device"], []), t - args.tau, t)
            fresh = row["fresh"] == "1"
            c[0] += 1
            c[1] += reachable
            c[2] += fresh
            c[3] += fresh and reachable
    print("policy,budget,needy_launches,reachable_share,hit_rate,hits_reachable_share")
    for (policy, budget), (needy, reachable, fresh, both) in sorted(counts.items()):
        print(f"{policy},{budget},{needy},{reachable / needy:.4f},{fresh / needy:.4f},{both / needy:.4f}")


if __name__ == "__main__":
    main()
