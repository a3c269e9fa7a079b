"""One format's speed over another's in a `spmv bench --json` run: the geometric mean of
BASELINE's back-to-back time over FORMAT's, per precision, over the matrices both ran
correctly, with its minimum, maximum and how often FORMAT is slower; generated specs (names
with ':') and files reported apart.

With --by-class, the matrices are grouped instead by the row class holding most of FORMAT's
entries (long rows > max_len, medium, short 1-4: dasp's stats long_nnz/medium_nnz/short_nnz,
or the row counts when a run predates them), as the DASP paper's Figures 14-15."""

from . import cli, data, md
from .stats import geomean


def row_class(r):
    """The class holding most of a dasp result's entries, and what it was counted by."""
    extra = data.extra(r)
    key = "nnz" if "long_nnz" in extra else "rows"
    shares = {c: extra.get(f"{c}_{key}", 0.0) for c in ("long", "medium", "short")}
    return max(shares, key=shares.get), key


def main(argv=None):
    ap = cli.parser("ratio", __doc__)
    ap.add_argument("results")
    ap.add_argument("format")
    ap.add_argument("baseline", nargs="?", default="cusparse-alg1")
    ap.add_argument("--by-class", action="store_true", help="group by DASP's row classes")
    args = ap.parse_args(argv)
    groups = {}
    for (p, m), row in data.ok_by_matrix(args.results).items():
        if args.format in row and args.baseline in row:
            r = row[args.format]
            key = (p, *row_class(r)) if args.by_class else (p, "generated" if data.generated(m) else "files")
            groups.setdefault(key, []).append(row[args.baseline]["back_to_back_ms"] / r["back_to_back_ms"])
    if args.by_class:
        print(
            md.header(
                [
                    "precision",
                    "most entries in",
                    "matrices",
                    f"{args.format} / {args.baseline} (geo-mean)",
                    "min",
                    "max",
                ]
            )
        )
        for (p, cls, key), v in sorted(groups.items()):
            print(md.row([p, f"{cls} rows (by {key})", len(v), f"{geomean(v):.2f}", f"{min(v):.2f}", f"{max(v):.2f}"]))
        return
    for (p, label), v in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "generated")):
        print(
            f"{p} {label}: {args.format} / {args.baseline} geometric mean {geomean(v):.3f} over {len(v)} matrices "
            f"(min {min(v):.2f}, max {max(v):.2f}, below 1 on {sum(r < 1 for r in v)})"
        )


if __name__ == "__main__":
    main()
