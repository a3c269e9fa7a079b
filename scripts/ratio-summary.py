#!/usr/bin/env python3
"""Geometric-mean ratio of one format's back-to-back GFLOPS over another's in a `spmv bench
--json` run, per precision, over the matrices both ran correctly; generated specs (names with
':') and files reported apart.

usage: ratio-summary.py RESULTS.json FORMAT BASELINE"""
import gzip, json, math, sys

path, fmt, base = sys.argv[1:4]
results = json.load((gzip.open if path.endswith(".gz") else open)(path, "rt"))["results"]
ok = {}
for r in results:
    if r["status"] == "ok" and r.get("back_to_back_ms"):
        ok[(r["precision"], r["matrix"], r["format"])] = r["back_to_back_ms"]
for prec in sorted({k[0] for k in ok}):
    for label, pick in [("generated", lambda m: ":" in m), ("files", lambda m: ":" not in m)]:
        ratios = [ok[(p, m, base)] / t for (p, m, f), t in ok.items()
                  if p == prec and f == fmt and pick(m) and (p, m, base) in ok]
        if ratios:
            geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
            print(f"{prec} {label}: {fmt} / {base} geometric mean {geo:.3f} over {len(ratios)} matrices "
                  f"(min {min(ratios):.2f}, max {max(ratios):.2f}, below 1 on {sum(r < 1 for r in ratios)})")
