#!/usr/bin/env python3
"""The TEB paper's comparison (its Table 2 and Fig. 18-19) from `spmv bench --json` files.

usage: scripts/teb-experiment.py SHARED.json[.gz] LARGE.json[.gz]

Prints the Markdown tables of docs/teb.md: mean and max speed-ups of teb and teb-lanes over
each comparator (speed-up = comparator time / TEB time, the paper's eq. 11; the arithmetic
mean is the paper's average, the geometric mean is given beside it), split into regular and
irregular shared matrices (regular: longest row <= 2 x mean row length), the large generated
matrices one by one, TEB's chosen partitions and the preprocessing times per phase. Every
ratio compares two formats of the same run.
"""
import collections
import gzip
import json
import math
import statistics
import sys

import mdcells

TEBS = ["teb", "teb-lanes"]
COMPARATORS = ["amf-csr", "pbc", "csr-scalar", "cusparse-alg1"]
PAPER = {"amf-csr": 3.23, "pbc": 5.83, "csr-scalar": 2.33, "cusparse-alg1": None}
PAPER_MATRICES = ["1138_bus", "nasa1824", "dw8192"]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def problems(report):
    by = collections.OrderedDict()
    for r in report["results"]:
        by.setdefault((r["matrix"], r["precision"]), {})[r["format"]] = r
    return by


def extra(r):
    return dict(r["stats"]["extra"])


def regular(r):
    s = r["stats"]
    return s["max_row_len"] <= 2 * max(s["mean_row_len"], 1e-12)


def speedups(by, precision, teb, comp, keep=lambda r: True):
    out = []
    for (_, p), fs in by.items():
        if p != precision or teb not in fs or comp not in fs:
            continue
        a, b = fs[teb], fs[comp]
        if a["status"] == "ok" and b["status"] == "ok" and keep(a):
            out.append(b["median_ms"] / a["median_ms"])
    return out


def summary_row(label, sp, paper=None):
    if not sp:
        return f"| {label} | 0 | | | | | |"
    geo = math.exp(statistics.mean(math.log(s) for s in sp))
    wins = sum(s > 1 for s in sp)
    p = f"{paper:.2f}" if paper else "—"
    return (f"| {label} | {len(sp)} | **{statistics.mean(sp):.2f}** | {geo:.2f} | {max(sp):.2f} | {min(sp):.3f} | "
            f"{wins} ({100 * wins / len(sp):.0f}%) | {p} |")


