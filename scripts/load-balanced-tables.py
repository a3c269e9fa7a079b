#!/usr/bin/env python3
"""Tables of docs/load-balanced.md from one `spmv bench --json` run, back-to-back timing
(GFLOPS = 2·nnz / back_to_back_ms).

usage: load-balanced-tables.py RESULTS.json --formats merge-csr[,csr5] [--anchors ANCHORS.tsv]

Per precision and per study format F: a table over the generated matrices (F, cuSPARSE
ALG1 and ALG2, the best other format and its name, F / ALG1), then geometric means of
F / ALG1, F / ALG2 and F / best other over the generated and over the real matrices, with
how often F is below ALG1. With --anchors: F beside the anchors' CSR5 and merge-spmv
figures (their own drivers, back to back) on the anchor matrices."""
import sys

from benchjson import geo, ok_by_matrix

args = sys.argv[1:]
option = lambda name, default=None: args[args.index(name) + 1] if name in args else default
by = ok_by_matrix(args[0])
study = option("--formats", "merge-csr").split(",")
anchors_path = option("--anchors")

gf = lambda r: 2 * r["nnz"] / (r["back_to_back_ms"] * 1e-3) / 1e9

for precision in sorted({p for p, _ in by}):
    for f in study:
        print(f"\n### {f}, {precision} (b2b GFLOPS)\n")
        print(f"| matrix | nnz | {f} | cuSPARSE ALG1 | ALG2 | best other | / ALG1 | / ALG2 | / best other |")
        print("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
        ratios = {"generated": ([], [], []), "real": ([], [], [])}
        below = {"generated": 0, "real": 0}
        for (p, m), rs in sorted(by.items(), key=lambda kv: (":" not in kv[0][1], kv[0][1])):
            if p != precision or f not in rs:
                continue
            mine = gf(rs[f])
            others = [r for name, r in rs.items() if name != f and not name.startswith(f + ":") and name not in study]
            best = max(others, key=gf, default=None)
            a1, a2 = rs.get("cusparse-alg1"), rs.get("cusparse-alg2")
            kind = "generated" if ":" in m else "real"
            for k, ref in enumerate([a1, a2, best]):
                if ref:
                    ratios[kind][k].append(mine / gf(ref))
            if a1 and mine < gf(a1):
                below[kind] += 1
            if kind == "generated":
                cell = lambda r: f"{gf(r):.1f}" if r else "—"
                ratio = lambda r: f"{mine / gf(r):.2f}" if r else "—"
                print(f"| {m} | {rs[f]['nnz']} | {mine:.1f} | {cell(a1)} | {cell(a2)} | "
                      f"{best['format'] + ' ' + cell(best) if best else '—'} | {ratio(a1)} | {ratio(a2)} | {ratio(best)} |")
        print(f"\n| matrices | count | {f} / ALG1 | / ALG2 | / best other | below ALG1 |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for kind, (r1, r2, rb) in ratios.items():
            if r1:
                print(f"| geomean {kind} | {len(r1)} | {geo(r1):.3f} | {geo(r2):.3f} | {geo(rb):.3f} | {below[kind]} |")

if anchors_path:
    anchors, header = {}, None
    for line in open(anchors_path):
        if line.startswith("#"):
            continue
        fields = line.rstrip("\n").split("\t")
        if fields[0] == "matrix":
            header = fields
        else:
            anchors[fields[0]] = dict(zip(header, fields))
    num = lambda v: float(v) if v not in (None, "", "NA") else None
    for f in study:
        print(f"\n### {f} f64 beside the anchors' CSR5 and merge-spmv (b2b GFLOPS, their own drivers)\n")
        print(f"| matrix | {f} | CSR5 | merge-spmv | / CSR5 | / merge-spmv |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        vs = {"csr5_f64": [], "merge_spmv": []}
        for m, a in anchors.items():
            r = by.get(("f64", m), {}).get(f)
            if not r:
                continue
            mine = gf(r)
            cells = []
            for key in vs:
                v = num(a.get(key))
                if v:
                    vs[key].append(mine / v)
                cells.append(f"{mine / v:.2f}" if v else "—")
            print(f"| {m} | {mine:.1f} | {a.get('csr5_f64', '—')} | {a.get('merge_spmv', '—')} | {cells[0]} | {cells[1]} |")
        print(f"\n{f} / CSR5 geomean {geo(vs['csr5_f64']):.3f} over {len(vs['csr5_f64'])} matrices; "
              f"{f} / merge-spmv geomean {geo(vs['merge_spmv']):.3f} over {len(vs['merge_spmv'])}")
