"""A `spmv bench --json` run beside the other codes' figures in an anchors file
(../shared/anchors/h200-f64-anchors.tsv: DASP, CSR5, merge-spmv, cuSPARSE through DASP's
driver), all timed back to back: GFLOPS = 2·nnz / back_to_back_ms.

Prints a Markdown table of the anchor matrices found in the run: this project's fastest
correct format back to back (or FORMAT's figure, with --format), cuSPARSE ALG1 back to back,
and the anchors' DASP, CSR5 and merge-spmv figures, with the ratio best / DASP; then
geometric means over the matrices."""

from . import cli, data, md
from .stats import geomean


def main(argv=None):
    ap = cli.parser("anchors", __doc__)
    ap.add_argument("results")
    ap.add_argument("anchors")
    ap.add_argument("--precision", default="f64")
    ap.add_argument("--format", help="the format to set beside the anchors (default: the per-matrix best)")
    args = ap.parse_args(argv)
    anchors = data.anchors(args.anchors)
    by = {}
    for r in data.load(args.results)["results"]:
        if r["precision"] == args.precision and r["status"] == "ok" and r.get("back_to_back_ms"):
            by.setdefault(r["matrix"], []).append(r)
    label = args.format or "best here"
    print(
        md.header(
            [
                "matrix",
                "nnz",
                f"{label} (b2b)",
                "GFLOPS",
                "cuSPARSE ALG1 b2b",
                "DASP f64",
                "CSR5",
                "merge-spmv",
                "best / DASP",
            ]
        )
    )
    ratios, vs_cusparse = [], []
    for m, rs in by.items():
        a = anchors.get(m)
        candidates = [r for r in rs if args.format is None or r["format"] == args.format]
        if a is None or not candidates:
            continue
        best = max(candidates, key=data.gflops)
        cus = next((r for r in rs if r["format"] == "cusparse-alg1"), None)
        dasp = data.number(a.get("dasp_f64"))
        ratio = data.gflops(best) / dasp if dasp else None
        if ratio:
            ratios.append(ratio)
        if cus:
            vs_cusparse.append(data.gflops(best) / data.gflops(cus))
        print(
            md.row(
                [
                    m,
                    best["nnz"],
                    best["format"],
                    f"{data.gflops(best):.1f}",
                    f"{data.gflops(cus):.1f}" if cus else "—",
                    a.get("dasp_f64", "—"),
                    a.get("csr5_f64", "—"),
                    a.get("merge_spmv", "—"),
                    f"{ratio:.2f}" if ratio else "—",
                ]
            )
        )
    print(
        f"\n{len(ratios)} matrices with a DASP figure: {label} / DASP geometric mean {geomean(ratios):.3f}, "
        f"below DASP on {sum(r < 1 for r in ratios)}; {label} / cuSPARSE ALG1 (same run) {geomean(vs_cusparse):.3f}"
    )


if __name__ == "__main__":
    main()
