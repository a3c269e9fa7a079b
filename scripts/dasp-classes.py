#!/usr/bin/env python3
"""DASP by row-class mix (the DASP paper's Figures 14-15): from a `spmv bench --json` run
with `dasp` and a baseline, groups the matrices by the class holding most of their entries
(long rows > max_len, medium, short 1-4; dasp's stats long_nnz/medium_nnz/short_nnz, or the
row counts when a run predates them) and prints, per precision and group, the geometric
mean of dasp's back-to-back speed-up over the baseline.

usage: dasp-classes.py RESULTS.json [BASELINE=cusparse-alg1]"""
import gzip, json, math, sys

path = sys.argv[1]
base = sys.argv[2] if len(sys.argv) > 2 else "cusparse-alg1"
results = json.load((gzip.open if path.endswith(".gz") else open)(path, "rt"))["results"]
b2b = {(r["precision"], r["matrix"], r["format"]): r for r in results if r["status"] == "ok" and r.get("back_to_back_ms")}
groups = {}
for (prec, m, f), r in b2b.items():
    if f != "dasp" or (prec, m, base) not in b2b:
        continue
    extra = dict(r["stats"]["extra"])
    key = "nnz" if "long_nnz" in extra else "rows"
    shares = {c: extra.get(f"{c}_{key}", 0.0) for c in ("long", "medium", "short")}
    dominant = max(shares, key=shares.get)
    ratio = b2b[(prec, m, base)]["back_to_back_ms"] / r["back_to_back_ms"]
    groups.setdefault((prec, dominant, key), []).append(ratio)
print(f"| precision | most entries in | matrices | dasp / {base} (geo-mean) | min | max |")
print("| --- | --- | --- | --- | --- | --- |")
for (prec, cls, key), v in sorted(groups.items()):
    geo = math.exp(sum(map(math.log, v)) / len(v))
    print(f"| {prec} | {cls} rows (by {key}) | {len(v)} | {geo:.2f} | {min(v):.2f} | {max(v):.2f} |")
