#!/usr/bin/env python3
"""How high can a fetch policy that sees one app at a time go? (docs/model.md, "Where app
visibility is short of 2x interval")

An app's own backend, or an app scheduling its own BGAppRefreshTask, knows only that app's
launches, and `fetchcast evaluate --visibility app` caps it at floor(B/k) fetches per app and
local day. Its best moments are *return visits*: one fetch tau + 30 s after a launch of the app
(if it has not been opened again by then) makes the app's next session fresh when the session
starts within the following tau. This script replays the launches of a trace (no fetch changes
them) and scores, per app and local day under that cap:

- fcfs: the first return visits of each day (the issue's orientation rule);
- hindsight: the return visits that do make a session fresh, as many as the cap allows (knows
  the future: an upper bound for any choice among return visits);
- paced: the return visits with the highest chance by a class of what the app's own history
  shows at the time (launches in the current burst, the gap before it, the hour in 3-hour
  bands), the chances fitted on the
  training users, and each day's opportunities known in advance (an ideal pacer);
- paced+chains: the same with up to `--chain` fetches per launch (tau + 30 s, 2 tau + 30 s, ...);
- paced+slots: the same with fetches at the start of each half hour too, scored by the share of
  the app's previous 28 days on which a fetch then made a session fresh (its habits by time of
  day: what an anticipatory fetch before a usual session can know);
- boosted (with --boosted, needs scikit-learn): a gradient-boosted classifier on richer features
  (burst length and duration, previous gap, hour, weekday, today's sessions, the app's sessions
  per day over the last two weeks, its past return rate, the last launch's duration) in place of
  the classes, with the same ideal pacing.

Rates are of needy launches (a launch of a fetch-enabled app more than tau after the app's
previous one, the app's first launch excluded), as `fetchcast evaluate` counts them.

    scripts/app-visibility-bound.py                       # the bundled sample and splits
    scripts/app-visibility-bound.py TRACE --budget 24 --boosted
"""
import argparse
import collections
import csv
import datetime
import gzip
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_launches(path, devices):
    """Per device: [(unix seconds, utc offset s, app, duration ms)], the trace's order."""
    out = collections.defaultdict(list)
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            if row["event"] != "launch" or row["device"] not in devices:
                continue
            text = row["time"]
            if text.lstrip("-").isdigit():
                t, offset = float(text), 0
            else:
                moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
                t, offset = moment.timestamp(), int(moment.utcoffset().total_seconds())
            out[row["device"]].append((t, offset, row["app"], int(row.get("duration_ms") or 0)))
    return out


def fetch_enabled(launches, top):
    counts = collections.Counter(app for _, _, app, _ in launches)
    return sorted(counts, key=lambda a: (-counts[a], a.encode()))[:top]


