"""The tables of docs/diagonal.md from `spmv bench --json` files of the diagonal family
(`lab/run diagonal`).

Per matrix: padded zeros of each diagonal format (DIA's from its refusal message when it
declined), operand variance per work unit (HDIA: hack, DIA-Adaptive: its unit, DRM:
sub-block) and the scale-free spread (std/mean), DIA-Adaptive's layout, DRM's preprocessing
time; median kernel time and GFLOPS of every format, f64 and f32; DRM's speed-up over each
format (min, max, arithmetic and geometric mean, as the paper's Tables 2 and 3). Only figures
from the same run are put side by side."""

import math
import re

from . import cli, data, md
from .stats import geomean

DIAGONAL = ["dia", "hdia", "hdc", "dia-adaptive", "drm"]
OTHERS = ["csr-scalar", "csr-vector", "cusparse-alg1"]
LAYOUTS = {0: "DIA", 1: "BRCSD-I", 2: "BRCSD-II"}


def extra(r, key):
    return data.extra(r).get(key)


def short(name):
    name = name.removesuffix(".mtx.gz").removesuffix(".mtx")
    if name.startswith("banded:"):
        # offsets=-13;-12;...;13 is long: keep it readable.
        name = re.sub(r"offsets=-13;(-?\d+;)+13", "offsets=-13..13", name)
    return name


def padded(r):
    """Padded zeros, from the statistics or, when the format declined, from its message."""
    if r["status"] == "ok":
        return int(r["stats"]["stored"] - r["stats"]["nnz"])
    m = re.search(r"(\d+) padded zeros", r.get("error") or "")
    return int(m.group(1)) if m else None


def fmt_int(v, declined=False):
    if v is None:
        return "—"
    s = f"{v:,}"
    return f"({s})" if declined else s


def fmt(v, digits=1):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:,.{digits}f}"


def padding_row(m, fs):
    any_r = next(iter(fs.values()))
    p = {f: padded(fs[f]) for f in DIAGONAL if f in fs}
    assert p.get("hdia") == p.get("drm"), m
    layout = extra(fs["dia-adaptive"], "layout") if fs["dia-adaptive"]["status"] == "ok" else None
    ratio = p["dia"] / p["drm"] if p.get("dia") and p.get("drm") else None
    return [
        short(m),
        f"{any_r['nrows']:,}",
        f"{any_r['nnz']:,}",
        fmt_int(p.get("dia"), fs["dia"]["status"] != "ok"),
        fmt_int(p.get("drm")),
        fmt_int(p.get("hdc")),
        fmt_int(p.get("dia-adaptive")),
        LAYOUTS.get(layout, "—") if layout is not None else "—",
        fmt(ratio),
    ]


def variance_table(problems, matrices):
    print(
        "### Operand variance per work unit (f64): HDIA per hack, DIA-Adaptive per unit of its layout, "
        "DRM per sub-block; std/mean in parentheses\n"
    )
    print(
        md.header(
            [
                "matrix",
                "HDIA",
                "DIA-Adaptive",
                "DRM",
                "HDIA / DRM",
                "DIA-Adaptive / DRM",
                "DRM sub-blocks",
                "DRM size classes",
            ]
        )
    )
    ratios_h, ratios_a = [], []
    for m in matrices:
        fs = problems[(m, "f64")]
        v = {f: (extra(fs[f], "operand_variance"), extra(fs[f], "operand_cv")) for f in ["hdia", "dia-adaptive", "drm"]}
        rh = v["hdia"][0] / v["drm"][0] if v["drm"][0] else None
        ra = v["dia-adaptive"][0] / v["drm"][0] if v["drm"][0] else None
        if rh is not None:
            ratios_h.append(rh)
            ratios_a.append(ra)
        print(
            md.row(
                [
                    short(m),
                    *(f"{fmt(v[f][0])} ({fmt(v[f][1], 2)})" for f in ["hdia", "dia-adaptive", "drm"]),
                    fmt(rh, 2),
                    fmt(ra, 2),
                    f"{int(extra(fs['drm'], 'sub_blocks')):,}",
                    int(extra(fs["drm"], "size_classes")),
                ]
            )
        )
    if ratios_h:
        print(
            f"\nVariance ratios over the {len(ratios_h)} matrices where DRM's variance is not 0: "
            f"HDIA / DRM mean {sum(ratios_h) / len(ratios_h):.2f} (max {max(ratios_h):.2f}), "
            f"DIA-Adaptive / DRM mean {sum(ratios_a) / len(ratios_a):.2f} (max {max(ratios_a):.2f})."
        )
    print()


