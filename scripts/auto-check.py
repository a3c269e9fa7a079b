#!/usr/bin/env python3
"""Issue 14's check of `auto` and `tune` from one `spmv bench --json` run (scripts/auto-bench.sh),
back-to-back timing.

usage: auto-check.py RESULTS.json [--auto LABEL] [--tune LABEL] [--time b2b|graph]

For every precision and matrix: the per-matrix best format (the fastest correct result of the
run's own formats; auto, tune and cuSPARSE are not candidates of it), then auto's and tune's
speed as a fraction of it (best time / their time; and, since on matrices of a few microseconds
two rows of the same kernel differ by more than the formats do, the same fraction with the time
of the chosen format's own row of the run), their speed over cuSPARSE ALG1, and the
amortisation: conversion + choice + upload in units of the chosen format's product, and the
number of products after which auto has paid off against ALG1 (its own conversion and upload
counted too). Shared matrices and generated ones (names with ':') are reported apart.
LABEL picks the rows (default: the first format label starting with auto / tune).
--time graph scores every row by its CUDA-graph replay time (`graph_ms`: the same back-to-back
products without the host's launch cost), a row that could not be captured by its host-issued
back-to-back time; the default, b2b, by the host-issued time."""
import argparse
import math

from benchjson import geo, ok_by_matrix

ap = argparse.ArgumentParser()
ap.add_argument("results")
ap.add_argument("--auto", default="auto")
ap.add_argument("--tune", default="tune")
ap.add_argument("--time", choices=("b2b", "graph"), default="b2b")
args = ap.parse_args()


def t(r):
    return (args.time == "graph" and r.get("graph_ms")) or r["back_to_back_ms"]


by = ok_by_matrix(args.results)


def own(f):
    return not (f.startswith("auto") or f.startswith("tune") or f.startswith("cusparse"))


def pick(row, prefix):
    return next((r for f, r in sorted(row.items()) if f == prefix or f.startswith(prefix + ":")), None)


def cost_ms(r):
    return (r.get("convert_ms") or 0) + (r.get("upload_ms") or 0) + (r.get("device_convert_ms") or 0)


for precision in sorted({p for p, _ in by}):
    groups = {"shared": [], "generated": []}
    for (p, m), row in sorted(by.items()):
        if p != precision:
            continue
        mine = [r for f, r in row.items() if own(f)]
        if not mine:
            continue
        best = min(mine, key=t)
        groups["generated" if ":" in m else "shared"].append((m, row, best))
    print(f"\n## {precision} ({args.time} timing)\n")
    print("| matrices | n | which | of best (geomean) | worst | < 0.7 | chosen format's own row: of best, worst, < 0.7 | × ALG1 (geomean) | conv+choice in SpMVs (median) | pays off vs ALG1 after (median SpMVs) |")
    print("|---|---:|---|---:|---|---:|---|---:|---:|---:|")
    worst_lines = []
    for group, items in groups.items():
        for which in (args.auto, args.tune):
            frac, own_row, over, conv, payoff, missing = [], [], [], [], [], 0
            for m, row, best in items:
                r = pick(row, which)
                if r is None:
                    missing += 1
                    continue
                f = t(best) / t(r)
                frac.append((f, m, r.get("chosen"), best["format"]))
                same = row.get(r.get("chosen") or "")
                if same:
                    own_row.append(t(best) / t(same))
                base = pick(row, "cusparse-alg1")
                conv.append(cost_ms(r) / t(r))
                if base:
                    over.append(t(base) / t(r))
                    gain = t(base) - t(r)
                    extra = cost_ms(r) - cost_ms(base)
                    payoff.append(0 if extra <= 0 else (extra / gain if gain > 0 else math.inf))
            if not frac:
                continue
            worst = min(frac)
            med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
            print(
                f"| {group} | {len(frac)} | {which} | {geo(f for f, *_ in frac):.3f} | {worst[0]:.2f} {worst[1]} ({worst[2]} vs {worst[3]}) "
                f"| {sum(f < 0.7 for f, *_ in frac)} | {geo(own_row):.3f}, {min(own_row, default=float('nan')):.2f}, {sum(f < 0.7 for f in own_row)} ({len(own_row)}) "
                f"| {geo(over):.2f} | {med(conv):.0f} | {med(payoff):.0f} |"
                + (f" ({missing} missing)" if missing else "")
            )
            for f, m, chosen, bestf in sorted(frac)[:8]:
                worst_lines.append(f"{precision} {group} {which}: {f:.2f} {m}: chose {chosen}, best {bestf}")
    print("\nworst matrices:\n")
    for line in worst_lines:
        print("    " + line)
