#!/usr/bin/env python3
"""Puts a `spmv bench --json` run beside the other codes' figures in an anchors file
(../shared/anchors/h200-f64-anchors.tsv: DASP, CSR5, merge-spmv, cuSPARSE through DASP's
driver), all timed back to back: GFLOPS = 2·nnz / back_to_back_ms.

usage: anchors-compare.py RESULTS.json ANCHORS.tsv [--precision f64] [--format SPEC]

Prints a Markdown table per matrix of the anchors found in the run: this project's fastest
correct format back to back (or the format SPEC's figure, with --format), cuSPARSE ALG1 back to back, and the anchors' DASP, CSR5 and
merge-spmv figures, with the ratio best / DASP; then geometric means over the matrices."""
import gzip, json, math, sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
option = lambda name, default: sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
precision = option("--precision", "f64")
only = option("--format", None)
args = [a for a in args if a not in (precision, only)]
results = json.load((gzip.open if args[0].endswith(".gz") else open)(args[0], "rt"))["results"]
anchors = {}
for line in open(args[1]):
    if line.startswith("#"):
        continue
    fields = line.rstrip("\n").split("\t")
    if fields[0] == "matrix":
        header = fields
        continue
    anchors[fields[0]] = dict(zip(header, fields))

def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None

by = {}
for r in results:
    if r["precision"] == precision and r["status"] == "ok" and r.get("back_to_back_ms"):
        by.setdefault(r["matrix"], []).append(r)
print(f"| matrix | nnz | {only or 'best here'} (b2b) | GFLOPS | cuSPARSE ALG1 b2b | DASP f64 | CSR5 | merge-spmv | best / DASP |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
ratios, vs_cusparse = [], []
for m, rs in by.items():
    a = anchors.get(m)
    if a is None:
        continue
    gf = lambda r: 2 * r["nnz"] / (r["back_to_back_ms"] * 1e-3) / 1e9
    candidates = [r for r in rs if only is None or r["format"] == only]
    if not candidates:
        continue
    best = max(candidates, key=gf)
    cus = next((r for r in rs if r["format"] == "cusparse-alg1"), None)
    dasp = num(a.get("dasp_f64"))
    ratio = gf(best) / dasp if dasp else None
    if ratio:
        ratios.append(ratio)
    if cus:
        vs_cusparse.append(gf(best) / gf(cus))
    cells = [m, str(best["nnz"]), best["format"], f"{gf(best):.1f}", f"{gf(cus):.1f}" if cus else "—",
             a.get("dasp_f64", "—"), a.get("csr5_f64", "—"), a.get("merge_spmv", "—"),
             f"{ratio:.2f}" if ratio else "—"]
    print("| " + " | ".join(cells) + " |")
geo = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
print(f"\n{len(ratios)} matrices with a DASP figure: {only or 'best here'} / DASP geometric mean {geo(ratios):.3f}, "
      f"below DASP on {sum(r < 1 for r in ratios)}; {only or 'best here'} / cuSPARSE ALG1 (same run) {geo(vs_cusparse):.3f}")
