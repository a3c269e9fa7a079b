"""Issue 14's check of `auto` and `tune` from one `spmv bench --json` run (`lab/run auto`),
back-to-back timing.

For every precision and matrix: the per-matrix best format (the fastest correct result of the
run's own formats; auto, tune and cuSPARSE are not candidates of it), then auto's and tune's
speed as a fraction of it (best time / their time; and, since on matrices of a few microseconds
two rows of the same kernel differ by more than the formats do, the same fraction with the time
of the chosen format's own row of the run), their speed over cuSPARSE ALG1, and the
amortisation: conversion + choice + upload in units of the chosen format's product, and the
number of products after which auto has paid off against ALG1 (its own conversion and upload
counted too). Shared matrices and generated ones (names with ':') are reported apart.
--auto/--tune pick the rows (default: the format label auto / tune, or one starting with
`auto:` / `tune:`). --time graph scores every row by its CUDA-graph replay time (`graph_ms`:
the same back-to-back products without the host's launch cost), a row that could not be
captured by its host-issued back-to-back time; the default, b2b, by the host-issued time.

--best-from OTHER: the per-matrix best is the format fastest in OTHER (another run of the same
formats on the same matrices), timed by this run. The fastest of some 25 rows of one run is
partly the luck of its own measurement (the winner's curse): where the formats differ less
than a row's noise (products of a few microseconds, host-issued), the plain best is biased
fast and every choice scores below it. Choosing the best in one run and timing it in another
removes that bias; matrices whose OTHER best failed or is missing here keep this run's."""

import math

from . import cli, data, md
from .stats import geomean, percentile


def main(argv=None):
    ap = cli.parser("auto_check", __doc__)
    ap.add_argument("results")
    ap.add_argument("--auto", default="auto")
    ap.add_argument("--tune", default="tune")
    ap.add_argument("--time", choices=("b2b", "graph"), default="b2b")
    ap.add_argument("--best-from", metavar="OTHER", help="choose each matrix's best format in another run")
    args = ap.parse_args(argv)

    def t(r):
        return (args.time == "graph" and r.get("graph_ms")) or r["back_to_back_ms"]

    def own(f):
        return not f.startswith(("auto", "tune", "cusparse"))

    def pick(row, prefix):
        return next((r for f, r in sorted(row.items()) if f == prefix or f.startswith(prefix + ":")), None)

    def cost_ms(r):
        return (r.get("convert_ms") or 0) + (r.get("upload_ms") or 0) + (r.get("device_convert_ms") or 0)

    by = data.ok_by_matrix(args.results)
    other = data.ok_by_matrix(args.best_from) if args.best_from else {}

    def best(key, row):
        """This run's row of the matrix's best format: its own fastest, or OTHER's fastest."""
        there = [r for f, r in other.get(key, {}).items() if own(f)]
        chosen = min(there, key=t)["format"] if there else None
        return row.get(chosen) or min((r for f, r in row.items() if own(f)), key=t)

    for precision in sorted({p for p, _ in by}):
        groups = {"shared": [], "generated": []}
        for (p, m), row in sorted(by.items()):
            if p == precision and any(own(f) for f in row):
                groups["generated" if data.generated(m) else "shared"].append((m, row, best((p, m), row)))
        how = f", best chosen in {args.best_from}" if args.best_from else ""
        print(f"\n## {precision} ({args.time} timing{how})\n")
        print(
            md.header(
                [
                    "matrices",
                    "n",
                    "which",
                    "of best (geomean)",
                    "worst",
                    "< 0.7",
                    "chosen format's own row: of best, worst, < 0.7",
                    "× ALG1 (geomean)",
                    "conv+choice in SpMVs (median)",
                    "pays off vs ALG1 after (median SpMVs)",
                ],
                "lrlrlrlrrr",
            )
        )
        worst_lines = []
        for group, items in groups.items():
            for which in (args.auto, args.tune):
                frac, own_row, over, conv, payoff, missing = [], [], [], [], [], 0
                for m, row, best in items:
                    r = pick(row, which)
                    if r is None:
                        missing += 1
                        continue
                    frac.append((t(best) / t(r), m, r.get("chosen"), best["format"]))
                    same = row.get(r.get("chosen") or "")
                    if same:
                        own_row.append(t(best) / t(same))
                    base = pick(row, "cusparse-alg1")
                    conv.append(cost_ms(r) / t(r))
                    if base:
                        over.append(t(base) / t(r))
                        gain = t(base) - t(r)
                        extra = cost_ms(r) - cost_ms(base)
                        payoff.append(0 if extra <= 0 else (extra / gain if gain > 0 else math.inf))
                if not frac:
                    continue
                worst = min(frac)
                print(
                    f"| {group} | {len(frac)} | {which} | {geomean(f for f, *_ in frac):.3f} "
                    f"| {worst[0]:.2f} {worst[1]} ({worst[2]} vs {worst[3]}) | {sum(f < 0.7 for f, *_ in frac)} "
                    f"| {geomean(own_row):.3f}, "
                    f"{min(own_row, default=float('nan')):.2f}, {sum(f < 0.7 for f in own_row)} ({len(own_row)}) "
                    f"| {geomean(over):.2f} | {percentile(conv, 0.5):.0f} | {percentile(payoff, 0.5):.0f} |"
                    + (f" ({missing} missing)" if missing else "")
                )
                for f, m, chosen, bestf in sorted(frac)[:8]:
                    worst_lines.append(f"{precision} {group} {which}: {f:.2f} {m}: chose {chosen}, best {bestf}")
        print("\nworst matrices:\n")
        for line in worst_lines:
            print("    " + line)


if __name__ == "__main__":
    main()
