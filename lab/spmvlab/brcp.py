"""The Markdown tables of docs/brcp.md from the JSON of `lab/run brcp`.

    brcp times BENCH.json             SpMV times, BRCP / BRC and each format over cuSPARSE
                                      ALG1, per precision
    brcp errors ERRORS.json [--all]   the error experiment (matrices whose y = A·1 is exact in
                                      every format are summed up in one line unless --all)

Only figures from the same run are put side by side."""

from . import cli, data, md
from .stats import geomean

FORMATS = ["brc", "brcp", "lightspmv", "cusparse-alg1", "cusparse-alg2"]


def times(path):
    report = data.load(path)
    print(f"{data.machine(report)}; times in µs, fastest in bold.\n")
    by = data.by_problem(report)
    for precision in ("f64", "f32"):
        rows = [(k[0], v) for k, v in by.items() if k[1] == precision]
        if not rows:
            continue
        formats = [f for f in FORMATS if any(f in v for _, v in rows)]
        print(f"**{precision}**\n")
        print(md.header(["matrix", "rows", "nnz", "max row", *formats, "BRCP / BRC"]))
        ratios = {f: [] for f in formats}
        brcp_over_brc = []
        for name, v in rows:
            ok = {f: v[f]["median_ms"] * 1e3 for f in formats if f in v and v[f]["status"] == "ok"}
            best = min(ok.values()) if ok else None
            cells = ["—" if f not in ok else md.bold(f"{ok[f]:.1f}", ok[f] == best) for f in formats]
            any_r = next(iter(v.values()))
            ratio = ok["brcp"] / ok["brc"] if "brcp" in ok and "brc" in ok else float("nan")
            brcp_over_brc.append(ratio)
            base = ok.get("cusparse-alg1")
            for f in formats:
                if base and f in ok:
                    ratios[f].append(base / ok[f])
            print(md.row([name, any_r["nrows"], any_r["nnz"], any_r["stats"]["max_row_len"], *cells, f"{ratio:.2f}"]))
        print(
            f"\nGeometric means: BRCP / BRC time {geomean(brcp_over_brc):.2f}; speed-up over cusparse-alg1: "
            + ", ".join(f"{f} {geomean(ratios[f]):.2f}x" for f in formats)
            + f" ({len(rows)} matrices).\n"
        )


def errors(path, show_all):
    report = data.load(path)
    print(
        f"{report['device']}, values: {report['values']}, {report['runs']} runs per format. max / mean: "
        "|y − μ| / |μ| over the rows with μ ≠ 0; RE: Σ (y − μ) / μ of run 0 (the paper's eq. 4); "
        "RE spread: largest minus smallest RE over the runs; differ: rows whose bits change between runs.\n"
    )
    by = {}
    for r in report["results"]:
        by.setdefault((r["matrix"], r["precision"]), []).append(r)
    for precision in ("f32", "f64"):
        print(f"**{precision}**\n")
        print(md.header(["matrix", "rows", "format", "max rel err", "mean rel err", "RE", "RE spread", "differ"]))
        exact = []
        for (name, p), rs in by.items():
            if p != precision:
                continue
            if not show_all and all(
                r["status"] == "ok" and r["max_rel_error"] == 0 and r["differing_rows"] == 0 for r in rs
            ):
                exact.append(name)
                continue
            for i, r in enumerate(rs):
                first = [name, r["nrows"]] if i == 0 else ["", ""]
                if r["status"] != "ok":
                    print(md.row([*first, r["format"], r["status"], "", "", "", ""]))
                    continue
                spread = r["re_sum_max"] - r["re_sum_min"]
                print(
                    md.row(
                        [
                            *first,
                            r["format"],
                            f"{r['max_rel_error']:.2e}",
                            f"{r['mean_rel_error']:.2e}",
                            f"{r['re_sum']:.3e}",
                            f"{spread:.1e}",
                            r["differing_rows"],
                        ]
                    )
                )
        if exact:
            print(f"\nExact (error 0, same bits) in every format and every run: {', '.join(exact)}.")
        print()
        # Per format over all matrices: how often bits changed, and the mean error.
        stats = {}
        for (_, p), rs in by.items():
            for r in rs:
                if p == precision and r["status"] == "ok":
                    s = stats.setdefault(r["format"], [0, 0, [], 0])
                    s[0] += 1
                    s[1] += r["differing_rows"] > 0
                    s[2].append(r["mean_rel_error"])
                    s[3] += r["differing_rows"]
        print(
            md.header(
                [
                    "format",
                    "matrices",
                    "with rows that change between runs",
                    "rows that change (sum)",
                    "mean of mean rel err",
                ]
            )
        )
        for f, (n, changed, means, rows) in stats.items():
            print(md.row([f, n, changed, rows, f"{sum(means) / len(means):.2e}"]))
        print()


def main(argv=None):
    ap = cli.parser("brcp", __doc__)
    ap.add_argument("table", choices=("times", "errors"))
    ap.add_argument("json")
    ap.add_argument("--all", action="store_true", help="errors: list the exact matrices too")
    args = ap.parse_args(argv)
    if args.table == "times":
        times(args.json)
    else:
        errors(args.json, args.all)


if __name__ == "__main__":
    main()
