#!/usr/bin/env python3
"""How much two `spmv bench --json` runs of the same matrices and formats disagree, per timing
method: the host-issued back-to-back time (`back_to_back_ms`) and the CUDA-graph replay of the
same launches (`graph_ms`). On products of a few microseconds the first is set by the host's
launch rate and jitter; this shows whether the second is steadier (docs/auto.md).

usage: timing-noise.py FIRST.json SECOND.json

Per method: the 5th, 50th and 95th percentile of second / first over the (matrix, format)
pairs both runs measured, and how often the per-matrix fastest format is the same in both."""
import sys

from benchjson import ok_by_matrix

first, second = (ok_by_matrix(p) for p in sys.argv[1:3])


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


for method in ("back_to_back_ms", "graph_ms"):
    ratios, same_best, matrices = [], 0, 0
    for key, row in first.items():
        other = second.get(key, {})
        pairs = {f: (r.get(method), other[f].get(method)) for f, r in row.items() if f in other}
        pairs = {f: (a, b) for f, (a, b) in pairs.items() if a and b}
        if not pairs:
            continue
        ratios += [b / a for a, b in pairs.values()]
        matrices += 1
        same_best += min(pairs, key=lambda f: pairs[f][0]) == min(pairs, key=lambda f: pairs[f][1])
    print(
        f"{method}: {len(ratios)} pairs on {matrices} matrices; second / first 5th {pct(ratios, 0.05):.3f}, "
        f"median {pct(ratios, 0.5):.3f}, 95th {pct(ratios, 0.95):.3f}; same fastest format on {same_best} of {matrices}"
    )
