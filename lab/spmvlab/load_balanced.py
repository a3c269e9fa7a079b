"""The tables of docs/load-balanced.md from one `spmv bench --json` run (`lab/run
load-balanced`), back-to-back timing (GFLOPS = 2·nnz / back_to_back_ms).

Per precision and per study format F: a table over the generated matrices (F, cuSPARSE ALG1
and ALG2, the best other format and its name, F / ALG1), then geometric means of F / ALG1,
F / ALG2 and F / best other over the generated and over the real matrices, with how often F
is below ALG1. With --anchors: F beside the anchors' CSR5 and merge-spmv figures (their own
drivers, back to back) on the anchor matrices."""

from . import cli, data, md
from .stats import geomean

gf = data.gflops


def cell(r):
    return f"{gf(r):.1f}" if r else "—"


def study_table(by, precision, f, study):
    print(f"\n### {f}, {precision} (b2b GFLOPS)\n")
    print(
        md.header(
            ["matrix", "nnz", f, "cuSPARSE ALG1", "ALG2", "best other", "/ ALG1", "/ ALG2", "/ best other"], "lrrrrlrrr"
        )
    )
    ratios = {"generated": ([], [], []), "real": ([], [], [])}
    below = {"generated": 0, "real": 0}
    for (p, m), rs in sorted(by.items(), key=lambda kv: (not data.generated(kv[0][1]), kv[0][1])):
        if p != precision or f not in rs:
            continue
        mine = gf(rs[f])
        others = [r for name, r in rs.items() if name != f and not name.startswith(f + ":") and name not in study]
        best = max(others, key=gf, default=None)
        a1, a2 = rs.get("cusparse-alg1"), rs.get("cusparse-alg2")
        kind = "generated" if data.generated(m) else "real"
        for k, ref in enumerate([a1, a2, best]):
            if ref:
                ratios[kind][k].append(mine / gf(ref))
        if a1 and mine < gf(a1):
            below[kind] += 1
        if kind == "generated":
            print(
                md.row(
                    [
                        m,
                        rs[f]["nnz"],
                        f"{mine:.1f}",
                        cell(a1),
                        cell(a2),
                        best["format"] + " " + cell(best) if best else "—",
                        *(f"{mine / gf(r):.2f}" if r else "—" for r in (a1, a2, best)),
                    ]
                )
            )
    print()
    print(md.header(["matrices", "count", f"{f} / ALG1", "/ ALG2", "/ best other", "below ALG1"], "lrrrrr"))
    for kind, (r1, r2, rb) in ratios.items():
        if r1:
            print(
                md.row(
                    [
                        f"geomean {kind}",
                        len(r1),
                        f"{geomean(r1):.3f}",
                        f"{geomean(r2):.3f}",
                        f"{geomean(rb):.3f}",
                        below[kind],
                    ]
                )
            )


def anchors_table(by, f, anchors):
    print(f"\n### {f} f64 beside the anchors' CSR5 and merge-spmv (b2b GFLOPS, their own drivers)\n")
    print(md.header(["matrix", f, "CSR5", "merge-spmv", "/ CSR5", "/ merge-spmv"], "lrrrrr"))
    vs = {"csr5_f64": [], "merge_spmv": []}
    for m, a in anchors.items():
        r = by.get(("f64", m), {}).get(f)
        if not r:
            continue
        mine = gf(r)
        cells = []
        for key in vs:
            v = data.number(a.get(key))
            if v:
                vs[key].append(mine / v)
            cells.append(f"{mine / v:.2f}" if v else "—")
        print(md.row([m, f"{mine:.1f}", a.get("csr5_f64", "—"), a.get("merge_spmv", "—"), *cells]))
    print(
        f"\n{f} / CSR5 geomean {geomean(vs['csr5_f64']):.3f} over {len(vs['csr5_f64'])} matrices; "
        f"{f} / merge-spmv geomean {geomean(vs['merge_spmv']):.3f} over {len(vs['merge_spmv'])}"
    )


def main(argv=None):
    ap = cli.parser("load_balanced", __doc__)
    ap.add_argument("results")
    ap.add_argument("--formats", default="merge-csr", help="the study's formats, comma-separated")
    ap.add_argument("--anchors", help="an anchors file (../shared/anchors/h200-f64-anchors.tsv)")
    args = ap.parse_args(argv)
    by = data.ok_by_matrix(args.results)
    study = args.formats.split(",")
    for precision in sorted({p for p, _ in by}):
        for f in study:
            study_table(by, precision, f, study)
    if args.anchors:
        anchors = data.anchors(args.anchors)
        for f in study:
            anchors_table(by, f, anchors)


if __name__ == "__main__":
    main()
