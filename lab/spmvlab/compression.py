"""The tables of docs/compression.md from one `spmv bench --json` run (`lab/run compression`),
back-to-back timing.

Per precision: for every matrix, each format's bytes per entry (format bytes / nnz), b2b
microseconds, %bound (the matrix's own stream-and-gather bound over b2b) and speed over
cuSPARSE ALG1; then per compressed format (values=auto) its geometric-mean speed-up over the
same format uncompressed and over ALG1, and the issue's targets where their matrices ran."""

from . import cli, data, md
from .stats import geomean


def alg1(row):
    return next((r for f, r in row.items() if f.startswith("cusparse-alg1")), None)


def fastest(rows):
    return min(rows, key=lambda r: r["back_to_back_ms"])


def cell(r, base):
    if not r:
        return "-"
    bound = f"{100 * r['bound_fraction']:.0f}%" if r.get("bound_fraction") else "-"
    speed = f"{base['back_to_back_ms'] / r['back_to_back_ms']:.2f}x" if base else "-"
    return f"{r['format_bytes'] / max(r['nnz'], 1):.1f} B / {r['back_to_back_ms'] * 1e3:.1f} / {bound} / {speed}"


def targets(m, row):
    base = alg1(row)
    if m.startswith("kron:scale=20") and base:
        best = fastest(row.values())
        print(
            f"target kron:scale=20: best {best['format']} {base['back_to_back_ms'] / best['back_to_back_ms']:.2f}x "
            "ALG1 (≥ 1.15 plain, ≥ 1.4 reordered)"
        )
    if m.startswith("poisson3d:n=128"):
        best = fastest(row.values())
        print(f"target poisson3d:n=128: best {best['format']} {data.gflops(best):.0f} GFLOPS (≥ 900)")
    big = [r for r in row.values() if r.get("bound_fraction") and not r.get("l2_resident")]
    if big and base and data.generated(m):  # the default set's generated matrices
        best = fastest(big)
        print(f"target {m}: best {best['format']} at {100 * best['bound_fraction']:.0f}% of its bound (≥ 90%)")


def main(argv=None):
    ap = cli.parser("compression", __doc__)
    ap.add_argument("results")
    ap.add_argument("--formats", help="the formats of the tables, separated by ';' (default: every format of the run)")
    args = ap.parse_args(argv)
    by = data.ok_by_matrix(args.results)
    if args.formats:
        keep = set(args.formats.split(";"))
        by = {k: {f: r for f, r in row.items() if f in keep} for k, row in by.items()}
        by = {k: row for k, row in by.items() if row}
    for precision in sorted({p for p, _ in by}):
        rows = sorted(((m, row) for (p, m), row in by.items() if p == precision), key=lambda kv: kv[0])
        formats = sorted({f for _, row in rows for f in row})
        print(f"\n### {precision}: bytes per entry / b2b us / %bound / × ALG1\n")
        print(md.header(["matrix", "nnz", *formats], "lr" + "r" * len(formats)))
        for m, row in rows:
            print(md.row([m, next(iter(row.values()))["nnz"], *(cell(row.get(f), alg1(row)) for f in formats)]))
        print()
        for f in formats:
            if "values=" not in f:
                continue
            plain = f.replace(":values=auto", "").replace(",values=auto", "")
            over_plain = [
                row[plain]["back_to_back_ms"] / row[f]["back_to_back_ms"]
                for _, row in rows
                if f in row and plain in row
            ]
            over_alg1 = [
                alg1(row)["back_to_back_ms"] / row[f]["back_to_back_ms"] for _, row in rows if f in row and alg1(row)
            ]
            print(
                f"| geomean {f} | over {plain} {geomean(over_plain):.3f} ({len(over_plain)}) "
                f"| over ALG1 {geomean(over_alg1):.3f} ({len(over_alg1)}) |"
            )
        for m, row in rows:
            targets(m, row)


if __name__ == "__main__":
    main()
