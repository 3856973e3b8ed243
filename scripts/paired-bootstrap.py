#!/usr/bin/env python3
"""How sure is a comparison of two policies over a handful of users? A paired bootstrap over
devices of `fetchcast evaluate`'s devices.csv (docs/model.md, "Device conditions").

Each side is `DEVICES_CSV:POLICY[:BUDGET]` (the budget may be left out when the file holds one).
The two sides may come from different runs (say one with `--constraints`), over the same devices.
It prints, for A against B, on the devices of both:

- hit rate: each side's pooled hit rate (fresh needy launches / needy launches), A - B and A / B;
- battery J/device-day: each side's (battery joules / device-days), and the saving 1 - A / B;

each with a 95% percentile interval from resampling the devices with replacement (`--draws`
times, `--seed`), the same draw for both sides (paired). With few devices the interval is wide:
it says how far a target met or missed on them could be chance.

Standard library only. Example (from a clone):

    C=Data/ubiqlog-sample-conditions.csv.gz
    fetchcast evaluate $C --policies learned,learned-blind --budgets 24 --out out/pair
    scripts/paired-bootstrap.py out/pair/devices.csv:learned out/pair/devices.csv:learned-blind
"""

import argparse
import csv
import random
import sys


def read_side(spec):
    """{device: (needy, fresh needy, battery joules, device-days)} of one policy and budget."""
    parts = spec.split(":")
    if len(parts) not in (2, 3):
        sys.exit(f"{spec}: expected DEVICES_CSV:POLICY[:BUDGET]")
    path, policy = parts[0], parts[1]
    budget = parts[2] if len(parts) == 3 else None
    rows = {}
    budgets = set()
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if row["policy"] != policy or (budget is not None and float(row["budget"] or "nan") != float(budget)):
                continue
            budgets.add(row["budget"])
            try:
                days = float(row["device_days"])
                rows[row["device"]] = (
                    float(row["needy_launches"]), float(row["fresh_needy_launches"]),
                    float(row["battery_joules_per_device_day"] or "nan") * days, days)
            except (KeyError, ValueError) as error:
                sys.exit(f"{path}:{line}: cannot read the row ({error}); give a devices.csv of fetchcast evaluate")
    if not rows:
        sys.exit(f"{path}: no rows of policy {policy!r}" + (f" at budget {budget}" if budget else ""))
    if len(budgets) > 1:
        sys.exit(f"{path}: policy {policy!r} ran at budgets {', '.join(sorted(budgets))}; add :BUDGET")
    return rows


def pooled(side, devices):
    needy = sum(side[d][0] for d in devices)
    days = sum(side[d][3] for d in devices)
    hit = sum(side[d][1] for d in devices) / needy if needy else float("nan")
    joules = sum(side[d][2] for d in devices) / days if days else float("nan")
    return hit, joules


def measures(a, b, devices):
    hit_a, j_a = pooled(a, devices)
    hit_b, j_b = pooled(b, devices)
    return {
        "hit rate A": hit_a, "hit rate B": hit_b, "A - B": hit_a - hit_b,
        "A / B": hit_a / hit_b if hit_b else float("nan"),
        "battery J A": j_a, "battery J B": j_b,
        "saving 1 - A/B": 1 - j_a / j_b if j_b else float("nan"),
    }


def compare(a, b, draws, seed):
    devices = sorted(set(a) & set(b))
    if not devices:
        sys.exit("the two sides share no device")
    estimate = measures(a, b, devices)
    rng = random.Random(seed)
    samples = [measures(a, b, [rng.choice(devices) for _ in devices]) for _ in range(draws)]
    intervals = {}
    for key in estimate:
        values = sorted(s[key] for s in samples)
        intervals[key] = (values[int(0.025 * draws)], values[min(draws - 1, int(0.975 * draws))])
    return devices, estimate, intervals


def self_test():
    """Two devices, hand-computed: A makes 3 of 4 and 1 of 4 needy launches fresh, B 2 and 2."""
    a = {"d1": (4, 3, 10, 1), "d2": (4, 1, 30, 1)}
    b = {"d1": (4, 2, 20, 1), "d2": (4, 2, 20, 1)}
    devices, estimate, intervals = compare(a, b, draws=2000, seed=1)
    assert devices == ["d1", "d2"]
    assert estimate["hit rate A"] == 0.5 and estimate["A - B"] == 0.0 and estimate["saving 1 - A/B"] == 0.0
    # Resampled: both d1 (A - B = 0.25, saving 0.5), both d2 (-0.25, -0.5), or one each (0, 0).
    assert intervals["A - B"] == (-0.25, 0.25), intervals["A - B"]
    assert intervals["saving 1 - A/B"] == (-0.5, 0.5), intervals["saving 1 - A/B"]
    print("paired-bootstrap self-test: ok")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a", nargs="?", help="DEVICES_CSV:POLICY[:BUDGET]")
    parser.add_argument("b", nargs="?", help="DEVICES_CSV:POLICY[:BUDGET]")
    parser.add_argument("--draws", type=int, default=4000, help="bootstrap draws (default 4000)")
    parser.add_argument("--seed", type=int, default=1, help="the draws' seed (default 1)")
    parser.add_argument("--self-test", action="store_true", help="check the arithmetic on a hand-computed case")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return
    if not args.a or not args.b:
        parser.error("give two sides, DEVICES_CSV:POLICY[:BUDGET] each")
    if args.draws < 100:
        parser.error("--draws must be at least 100")
    devices, estimate, intervals = compare(read_side(args.a), read_side(args.b), args.draws, args.seed)
    print(f"A = {args.a}\nB = {args.b}\n{len(devices)} devices, {args.draws} draws (seed {args.seed}), 95% intervals")
    for key, value in estimate.items():
        low, high = intervals[key]
        print(f"  {key:<16} {value:8.4f}   [{low:.4f}, {high:.4f}]")


if __name__ == "__main__":
    main()
