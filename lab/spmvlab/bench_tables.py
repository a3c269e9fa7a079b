"""The Markdown tables of docs/results-h200.md from a `spmv bench --json` file.

Prints, per precision: with --times, a table of median kernel times (µs) with one column per
format and the best format's share of the copy roofline; then each format's wins and
geometric-mean speed-up over cuSPARSE ALG1; with --manifest (../shared/matrices/MANIFEST.tsv),
the fastest format counted per matrix kind. Only figures from the same run are put side by
side."""

import collections
import math

from . import cli, data, md


def main(argv=None):
    ap = cli.parser("bench_tables", __doc__)
    ap.add_argument("json")
    ap.add_argument("--manifest")
    ap.add_argument("--times", action="store_true", help="print the per-matrix time table")
    args = ap.parse_args(argv)
    report = data.load(args.json)
    print(f"Machine: {data.machine(report, buffers=True)}.\n")
    results = report["results"]
    formats = list(dict.fromkeys(r["format"] for r in results))
    by_problem = data.by_problem(report)

    if args.times:
        for precision in ("f64", "f32"):
            rows = [(k, v) for k, v in by_problem.items() if k[1] == precision]
            if not rows:
                continue
            print(f"### {precision}: median time in µs (fastest in bold; — = format declined the matrix)\n")
            print(md.header(["matrix", "rows", "nnz", *formats, "best", "best GB/s", "best % roofline"]))
            for (name, _), fs in rows:
                any_r = next(iter(fs.values()))
                cells, best = md.cells(fs, formats, "median_ms", lambda r: f"{r['median_ms'] * 1e3:.1f}")
                b = fs[best] if best else None
                tail = ["", "", ""]
                if b:
                    l2 = " (L2)" if b["l2_resident"] else ""
                    tail = [best, f"{b['effective_gbs']:.0f}", f"{b['roofline_fraction'] * 100:.0f}%{l2}"]
                print(md.row([name, any_r["nrows"], any_r["nnz"], *cells, *tail]))
            print()

    # Per format: geometric-mean speed-up over cuSPARSE ALG1 and wins, per precision.
    base = "cusparse-alg1" if "cusparse-alg1" in formats else formats[0]
    print(f"### Per format: wins and geometric-mean speed-up over {base} (same run)\n")
    print(
        md.header(
            ["format", "precision", "ran", "declined", "wins", "geo-mean speed-up", "median % roofline (beyond L2)"]
        )
    )
    for precision in ("f64", "f32"):
        for f in formats:
            rs = [fs[f] for (n, p), fs in by_problem.items() if p == precision and f in fs]
            if not rs:
                continue
            ok = [r for r in rs if r["status"] == "ok"]
            wins = sum(
                1
                for (n, p), fs in by_problem.items()
                if p == precision
                and f in fs
                and fs[f]["status"] == "ok"
                and all(o["median_ms"] >= fs[f]["median_ms"] for o in fs.values() if o["status"] == "ok")
            )
            logs = [
                math.log(by_problem[(r["matrix"], precision)][base]["median_ms"] / r["median_ms"])
                for r in ok
                if by_problem[(r["matrix"], precision)].get(base, {}).get("status") == "ok"
            ]
            roof = sorted(r["roofline_fraction"] for r in ok if not r["l2_resident"])
            med = f"{roof[len(roof) // 2] * 100:.0f}%" if roof else "— (all in L2)"
            gm = f"{math.exp(sum(logs) / len(logs)):.2f}x" if logs else "—"
            declined = sum(1 for r in rs if r["status"] == "unsupported")
            print(md.row([f, precision, len(ok), declined, wins, gm, med]))
    print()

    if args.manifest:
        kinds = {}
        with open(args.manifest) as f:
            for line in f:
                cols = line.rstrip("\n").split("\t")
                if cols[0] != "name" and len(cols) > 2:
                    kinds[cols[0]] = cols[2]
        table = collections.defaultdict(collections.Counter)
        for (name, _), fs in by_problem.items():
            ok = {f: r for f, r in fs.items() if r["status"] == "ok"}
            if ok and name in kinds:
                table[kinds[name]][min(ok, key=lambda f: ok[f]["median_ms"])] += 1
        print("### Fastest format by matrix kind (f64 and f32 counted together)\n")
        print(md.header(["kind", "problems", "fastest formats (count)"]))
        for kind, counter in sorted(table.items(), key=lambda kv: -sum(kv[1].values())):
            top = ", ".join(f"{f} ({c})" for f, c in counter.most_common(3))
            print(md.row([kind, sum(counter.values()), top]))
        print()


if __name__ == "__main__":
    main()
