"""The TEB paper's comparison (its Table 2 and Fig. 18-19) from `spmv bench --json` files:
the shared matrices' run and the large generated matrices' run.

Prints the Markdown tables of docs/teb.md: mean and max speed-ups of teb and teb-lanes over
each comparator (speed-up = comparator time / TEB time, the paper's eq. 11; the arithmetic
mean is the paper's average, the geometric mean is given beside it), split into regular and
irregular shared matrices (regular: longest row <= 2 x mean row length), the large generated
matrices one by one, TEB's chosen partitions and the preprocessing times per phase. Every
ratio compares two formats of the same run."""

import collections
import statistics

from . import cli, data, md
from .stats import geomean, percentile

TEBS = ["teb", "teb-lanes"]
COMPARATORS = ["amf-csr", "pbc", "csr-scalar", "cusparse-alg1"]
PAPER = {"amf-csr": 3.23, "pbc": 5.83, "csr-scalar": 2.33, "cusparse-alg1": None}
PAPER_MATRICES = ["1138_bus", "nasa1824", "dw8192"]
extra = data.extra


def regular(r):
    s = r["stats"]
    return s["max_row_len"] <= 2 * max(s["mean_row_len"], 1e-12)


def speedups(by, precision, teb, comp, keep=lambda r: True):
    out = []
    for (_, p), fs in by.items():
        if p != precision or teb not in fs or comp not in fs:
            continue
        a, b = fs[teb], fs[comp]
        if a["status"] == "ok" and b["status"] == "ok" and keep(a):
            out.append(b["median_ms"] / a["median_ms"])
    return out


def summary_row(label, sp, paper=None):
    if not sp:
        return f"| {label} | 0 | | | | | |"
    wins = sum(s > 1 for s in sp)
    return md.row(
        [
            label,
            len(sp),
            md.bold(f"{statistics.mean(sp):.2f}"),
            f"{geomean(sp):.2f}",
            f"{max(sp):.2f}",
            f"{min(sp):.3f}",
            f"{wins} ({100 * wins / len(sp):.0f}%)",
            f"{paper:.2f}" if paper else "—",
        ]
    )


def table2(by, title, keep):
    print(f"#### {title}\n")
    print(
        md.header(
            [
                "TEB vs comparator, precision",
                "matrices",
                "mean speed-up",
                "geo-mean",
                "max",
                "min",
                "TEB faster on",
                "paper (V100, mean)",
            ]
        )
    )
    for teb in TEBS:
        for precision in ("f64", "f32"):
            for comp in COMPARATORS:
                sp = speedups(by, precision, teb, comp, keep)
                print(summary_row(f"{teb} vs {comp}, {precision}", sp, PAPER[comp] if teb == "teb" else None))
    print()


def large_table(by):
    formats = TEBS + COMPARATORS
    for precision in ("f64", "f32"):
        print(f"#### Large generated matrices, {precision}: median time in µs (fastest in bold)\n")
        print(md.header(["matrix", "rows", "nnz", *formats, "TEB bLN, k", "teb vs best other"]))
        for (m, p), fs in by.items():
            if p != precision:
                continue
            ok = {f: r for f, r in fs.items() if r["status"] == "ok"}
            cells, _ = md.cells(fs, formats, "median_ms", lambda r: f"{r['median_ms'] * 1e3:.1f}", "—")
            e = extra(fs["teb"])
            others = min(ok[f]["median_ms"] for f in ok if f not in TEBS)
            print(
                md.row(
                    [
                        m,
                        fs["teb"]["nrows"],
                        fs["teb"]["nnz"],
                        *cells,
                        f"{e['blocks']:.0f}, {e['k']:g}",
                        f"{others / ok['teb']['median_ms']:.3f}x",
                    ]
                )
            )
        print()


def quantiles(v):
    return " | ".join(f"{percentile(v, q):.3f}" for q in (0.5, 0.9, 1.0))


