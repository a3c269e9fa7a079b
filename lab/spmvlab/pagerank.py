"""The Markdown tables of docs/pagerank.md from a `spmv pagerank --json` file.

Per precision: PageRank time per graph and format (mean of the runs, iterations in
parentheses), the top-k agreement with the exact ranking, and the geometric-mean speed-up of
each format over the baseline, from the same run."""

import collections

from . import cli, data, md
from .stats import geomean


def fmt_ms(ms):
    return f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def time_table(graphs, formats, p, baseline):
    print(
        f"### {p}: PageRank time in ms, iterations in parentheses (fastest in bold; * = not converged; "
        "— = format declined Gᵀ)\n"
    )
    print(md.header(["graph", "nodes", "edges", "dangling", *formats]))
    speedups = collections.defaultdict(list)
    per_iteration = collections.defaultdict(list)
    for g in graphs:
        rs = {r["format"]: r for r in g["results"] if r["precision"] == p}
        ok = {f: r for f, r in rs.items() if r["status"] == "ok"}
        cells, _ = md.cells(
            rs,
            formats,
            "total_ms",
            lambda r: f"{fmt_ms(r['total_ms'])} ({r['iterations']}{'' if r['converged'] else '*'})",
            "ERROR",
        )
        print(md.row([g["matrix"], g["nodes"], g["edges"], g["dangling"], *cells]))
        base = ok.get(baseline)
        if base:
            for f, r in ok.items():
                speedups[f].append(base["total_ms"] / r["total_ms"])
                per_iteration[f].append(base["ms_per_iteration"] / r["ms_per_iteration"])
    print()
    for what, table in (("PageRank time", speedups), ("time per iteration", per_iteration)):
        print(
            f"Geometric-mean speed-up of the {what} over {baseline} ({p}): "
            + ", ".join(f"{f} {geomean(v):.2f}x" for f, v in table.items() if v)
            + f" ({max(map(len, table.values()), default=0)} graphs)\n"
        )


def agreement_table(graphs, formats, p):
    k = next((r["agreement"]["k"] for g in graphs for r in g["results"] if r.get("agreement")), "k")
    print(
        f"### {p}: top-{k} agreement with the exact ranking: positions holding the exact node, and in parentheses "
        "positions holding a node of the same exact rank (ties) when different\n"
    )
    print(md.header(["graph", "exact iterations", "tied positions", *formats]))
    for g in graphs:
        rs = {r["format"]: r for r in g["results"] if r["precision"] == p}
        ties = next((r["agreement"]["exact_ties"] for r in rs.values() if r.get("agreement")), "")
        cells = []
        for f in formats:
            a = rs[f].get("agreement") if f in rs else None
            if not a:
                cells.append("—")
            elif a["same_position_up_to_ties"] != a["same_position"]:
                cells.append(f"{a['same_position']} ({a['same_position_up_to_ties']})")
            else:
                cells.append(str(a["same_position"]))
        print(md.row([g["matrix"], (g.get("exact") or {}).get("iterations", ""), ties, *cells]))
    print()


def main(argv=None):
    ap = cli.parser("pagerank", __doc__)
    ap.add_argument("json")
    ap.add_argument("--baseline", default="lightspmv")
    ap.add_argument("--formats", help="comma-separated formats to show (default: all in the file)")
    args = ap.parse_args(argv)
    rep = data.load(args.json)
    s = rep["settings"]
    print(
        f"Device: {rep['device']} ({rep['backend']}); α = {s['alpha']}, tol = {s['tol']:g}, "
        f"max {s['max_iter']} iterations, residual read every {s['check_every']}; "
        f"{rep['weights']} weights; mean of {rep['runs']} runs; exact ranking to {rep['exact_tol']:g}, "
        f"ties within {rep['tie_tol']:g}.\n"
    )
    graphs = rep["graphs"]
    formats = list(dict.fromkeys(r["format"] for g in graphs for r in g["results"]))
    if args.formats:
        formats = [f for f in args.formats.split(",") if f in formats]
        for g in graphs:
            g["results"] = [r for r in g["results"] if r["format"] in formats]
    for p in dict.fromkeys(r["precision"] for g in graphs for r in g["results"]):
        time_table(graphs, formats, p, args.baseline)
        agreement_table(graphs, formats, p)
        varying = sorted(
            {
                (g["matrix"], r["format"])
                for g in graphs
                for r in g["results"]
                if r["precision"] == p and r.get("identical_runs") is False
            }
        )
        if varying:
            print(
                f"Runs that differed bit-wise from the first run ({p}): "
                + ", ".join(f"{f} on {m}" for m, f in varying)
                + "\n"
            )
        else:
            print(f"Every format gave bitwise identical ranks in every run ({p}).\n")


if __name__ == "__main__":
    main()
