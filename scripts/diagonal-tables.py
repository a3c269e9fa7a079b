#!/usr/bin/env python3
"""Turns `spmv bench --json` files of the diagonal family into the tables of docs/diagonal.md.

usage: scripts/diagonal-tables.py RESULTS.json [RESULTS.json ...]

Per matrix: padded zeros of each diagonal format (DIA's from its refusal message when it
declined), operand variance per work unit (HDIA: hack, DIA-Adaptive: its unit, DRM:
sub-block) and the scale-free spread (std/mean), DIA-Adaptive's layout, DRM's preprocessing
time; median kernel time and GFLOPS of every format, f64 and f32; DRM's speed-up over each
format (min, max, arithmetic and geometric mean, as the paper's Tables 2 and 3). Only figures
from the same run are put side by side.
"""
import json
import math
import re
import sys

DIAGONAL = ["dia", "hdia", "hdc", "dia-adaptive", "drm"]
OTHERS = ["csr-scalar", "csr-vector", "cusparse-alg1"]
LAYOUTS = {0: "DIA", 1: "BRCSD-I", 2: "BRCSD-II"}


def extra(r, key):
    for k, v in r["stats"]["extra"]:
        if k == key:
            return v
    return None


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


def main():
    results = []
    for path in sys.argv[1:]:
        results.extend(json.load(open(path))["results"])
    problems = {}
    for r in results:
        problems.setdefault((r["matrix"], r["precision"]), {})[r["format"]] = r
    matrices = list(dict.fromkeys(r["matrix"] for r in results))

    print("### Padded zeros (f64; in parentheses: what a declining format would have stored)\n")
    print("| matrix | rows | nnz | DIA | HDIA = DRM | HDC | DIA-Adaptive | DIA-Adaptive layout | DIA / DRM |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for m in matrices:
        fs = problems[(m, "f64")]
        any_r = next(iter(fs.values()))
        p = {f: padded(fs[f]) for f in DIAGONAL if f in fs}
        assert p.get("hdia") == p.get("drm"), m
        layout = extra(fs["dia-adaptive"], "layout") if fs["dia-adaptive"]["status"] == "ok" else None
        ratio = p["dia"] / p["drm"] if p.get("dia") and p.get("drm") else None
        print(f"| {short(m)} | {any_r['nrows']:,} | {any_r['nnz']:,} | "
              f"{fmt_int(p.get('dia'), fs['dia']['status'] != 'ok')} | {fmt_int(p.get('drm'))} | "
              f"{fmt_int(p.get('hdc'))} | {fmt_int(p.get('dia-adaptive'))} | "
              f"{LAYOUTS.get(layout, '—') if layout is not None else '—'} | {fmt(ratio)} |")
    print()

    print("### Operand variance per work unit (f64): HDIA per hack, DIA-Adaptive per unit of its layout, "
          "DRM per sub-block; std/mean in parentheses\n")
    print("| matrix | HDIA | DIA-Adaptive | DRM | HDIA / DRM | DIA-Adaptive / DRM | DRM sub-blocks | DRM size classes |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios_h, ratios_a = [], []
    for m in matrices:
        fs = problems[(m, "f64")]
        v = {f: (extra(fs[f], "operand_variance"), extra(fs[f], "operand_cv")) for f in ["hdia", "dia-adaptive", "drm"]}
        rh = v["hdia"][0] / v["drm"][0] if v["drm"][0] else None
        ra = v["dia-adaptive"][0] / v["drm"][0] if v["drm"][0] else None
        if rh is not None:
            ratios_h.append(rh)
            ratios_a.append(ra)
        cell = lambda f: f"{fmt(v[f][0])} ({fmt(v[f][1], 2)})"
        print(f"| {short(m)} | {cell('hdia')} | {cell('dia-adaptive')} | {cell('drm')} | {fmt(rh, 2)} | {fmt(ra, 2)} | "
              f"{int(extra(fs['drm'], 'sub_blocks')):,} | {int(extra(fs['drm'], 'size_classes'))} |")
    if ratios_h:
        print(f"\nVariance ratios over the {len(ratios_h)} matrices where DRM's variance is not 0: "
              f"HDIA / DRM mean {sum(ratios_h) / len(ratios_h):.2f} (max {max(ratios_h):.2f}), "
              f"DIA-Adaptive / DRM mean {sum(ratios_a) / len(ratios_a):.2f} (max {max(ratios_a):.2f}).")
    print()

    print("### Preprocessing (ms, host, from CSR; f64)\n")
    print("| matrix | DRM divide | DRM merge | DRM fill | DRM total | HDIA | HDC | DIA-Adaptive | DIA |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for m in matrices:
        fs = problems[(m, "f64")]
        pre = lambda f: extra(fs[f], "preprocess_ms") if fs[f]["status"] == "ok" else None
        d = fs["drm"]
        print(f"| {short(m)} | {fmt(extra(d, 'divide_ms'), 2)} | {fmt(extra(d, 'merge_ms'), 2)} | "
              f"{fmt(extra(d, 'fill_ms'), 2)} | {fmt(pre('drm'), 2)} | {fmt(pre('hdia'), 2)} | {fmt(pre('hdc'), 2)} | "
              f"{fmt(pre('dia-adaptive'), 2)} | {fmt(pre('dia'), 2)} |")
    print()

    formats = DIAGONAL + OTHERS
    for precision in ("f64", "f32"):
        print(f"### {precision}: median kernel time in µs / GFLOPS (2·nnz/t); fastest in bold, — = declined\n")
        print("| matrix | " + " | ".join(formats) + " |")
        print("|" + " --- |" * (len(formats) + 1))
        for m in matrices:
            fs = problems.get((m, precision))
            if not fs:
                continue
            ok = {f: r for f, r in fs.items() if r["status"] == "ok"}
            best = min(ok, key=lambda f: ok[f]["median_ms"])
            cells = []
            for f in formats:
                r = ok.get(f)
                if r is None:
                    cells.append("—")
                    continue
                t = f"{r['median_ms'] * 1e3:.1f}"
                t = f"**{t}**" if f == best else t
                cells.append(f"{t} / {r['gflops']:.0f}")
            l2 = " (L2)" if ok[best]["l2_resident"] else ""
            print(f"| {short(m)}{l2} | " + " | ".join(cells) + " |")
        print()

        print(f"### {precision}: DRM's speed-up (time of the other format / time of DRM), same run\n")
        print("| over | matrices | min | max | mean | geometric mean | DRM faster on |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for f in formats:
            if f == "drm":
                continue
            s = []
            for m in matrices:
                fs = problems.get((m, precision), {})
                if fs.get("drm", {}).get("status") == "ok" and fs.get(f, {}).get("status") == "ok":
                    s.append(fs[f]["median_ms"] / fs["drm"]["median_ms"])
            if not s:
                continue
            geo = math.exp(sum(math.log(v) for v in s) / len(s))
            faster = sum(v > 1 for v in s)
            print(f"| {f} | {len(s)} | {min(s):.2f} | {max(s):.2f} | {sum(s) / len(s):.2f} | {geo:.2f} | {faster} of {len(s)} |")
        print()


if __name__ == "__main__":
    main()
