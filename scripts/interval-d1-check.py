#!/usr/bin/env python3
"""An independent implementation of `interval` sent as silent pushes under delivery semantics d1
(docs/evaluation.md, "Delivery semantics d1"), standard library only, to cross-check
`fetchcast evaluate --policies interval --delivery apns|fcm`.

    python3 scripts/interval-d1-check.py TRACE.csv.gz DEVICES.txt BUDGET apns|fcm [TAU_S]

Launch-only traces (no publishes, no input fetches, no `state` rows: the device is always online
and never charging), the service's default parameters. Prints the pushes sent, delivered,
delayed, delivered at app open, collapsed and dropped, then needy launches, fresh needy launches
and the hit rate; `fetchcast evaluate TRACE --devices DEVICES --policies interval --budgets
BUDGET --delivery SERVICE` must write the same counts to delivery.csv and the same hit_rate to
summary.csv.
"""
import csv, gzip, math, sys
from datetime import datetime

path, device_file, budget, service = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
tau = float(sys.argv[5]) if len(sys.argv) > 5 else 1800.0
# The defaults of d1: (pushes an hour, bucket, keep-alive s); TTL and doze-after 1 h.
per_hour, burst, keep_alive = {"apns": (2.0, 1, 1800.0), "fcm": (20.0, 20, 3600.0)}[service]
ttl = doze_after = 3600.0
interval = 3600 / per_hour
tolerance = (burst - 1) * interval

keep = {l.strip() for l in open(device_file) if l.strip() and not l.startswith("#")}
launches = {}
opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
for row in csv.DictReader(opener(path, "rt", newline="")):
    if row["device"] in keep and row["event"] == "launch":
        t = datetime.fromisoformat(row["time"].replace("Z", "+00:00")).timestamp()
        launches.setdefault(row["device"], []).append((t, row["app"]))

totals = dict(sent=0, delivered=0, delayed=0, at_open=0, collapsed=0, dropped=0, needy=0, fresh=0)
for device, events in launches.items():
    events.sort(key=lambda e: e[0])  # stable: input order at equal times
    counts = {}
    for _, app in events:
        counts[app] = counts.get(app, 0) + 1
    # Rule 1: the 5 most launched apps; they are polled in app id (byte) order.
    apps = sorted((a for a, _ in sorted(counts.items(), key=lambda c: (-c[1], c[0].encode()))[:5]), key=str.encode)
    period = 86400 * len(apps) / budget
    end = events[-1][0]
    first = {a: next(t for t, x in events if x == a) for a in apps}
    step = {a: 1.0 for a in apps}
    tat = {a: -math.inf for a in apps}
    held = {}  # app -> sent at
    last_refresh, last_launch = {}, {}
    device_last_launch = -math.inf
    clock = -math.inf

    def conforms(a, t):
        return t >= tat[a] - tolerance

    def deliver(a, sent_at, t, at_open=False):
        if not at_open:
            tat[a] = max(tat[a], t) + interval
        totals["delivered"] += 1
        totals["delayed"] += t > sent_at
        totals["at_open"] += at_open
        last_refresh[a] = t

    def attempt(t, opened):
        global clock
        clock = t
        for a in sorted(held, key=str.encode):
            s = held[a]
            if t > s + ttl:
                totals["dropped"] += 1
            elif a == opened:
                deliver(a, s, t, at_open=True)
            elif conforms(a, t):
                deliver(a, s, t)
            else:
                continue
            del held[a]

    i = 0
    while True:
        # The next instant: a keep-alive (while a push is held), a poll, a launch; in that order at a tie.
        tick = (math.floor(clock / keep_alive) + 1) * keep_alive if held else math.inf
        polls = [first[a] + step[a] * period for a in apps if last_launch.get(a) is not None]
        poll = min(polls) if polls else math.inf
        launch = events[i][0] if i < len(events) else math.inf
        t = min(tick, poll, launch)
        if t == math.inf or (t > end and t != launch):
            break
        if tick == t:
            attempt(t, None)
        elif poll == t:
            clock = t
            for a in apps:
                if last_launch.get(a) is not None and first[a] + step[a] * period <= t:
                    step[a] += 1
                    totals["sent"] += 1
                    if a in held:
                        totals["dropped" if t > held.pop(a) + ttl else "collapsed"] += 1
                    dozes = service == "fcm" and t - device_last_launch >= doze_after
                    if conforms(a, t) and not dozes:
                        deliver(a, t, t)
                    else:
                        held[a] = t
        else:
            _, a = events[i]
            i += 1
            if a in last_launch:  # scored
                needy = t - last_launch[a] > tau
                fresh = t - max(last_launch[a], last_refresh.get(a, -math.inf)) <= tau
                totals["needy"] += needy
                totals["fresh"] += needy and fresh
            if a in apps:
                last_launch[a] = t
                last_refresh[a] = t
            device_last_launch = t
            if held:
                attempt(t, a if a in apps else None)
    totals["dropped"] += len(held)

print(" ".join(f"{k} {v}" for k, v in totals.items() if k not in ("needy", "fresh")))
print(f"needy {totals['needy']} fresh {totals['fresh']} hit_rate {totals['fresh'] / totals['needy']:.6f}")
