"""Two `spmv bench --json` runs of the same inputs, side by side.

compare OLD.json NEW.json [--limit 0.03]
    e.g. the previous binary and this one, run one after the other on the same GPU
    (`lab/run compare`): per matrix × format × precision the ratio of the median times
    new/old, their geometric mean, and every result more than --limit slower.
compare --noise FIRST.json SECOND.json
    how much two runs of the same matrices and formats disagree, per timing method: the
    host-issued back-to-back time (`back_to_back_ms`) and the CUDA-graph replay of the same
    launches (`graph_ms`): the 5th, 50th and 95th percentile of second / first over the
    (matrix, format) pairs both runs measured, and how often the per-matrix fastest format
    is the same in both (docs/auto.md)."""

from . import cli, data
from .stats import geomean, percentile


def old_new(old, new, limit):
    def key(r):
        return r["matrix"], r["format"], r["precision"]

    before = {key(r): r for r in old["results"] if r["status"] == "ok"}
    rows = [
        (key(r), before[key(r)]["median_ms"] * 1e3, r["median_ms"] * 1e3)
        for r in new["results"]
        if r["status"] == "ok" and key(r) in before
    ]
    slower = [row for row in rows if row[2] / row[1] > 1 + limit]
    print(f"# {len(rows)} results compared; new/old median time")
    for (m, f, p), o, n in rows:
        print(f"{m[:40]:<40} {f:<14} {p:<4} {o:>10.2f} {n:>10.2f}  {n / o:6.3f}")
    print(f"# geometric mean new/old: {geomean(n / o for _, o, n in rows):.4f}")
    print(f"# more than {limit:.0%} slower: {len(slower)}")
    for (m, f, p), o, n in slower:
        print(f"#   {m} / {f} / {p}: {o:.2f} -> {n:.2f} us ({n / o:.3f})")


def noise(first, second):
    first, second = data.ok_by_matrix(first), data.ok_by_matrix(second)
    for method in ("back_to_back_ms", "graph_ms"):
        ratios, same_best, matrices = [], 0, 0
        for key, row in first.items():
            other = second.get(key, {})
            pairs = {f: (r.get(method), other[f].get(method)) for f, r in row.items() if f in other}
            pairs = {f: (a, b) for f, (a, b) in pairs.items() if a and b}
            if not pairs:
                continue
            ratios += [b / a for a, b in pairs.values()]
            matrices += 1
            same_best += min(pairs, key=lambda f: pairs[f][0]) == min(pairs, key=lambda f: pairs[f][1])
        print(
            f"{method}: {len(ratios)} pairs on {matrices} matrices; "
            f"second / first 5th {percentile(ratios, 0.05):.3f}, median {percentile(ratios, 0.5):.3f}, "
            f"95th {percentile(ratios, 0.95):.3f}; same fastest format on {same_best} of {matrices}"
        )


def main(argv=None):
    ap = cli.parser("compare", __doc__)
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--limit", type=float, default=0.03, help="new/old above 1 + LIMIT is listed as slower")
    ap.add_argument("--noise", action="store_true", help="compare the timing methods' run-to-run spread instead")
    args = ap.parse_args(argv)
    if args.noise:
        noise(args.first, args.second)
    else:
        old_new(data.load(args.first), data.load(args.second), args.limit)


if __name__ == "__main__":
    main()