def table2(by, title, keep):
    print(f"#### {title}\n")
    print("| TEB vs comparator, precision | matrices | mean speed-up | geo-mean | max | min | TEB faster on | paper (V100, mean) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for teb in TEBS:
        for precision in ("f64", "f32"):
            for comp in COMPARATORS:
                sp = speedups(by, precision, teb, comp, keep)
                print(summary_row(f"{teb} vs {comp}, {precision}", sp, PAPER[comp] if teb == "teb" else None))
    print()


def large_table(by):
    for precision in ("f64", "f32"):
        print(f"#### Large generated matrices, {precision}: median time in µs (fastest in bold)\n")
        formats = TEBS + COMPARATORS
        print("| matrix | rows | nnz | " + " | ".join(formats) + " | TEB bLN, k | teb vs best other |")
        print("|" + " --- |" * (len(formats) + 5))
        for (m, p), fs in by.items():
            if p != precision:
                continue
            ok = {f: r for f, r in fs.items() if r["status"] == "ok"}
            cells, best = mdcells.cells(fs, formats, "median_ms", lambda r: f"{r['median_ms'] * 1e3:.1f}", "—")
            e = extra(fs["teb"])
            others = min(ok[f]["median_ms"] for f in ok if f not in TEBS)
            any_r = fs["teb"]
            print(f"| {m} | {any_r['nrows']} | {any_r['nnz']} | " + " | ".join(cells) +
                  f" | {e['blocks']:.0f}, {e['k']:g} | {others / ok['teb']['median_ms']:.3f}x |")
        print()


def quantiles(v):
    v = sorted(v)
    q = lambda f: v[min(len(v) - 1, int(f * len(v)))]
    return f"{q(0.5):.3f} | {q(0.9):.3f} | {v[-1]:.3f}"


def preprocessing(shared, large):
    print("#### Preprocessing on the host (16-core CPU of the H200 machine), ms\n")
    print("| set | figure | median | 90th percentile | max |")
    print("| --- | --- | --- | --- | --- |")
    for name, by in (("shared (317)", shared), ("large (5)", large)):
        rows = [fs for (_, p), fs in by.items() if p == "f64"]
        for fmt, key in (("teb", "threshold_selection_ms"), ("teb", "merge_ms"), ("pbc", "partition_ms"),
                         ("pbc", "layout_ms"), ("amf-csr", "fold_ms")):
            print(f"| {name} | {fmt} {key} | {quantiles([extra(fs[fmt])[key] for fs in rows])} |")
        for fmt in ("teb", "pbc", "amf-csr", "csr-scalar"):
            print(f"| {name} | {fmt} whole conversion (convert_ms) | {quantiles([fs[fmt]['convert_ms'] for fs in rows])} |")
    print()
    print("| large matrix (f64) | teb threshold selection ms | teb merge ms | bLN | critical count | candidates tried | pbc partition ms | pbc layout ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (m, p), fs in large.items():
        if p != "f64":
            continue
        e, q = extra(fs["teb"]), extra(fs["pbc"])
        crit = f"{e['critical_blocks']:.0f}" if e["critical_blocks"] else "none"
        print(f"| {m} | {e['threshold_selection_ms']:.1f} | {e['merge_ms']:.1f} | {e['blocks']:.0f} | {crit} | "
              f"{e['candidates_tried']:.0f} | {q['partition_ms']:.1f} | {q['layout_ms']:.1f} |")
    print()


def partitions(shared):
    rows = [fs for (_, p), fs in shared.items() if p == "f64"]
    blocks = [extra(fs["teb"])["blocks"] for fs in rows]
    ks = collections.Counter(extra(fs["teb"])["k"] for fs in rows)
    crit = sum(1 for fs in rows if extra(fs["teb"])["critical_blocks"] > 0)
    below = sum(1 for b in blocks if b < 132)
    pbc = [extra(fs["pbc"])["blocks"] for fs in rows]
    amf = [extra(fs["amf-csr"])["sub_blocks"] for fs in rows]
    print("#### Partitions chosen on the 317 shared matrices\n")
    print(f"- teb: bLN median {statistics.median(blocks):.0f}, min {min(blocks):.0f}, max {max(blocks):.0f}; "
          f"{below} matrices get fewer blocks than the H200 has SMs (132); critical count found on {crit}; "
          f"k = " + ", ".join(f"{k:g} on {n}" for k, n in sorted(ks.items())))
    ratio = [extra(fs["teb"])["max_block_nnz_over_mean"] for fs in rows]
    print(f"- teb: largest block / mean block nnz: median {statistics.median(ratio):.3f}, max {max(ratio):.2f}")
    print(f"- pbc: P median {statistics.median(pbc):.0f}, max {max(pbc):.0f}; "
          f"stored/nnz median {statistics.median(fs['pbc']['stats']['stored'] / max(1, fs['pbc']['nnz']) for fs in rows):.2f}, "
          f"max {max(fs['pbc']['stats']['stored'] / max(1, fs['pbc']['nnz']) for fs in rows):.1f}")
    print(f"- amf-csr: sub-blocks median {statistics.median(amf):.0f}, max {max(amf):.0f}")
    print()


def paper_matrices(shared):
    print("#### The paper's matrices present in the shared set (median µs)\n")
    formats = TEBS + COMPARATORS
    print("| matrix | precision | rows | nnz | " + " | ".join(formats) + " |")
    print("|" + " --- |" * (len(formats) + 4))
    for (m, p), fs in shared.items():
        if m in PAPER_MATRICES:
            cells = [f"{fs[f]['median_ms'] * 1e3:.1f}" if fs[f]["status"] == "ok" else "—" for f in formats]
            print(f"| {m} | {p} | {fs['teb']['nrows']} | {fs['teb']['nnz']} | " + " | ".join(cells) + " |")
    print()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    shared_report, large_report = load(sys.argv[1]), load(sys.argv[2])
    shared, large = problems(shared_report), problems(large_report)
    m = shared_report["machine"]
    print(f"Machine: {m['name']} ({m['arch']}, {m['multiprocessors']} SMs), copy roofline {m['copy_gbs']:.0f} GB/s; "
          f"median of {shared_report['reps']} runs after {shared_report['warmup']} warm-up runs.\n")
    table2(shared, "Shared matrices, regular (longest row ≤ 2 × mean)", regular)
    table2(shared, "Shared matrices, irregular", lambda r: not regular(r))
    table2(shared, "Shared matrices, all 317", lambda r: True)
    table2(large, "Large generated matrices (5)", lambda r: True)
    large_table(large)
    paper_matrices(shared)
    partitions(shared)
    preprocessing(shared, large)


if __name__ == "__main__":
    main()