def opportunities(events, tau, chain):
    """Return visits of one app: (fetch time, day, useful, class, features)."""
    out = []
    burst_start, prev_gap, ret_history, sessions = 0, None, [], collections.Counter()
    for i, (t, offset, duration) in enumerate(events):
        day = int((t + offset) // 86400)
        if i == 0 or t - events[i - 1][0] > tau:
            if i > 0:
                prev_gap = t - events[i - 1][0]
            burst_start = i
            sessions[day] += 1
        following = events[i + 1][0] if i + 1 < len(events) else None
        recent = sum(sessions[d] for d in range(day - 14, day)) / 14
        return_rate = (sum(ret_history[-50:]) + 1) / (len(ret_history[-50:]) + 4)
        for k in range(1, chain + 1):
            f = t + k * tau + 30
            if following is not None and following <= f:
                break
            useful = following is not None and following - f <= tau
            gap_class = 0 if prev_gap is None else 1 if prev_gap < 3600 else 2 if prev_gap < 7200 else 3 if prev_gap < 14400 else 4 if prev_gap < 43200 else 5
            hour = ((f + offset) % 86400) / 3600
            features = [k, i - burst_start + 1, t - events[burst_start][0], math.log(prev_gap) if prev_gap else 20,
                        math.sin(hour / 24 * 2 * math.pi), math.cos(hour / 24 * 2 * math.pi), int(((f + offset) // 86400 + 4) % 7 >= 5),
                        sessions[day], recent, return_rate, math.log1p(duration)]
            out.append((f, int((f + offset) // 86400), useful, (k, min(i - burst_start + 1, 4), gap_class, int(hour // 3)), features))
            if k == 1:
                ret_history.append(useful)
    return out


def prepare(trace, devices, args):
    """Per (device, app): its opportunities (return visits, then half-hour slots) and cap; and
    the needy launches."""
    data, needy = [], 0
    for device, launches in read_launches(trace, devices).items():
        apps = fetch_enabled(launches, args.top_apps)
        cap = int(args.budget // len(apps))
        for app in apps:
            events = [(t, offset, duration) for t, offset, a, duration in launches if a == app]
            needy += sum(1 for i in range(1, len(events)) if events[i][0] - events[i - 1][0] > args.tau)
            data.append((cap, opportunities(events, args.tau, args.chain) + slot_opportunities(events, args.tau)))
    return data, needy


def slot_opportunities(events, tau, history=28):
    """Fetches at the start of each half hour of an app's days, scored by the share of its
    previous days (up to `history`) on which a fetch then made a session fresh: (time, day,
    useful, ("slot", share), None)."""
    import bisect

    times = [t for t, _, _ in events]
    offset = events[0][1]

    def useful(start):
        i = bisect.bisect_right(times, start)
        return i < len(times) and times[i] - start <= tau and (i == 0 or times[i] - times[i - 1] > tau)

    first, last = int((times[0] + offset) // 86400), int((times[-1] + offset) // 86400)
    past, out = [], []
    for day in range(first, last + 1):
        starts = [day * 86400 + s * 1800 - offset for s in range(48)]
        hits = {s for s, start in enumerate(starts) if useful(start)}
        window = past[-history:]
        if window:
            for s, start in enumerate(starts):
                share = sum(s in h for h in window) / (len(window) + 2)
                if share > 0:
                    out.append((start, day, s in hits, ("slot", share), None))
        past.append(hits)
    return out


def choose(data, score, first_only=True, slots=False, tau=1800):
    """Per app and day, the cap's worth of opportunities with the highest score (ties: earliest),
    at least tau apart; return visits only (the first of each launch unless not `first_only`),
    and half-hour slots too when `slots`."""
    hits = fetches = 0
    for cap, opps in data:
        days = collections.defaultdict(list)
        for o in opps:
            if o[3][0] == "slot" and not slots or first_only and o[3][0] != 1 and o[3][0] != "slot":
                continue
            days[o[1]].append(o)
        for day in days.values():
            taken = []
            for o in sorted(day, key=lambda o: (-score(o), o[0])):
                if len(taken) == cap:
                    break
                # One fetch of the app per tau at most (a second one would refresh a fresh cache).
                if all(abs(o[0] - other[0]) >= tau for other in taken):
                    taken.append(o)
            fetches += len(taken)
            hits += sum(o[2] for o in taken)
    return hits, fetches


def class_rates(data, chains):
    counts = collections.defaultdict(lambda: [0, 0])
    for _, opps in data:
        for o in opps:
            if o[3][0] != "slot" and (chains or o[3][0] == 1):
                counts[o[3]][0] += 1
                counts[o[3]][1] += o[2]
    return {c: (u + 1) / (n + 4) for c, (n, u) in counts.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", default=os.path.join(ROOT, "Data/ubiqlog-sample.csv.gz"))
    parser.add_argument("--train", default=os.path.join(ROOT, "Data/splits/ubiqlog-dev-train.txt"))
    parser.add_argument("--test", default=os.path.join(ROOT, "Data/splits/ubiqlog-dev-test.txt"))
    parser.add_argument("--budget", type=float, default=24)
    parser.add_argument("--tau", type=float, default=1800)
    parser.add_argument("--top-apps", type=int, default=5)
    parser.add_argument("--chain", type=int, default=3, help="fetches per launch for paced+chains (default 3)")
    parser.add_argument("--boosted", action="store_true", help="also a gradient-boosted classifier (needs scikit-learn)")
    args = parser.parse_args()

    def ids(path):
        return {line.strip() for line in open(path) if line.strip() and not line.startswith("#")}

    train, train_needy = prepare(args.trace, ids(args.train), args)
    test, test_needy = prepare(args.trace, ids(args.test), args)
    rates = class_rates(train, chains=False)
    chain_rates = class_rates(train, chains=True)
    tau = args.tau
    rows = [
        ("fcfs", lambda d: choose(d, lambda o: 0, tau=tau)),
        ("hindsight", lambda d: choose(d, lambda o: o[2], tau=tau)),
        ("paced", lambda d: choose(d, lambda o: rates.get(o[3], 0), tau=tau)),
        ("paced+chains", lambda d: choose(d, lambda o: chain_rates.get(o[3], 0), first_only=False, tau=tau)),
        ("paced+slots", lambda d: choose(d, lambda o: o[3][1] if o[3][0] == "slot" else rates.get(o[3], 0), slots=True, tau=tau)),
    ]
    if args.boosted:
        from sklearn.ensemble import HistGradientBoostingClassifier

        for name, chains in (("boosted", False), ("boosted+chains", True)):
            sample = [o for _, opps in train for o in opps if o[3][0] != "slot" and (chains or o[3][0] == 1)]
            model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15, random_state=1)
            model.fit([o[4] for o in sample], [o[2] for o in sample])

            def run(d, model=model, chains=chains):
                flat = [o for _, opps in d for o in opps if o[3][0] != "slot" and (chains or o[3][0] == 1)]
                p = dict(zip(map(id, flat), model.predict_proba([o[4] for o in flat])[:, 1])) if flat else {}
                return choose(d, lambda o: p[id(o)], first_only=not chains, tau=tau)
            rows.append((name, run))
    print(f"trace {os.path.relpath(args.trace)}; budget {args.budget:g} a device and day, "
          f"cap floor(B/k) per app and local day; tau {args.tau:g} s")
    print(f"{'rule':<16}{'train hit':>10}{'fetches':>9}{'test hit':>10}{'fetches':>9}")
    print(f"{'(needy)':<16}{train_needy:>10}{'':>9}{test_needy:>10}")
    for name, run in rows:
        (h1, f1), (h2, f2) = run(train), run(test)
        print(f"{name:<16}{h1 / max(1, train_needy):>10.3f}{f1:>9}{h2 / max(1, test_needy):>10.3f}{f2:>9}")


if __name__ == "__main__":
    main()
