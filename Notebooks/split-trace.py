#!/usr/bin/env python3
"""Splits a FetchCast trace by time, per device: the first DAYS days after each device's first
event go to TRAIN, the rest is left out. Writes the split instants to SPLIT (CSV).

Used by make-data.sh for calibration.ipynb (fit on the first part, score on the rest).
Standard library only; deterministic (gzip without a timestamp).

    python3 split-trace.py TRACE.csv.gz DAYS TRAIN.csv.gz SPLIT.csv
"""
import csv
import gzip
import io
import sys
from datetime import datetime


def main(trace, days, train_path, split_path):
    days = float(days)
    with gzip.open(trace, "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    first, last = {}, {}
    for r in rows:
        t = datetime.fromisoformat(r["time"]).timestamp()
        d = r["device"]
        first[d] = min(first.get(d, t), t)
        last[d] = max(last.get(d, t), t)
    cut = {d: first[d] + days * 86400 for d in first}
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["time", "device", "app", "event", "result", "bytes", "duration_ms"])
    for r in rows:
        if datetime.fromisoformat(r["time"]).timestamp() < cut[r["device"]]:
            w.writerow([r[k] for k in ["time", "device", "app", "event", "result", "bytes", "duration_ms"]])
    with open(train_path, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as g:
        g.write(out.getvalue().encode())
    with open(split_path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["device", "first_utc", "split_utc", "last_utc"])
        for d in sorted(first):
            w.writerow([d, int(first[d]), int(cut[d]), int(last[d])])


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