def pre(fs, f):
    """A format's preprocessing time, None when it declined."""
    return extra(fs[f], "preprocess_ms") if fs[f]["status"] == "ok" else None


def speed_cell(ok, f, best):
    """A format's median time (bold for the best) and GFLOPS, "—" when it did not run."""
    if f not in ok:
        return "—"
    time = md.bold(f"{ok[f]['median_ms'] * 1e3:.1f}", f == best)
    return f"{time} / {ok[f]['gflops']:.0f}"


def preprocessing_row(m, fs):
    return [
        short(m),
        *(fmt(extra(fs["drm"], k), 2) for k in ("divide_ms", "merge_ms", "fill_ms")),
        *(fmt(pre(fs, f), 2) for f in ("drm", "hdia", "hdc", "dia-adaptive", "dia")),
    ]


def speed_tables(problems, matrices, precision):
    formats = DIAGONAL + OTHERS
    print(f"### {precision}: median kernel time in µs / GFLOPS (2·nnz/t); fastest in bold, — = declined\n")
    print(md.header(["matrix", *formats]))
    for m in matrices:
        fs = problems.get((m, precision))
        if not fs:
            continue
        ok = {f: r for f, r in fs.items() if r["status"] == "ok"}
        best = min(ok, key=lambda f: ok[f]["median_ms"])

        l2 = " (L2)" if ok[best]["l2_resident"] else ""
        print(md.row([short(m) + l2, *(speed_cell(ok, f, best) for f in formats)]))
    print()

    print(f"### {precision}: DRM's speed-up (time of the other format / time of DRM), same run\n")
    print(md.header(["over", "matrices", "min", "max", "mean", "geometric mean", "DRM faster on"]))
    for f in formats:
        if f == "drm":
            continue
        s = []
        for m in matrices:
            fs = problems.get((m, precision), {})
            if fs.get("drm", {}).get("status") == "ok" and fs.get(f, {}).get("status") == "ok":
                s.append(fs[f]["median_ms"] / fs["drm"]["median_ms"])
        if s:
            print(
                md.row(
                    [
                        f,
                        len(s),
                        f"{min(s):.2f}",
                        f"{max(s):.2f}",
                        f"{sum(s) / len(s):.2f}",
                        f"{geomean(s):.2f}",
                        f"{sum(v > 1 for v in s)} of {len(s)}",
                    ]
                )
            )
    print()


def main(argv=None):
    ap = cli.parser("diagonal", __doc__)
    ap.add_argument("results", nargs="+")
    args = ap.parse_args(argv)
    results = [r for path in args.results for r in data.load(path)["results"]]
    problems = data.by_problem({"results": results})
    matrices = list(dict.fromkeys(r["matrix"] for r in results))
    f64 = [(m, problems[(m, "f64")]) for m in matrices]
    md.table(
        "### Padded zeros (f64; in parentheses: what a declining format would have stored)",
        ["matrix", "rows", "nnz", "DIA", "HDIA = DRM", "HDC", "DIA-Adaptive", "DIA-Adaptive layout", "DIA / DRM"],
        (padding_row(m, fs) for m, fs in f64),
    )
    variance_table(problems, matrices)
    md.table(
        "### Preprocessing (ms, host, from CSR; f64)",
        ["matrix", "DRM divide", "DRM merge", "DRM fill", "DRM total", "HDIA", "HDC", "DIA-Adaptive", "DIA"],
        (preprocessing_row(m, fs) for m, fs in f64),
    )
    for precision in ("f64", "f32"):
        speed_tables(problems, matrices, precision)


if __name__ == "__main__":
    main()
