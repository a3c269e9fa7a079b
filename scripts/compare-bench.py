#!/usr/bin/env python3
"""Compares two `spmv bench --json` files of the same inputs (e.g. the previous binary and
this one, run one after the other on the same GPU): per matrix x format x precision, the
ratio of the median times new/old, and every result more than --limit slower.

usage: compare-bench.py OLD.json NEW.json [--limit 0.03]"""
import json, math, sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
limit = float(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else 0.03
old, new = (json.load(open(p)) for p in args[:2])
key = lambda r: (r["matrix"], r["format"], r["precision"])
before = {key(r): r for r in old["results"] if r["status"] == "ok"}
rows, slower = [], []
for r in new["results"]:
    o = before.get(key(r))
    if r["status"] != "ok" or o is None:
        continue
    ratio = r["median_ms"] / o["median_ms"]
    rows.append((key(r), o["median_ms"] * 1e3, r["median_ms"] * 1e3, ratio))
    if ratio > 1 + limit:
        slower.append(rows[-1])
print(f"# {len(rows)} results compared; new/old median time")
for (m, f, p), o, n, ratio in rows:
    print(f"{m[:40]:<40} {f:<14} {p:<4} {o:>10.2f} {n:>10.2f}  {ratio:6.3f}")
geo = math.exp(sum(math.log(r[3]) for r in rows) / len(rows)) if rows else float("nan")
print(f"# geometric mean new/old: {geo:.4f}")
print(f"# more than {limit:.0%} slower: {len(slower)}")
for (m, f, p), o, n, ratio in slower:
    print(f"#   {m} / {f} / {p}: {o:.2f} -> {n:.2f} us ({ratio:.3f})")
