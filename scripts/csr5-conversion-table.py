#!/usr/bin/env python3
"""CSR5's conversion on the host and on the GPU against its product, from one
`spmv bench --formats csr5,csr5:convert=gpu --json` run (docs/load-balanced.md).

usage: csr5-conversion-table.py RESULTS.json

Per precision and matrix: the host conversion (convert_ms of `csr5`), the GPU conversion
(device_convert_ms of `csr5:convert=gpu`: the wall time from the CSR arrays on the device to
the finished tiles), the product (back-to-back mean), each conversion in units of products,
and whether the two variants ran the same product time; geometric means last."""
import sys

from benchjson import geo, ok_by_matrix

by = ok_by_matrix(sys.argv[1])
for precision in sorted({p for p, _ in by}):
    print(f"\n### csr5 conversion, {precision}\n")
    print("| matrix | nnz | host conv ms | GPU conv ms | b2b us | host / SpMV | GPU / SpMV | host / GPU |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for (p, matrix), row in sorted(by.items(), key=lambda kv: kv[0][1]):
        host, gpu = row.get("csr5"), row.get("csr5:convert=gpu")
        if p != precision or not host or not gpu or gpu.get("device_convert_ms") is None:
            continue
        spmv_ms = host["back_to_back_ms"]
        h, g = host["convert_ms"], gpu["device_convert_ms"]
        ratios.append((h / spmv_ms, g / spmv_ms, h / g))
        print(f"| {matrix} | {host['nnz']} | {h:.2f} | {g:.3f} | {spmv_ms * 1e3:.1f} | {h / spmv_ms:.0f} | {g / spmv_ms:.1f} | {h / g:.0f} |")
    if ratios:
        print(f"| geomean ({len(ratios)}) | | | | | {geo([r[0] for r in ratios]):.0f} | {geo([r[1] for r in ratios]):.1f} | {geo([r[2] for r in ratios]):.0f} |")
