#!/usr/bin/env python3
"""The Markdown tables of docs/brcp.md from the JSON of scripts/brcp-experiments.sh.

usage: scripts/brcp-tables.py times BENCH.json        SpMV times, BRCP / BRC and each format
                                                       over cuSPARSE ALG1, per precision
       scripts/brcp-tables.py errors ERRORS.json [--all]
                                                       the error experiment (matrices whose
                                                       y = A·1 is exact in every format are
                                                       summed up in one line unless --all)
Only figures from the same run are put side by side.
"""
import json
import math
import sys

FORMATS = ["brc", "brcp", "lightspmv", "cusparse-alg1", "cusparse-alg2"]


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def times(path):
    report = json.load(open(path))
    m = report["machine"]
    print(f"{m['name']} ({m['arch']}), copy roofline {m['copy_gbs']:.0f} GB/s; median of {report['reps']} runs "
          f"after {report['warmup']} warm-up runs; times in µs, fastest in bold.\n")
    by = {}
    for r in report["results"]:
        by.setdefault((r["matrix"], r["precision"]), {})[r["format"]] = r
    for precision in ("f64", "f32"):
        rows = [(k[0], v) for k, v in by.items() if k[1] == precision]
        if not rows:
            continue
        formats = [f for f in FORMATS if any(f in v for _, v in rows)]
        print(f"**{precision}**\n")
        print("| matrix | rows | nnz | max row | " + " | ".join(formats) + " | BRCP / BRC |")
        print("|" + " --- |" * (len(formats) + 5))
        ratios = {f: [] for f in formats}
        brcp_over_brc = []
        for name, v in rows:
            ok = {f: v[f]["median_ms"] * 1e3 for f in formats if f in v and v[f]["status"] == "ok"}
            best = min(ok.values()) if ok else None
            cells = []
            for f in formats:
                t = ok.get(f)
                cells.append("—" if t is None else (f"**{t:.1f}**" if t == best else f"{t:.1f}"))
            any_r = next(iter(v.values()))
            ratio = ok["brcp"] / ok["brc"] if "brcp" in ok and "brc" in ok else float("nan")
            brcp_over_brc.append(ratio)
            base = ok.get("cusparse-alg1")
            for f in formats:
                if base and f in ok:
                    ratios[f].append(base / ok[f])
            print(f"| {name} | {any_r['nrows']} | {any_r['nnz']} | {any_r['stats']['max_row_len']} | "
                  + " | ".join(cells) + f" | {ratio:.2f} |")
        print(f"\nGeometric means: BRCP / BRC time {geomean(brcp_over_brc):.2f}; speed-up over cusparse-alg1: "
              + ", ".join(f"{f} {geomean(ratios[f]):.2f}x" for f in formats) + f" ({len(rows)} matrices).\n")


def errors(path, show_all):
    report = json.load(open(path))
    print(f"{report['device']}, values: {report['values']}, {report['runs']} runs per format. max / mean: "
          "|y − μ| / |μ| over the rows with μ ≠ 0; RE: Σ (y − μ) / μ of run 0 (the paper's eq. 4); "
          "RE spread: largest minus smallest RE over the runs; differ: rows whose bits change between runs.\n")
    by = {}
    for r in report["results"]:
        by.setdefault((r["matrix"], r["precision"]), []).append(r)
    for precision in ("f32", "f64"):
        print(f"**{precision}**\n")
        print("| matrix | rows | format | max rel err | mean rel err | RE | RE spread | differ |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        exact = []
        for (name, p), rs in by.items():
            if p != precision:
                continue
            if not show_all and all(r["status"] == "ok" and r["max_rel_error"] == 0 and r["differing_rows"] == 0
                                    for r in rs):
                exact.append(name)
                continue
            for i, r in enumerate(rs):
                label = f"{name} | {r['nrows']}" if i == 0 else " | "
                if r["status"] != "ok":
                    print(f"| {label} | {r['format']} | {r['status']} | | | | |")
                    continue
                spread = r["re_sum_max"] - r["re_sum_min"]
                print(f"| {label} | {r['format']} | {r['max_rel_error']:.2e} | {r['mean_rel_error']:.2e} | "
                      f"{r['re_sum']:.3e} | {spread:.1e} | {r['differing_rows']} |")
        if exact:
            print(f"\nExact (error 0, same bits) in every format and every run: {', '.join(exact)}.")
        print()
        # Per format over all matrices: how often bits changed, and the mean error.
        stats = {}
        for (name, p), rs in by.items():
            if p != precision:
                continue
            for r in rs:
                if r["status"] == "ok":
                    s = stats.setdefault(r["format"], [0, 0, [], 0])
                    s[0] += 1
                    s[1] += r["differing_rows"] > 0
                    s[2].append(r["mean_rel_error"])
                    s[3] += r["differing_rows"]
        print("| format | matrices | with rows that change between runs | rows that change (sum) | mean of mean rel err |")
        print("| --- | --- | --- | --- | --- |")
        for f, (n, changed, means, rows) in stats.items():
            print(f"| {f} | {n} | {changed} | {rows} | {sum(means) / len(means):.2e} |")
        print()


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("times", "errors"):
        sys.exit(__doc__)
    if sys.argv[1] == "times":
        times(sys.argv[2])
    else:
        errors(sys.argv[2], "--all" in sys.argv[3:])


if __name__ == "__main__":
    main()
