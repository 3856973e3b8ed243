#!/usr/bin/env python3
"""An independent implementation of replay semantics v1's `interval` baseline (docs/evaluation.md,
rules 1-4), standard library only, to cross-check `fetchcast evaluate --policies interval`.

    python3 scripts/interval-v1-check.py TRACE.csv.gz DEVICES.txt BUDGET [TAU_S]

Launch-only traces (no publishes, no input fetches). Prints needy launches, fresh needy launches
and the hit rate; `fetchcast evaluate TRACE --devices DEVICES --policies interval --budgets BUDGET`
must print the same hit_rate (6 decimals in summary.csv).
"""
import bisect, csv, gzip, sys
from datetime import datetime

path, device_file, budget = sys.argv[1], sys.argv[2], float(sys.argv[3])
tau = float(sys.argv[4]) if len(sys.argv) > 4 else 1800.0
keep = {l.strip() for l in open(device_file) if l.strip() and not l.startswith("#")}
launches = {}
opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
for row in csv.DictReader(opener(path, "rt", newline="")):
    if row["device"] in keep and row["event"] == "launch":
        t = datetime.fromisoformat(row["time"].replace("Z", "+00:00")).timestamp()
        launches.setdefault(row["device"], []).append((t, row["app"]))
needy = fresh = 0
for device, events in launches.items():
    events.sort(key=lambda e: e[0])  # stable: input order at equal times
    counts = {}
    for _, app in events:
        counts[app] = counts.get(app, 0) + 1
    # Rule 1: the 5 most launched apps, ties by app id in byte order.
    apps = [a for a, _ in sorted(counts.items(), key=lambda c: (-c[1], c[0].encode()))[:5]]
    period = 86400 * len(apps) / budget  # rule 4: T = 86400·k_d/B
    last = events[-1][0]
    for app in apps:
        times = [t for t, a in events if a == app]
        polls, j = [], 1
        while times[0] + j * period <= last:  # t0 + j·T, never after the device's last launch
            polls.append(times[0] + j * period)
            j += 1
        for previous, t in zip(times, times[1:]):  # the first launch is not scored
            i = bisect.bisect_right(polls, t)  # polls at or before the launch refresh it
            refreshed = max(previous, polls[i - 1] if i else float("-inf"))
            if t - previous > tau:  # needy
                needy += 1
                fresh += t - refreshed <= tau
print(f"needy {needy} fresh {fresh} hit_rate {fresh / needy:.6f}")