def preprocessing(shared, large):
    print("#### Preprocessing on the host (16-core CPU of the H200 machine), ms\n")
    print(md.header(["set", "figure", "median", "90th percentile", "max"]))
    for name, by in (("shared (317)", shared), ("large (5)", large)):
        rows = [fs for (_, p), fs in by.items() if p == "f64"]
        for fmt, key in (
            ("teb", "threshold_selection_ms"),
            ("teb", "merge_ms"),
            ("pbc", "partition_ms"),
            ("pbc", "layout_ms"),
            ("amf-csr", "fold_ms"),
        ):
            print(f"| {name} | {fmt} {key} | {quantiles([extra(fs[fmt])[key] for fs in rows])} |")
        for fmt in ("teb", "pbc", "amf-csr", "csr-scalar"):
            times = [fs[fmt]["convert_ms"] for fs in rows]
            print(f"| {name} | {fmt} whole conversion (convert_ms) | {quantiles(times)} |")
    print()
    print(
        md.header(
            [
                "large matrix (f64)",
                "teb threshold selection ms",
                "teb merge ms",
                "bLN",
                "critical count",
                "candidates tried",
                "pbc partition ms",
                "pbc layout ms",
            ]
        )
    )
    for (m, p), fs in large.items():
        if p != "f64":
            continue
        e, q = extra(fs["teb"]), extra(fs["pbc"])
        crit = f"{e['critical_blocks']:.0f}" if e["critical_blocks"] else "none"
        print(
            md.row(
                [
                    m,
                    f"{e['threshold_selection_ms']:.1f}",
                    f"{e['merge_ms']:.1f}",
                    f"{e['blocks']:.0f}",
                    crit,
                    f"{e['candidates_tried']:.0f}",
                    f"{q['partition_ms']:.1f}",
                    f"{q['layout_ms']:.1f}",
                ]
            )
        )
    print()


def partitions(shared):
    rows = [fs for (_, p), fs in shared.items() if p == "f64"]
    blocks = [extra(fs["teb"])["blocks"] for fs in rows]
    ks = collections.Counter(extra(fs["teb"])["k"] for fs in rows)
    crit = sum(1 for fs in rows if extra(fs["teb"])["critical_blocks"] > 0)
    below = sum(1 for b in blocks if b < 132)
    pbc = [extra(fs["pbc"])["blocks"] for fs in rows]
    amf = [extra(fs["amf-csr"])["sub_blocks"] for fs in rows]
    stored = [fs["pbc"]["stats"]["stored"] / max(1, fs["pbc"]["nnz"]) for fs in rows]
    ratio = [extra(fs["teb"])["max_block_nnz_over_mean"] for fs in rows]
    print("#### Partitions chosen on the 317 shared matrices\n")
    print(
        f"- teb: bLN median {statistics.median(blocks):.0f}, min {min(blocks):.0f}, max {max(blocks):.0f}; "
        f"{below} matrices get fewer blocks than the H200 has SMs (132); critical count found on {crit}; "
        "k = " + ", ".join(f"{k:g} on {n}" for k, n in sorted(ks.items()))
    )
    print(f"- teb: largest block / mean block nnz: median {statistics.median(ratio):.3f}, max {max(ratio):.2f}")
    print(
        f"- pbc: P median {statistics.median(pbc):.0f}, max {max(pbc):.0f}; "
        f"stored/nnz median {statistics.median(stored):.2f}, max {max(stored):.1f}"
    )
    print(f"- amf-csr: sub-blocks median {statistics.median(amf):.0f}, max {max(amf):.0f}")
    print()


def paper_matrices(shared):
    print("#### The paper's matrices present in the shared set (median µs)\n")
    formats = TEBS + COMPARATORS
    print(md.header(["matrix", "precision", "rows", "nnz", *formats]))
    for (m, p), fs in shared.items():
        if m in PAPER_MATRICES:
            cells = [f"{fs[f]['median_ms'] * 1e3:.1f}" if fs[f]["status"] == "ok" else "—" for f in formats]
            print(md.row([m, p, fs["teb"]["nrows"], fs["teb"]["nnz"], *cells]))
    print()


def main(argv=None):
    ap = cli.parser("teb", __doc__)
    ap.add_argument("shared", help="the shared matrices' run (JSON, .gz allowed)")
    ap.add_argument("large", help="the large generated matrices' run")
    args = ap.parse_args(argv)
    shared_report = data.load(args.shared)
    shared, large = data.by_problem(shared_report), data.by_problem(args.large)
    print(f"Machine: {data.machine(shared_report, sms=True)}.\n")
    table2(shared, "Shared matrices, regular (longest row ≤ 2 × mean)", regular)
    table2(shared, "Shared matrices, irregular", lambda r: not regular(r))
    table2(shared, "Shared matrices, all 317", lambda r: True)
    table2(large, "Large generated matrices (5)", lambda r: True)
    large_table(large)
    paper_matrices(shared)
    partitions(shared)
    preprocessing(shared, large)


if __name__ == "__main__":
    main()
