#!/usr/bin/env python3
"""Regenerates Data/ubiqlog-sample.csv.gz: the first 28 days of each device of the
development trace (../shared/data/ubiqlog-dev.csv.gz by default), byte-for-byte reproducible."""
import datetime, gzip, io, sys

src = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/ubiqlog-dev.csv.gz"
rows = gzip.open(src, "rt").read().splitlines()
out, first = [rows[0]], {}
for r in rows[1:]:
    f = r.split(",")
    t = datetime.datetime.fromisoformat(f[0])
    first.setdefault(f[1], t)
    if (t - first[f[1]]).days < 28:
        out.append(r)
buf = io.BytesIO()
with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as g:
    g.write(("\n".join(out) + "\n").encode())
open("Data/ubiqlog-sample.csv.gz", "wb").write(buf.getvalue())
print(f"{len(out) - 1} events", file=sys.stderr)
