"""CSR5's conversion on the host and on the GPU against its product, from one
`spmv bench --formats csr5,csr5:convert=gpu --json` run (`lab/run load-balanced`, step 4;
docs/load-balanced.md).

Per precision and matrix: the host conversion (convert_ms of `csr5`), the GPU conversion
(device_convert_ms of `csr5:convert=gpu`: the wall time from the CSR arrays on the device to
the finished tiles), the product (back-to-back mean), each conversion in units of products;
geometric means last."""

from . import cli, data, md
from .stats import geomean


def main(argv=None):
    ap = cli.parser("csr5_conversion", __doc__)
    ap.add_argument("results")
    args = ap.parse_args(argv)
    by = data.ok_by_matrix(args.results)
    for precision in sorted({p for p, _ in by}):
        print(f"\n### csr5 conversion, {precision}\n")
        print(
            md.header(
                ["matrix", "nnz", "host conv ms", "GPU conv ms", "b2b us", "host / SpMV", "GPU / SpMV", "host / GPU"],
                "lrrrrrrr",
            )
        )
        ratios = []
        for (p, matrix), row in sorted(by.items(), key=lambda kv: kv[0][1]):
            host, gpu = row.get("csr5"), row.get("csr5:convert=gpu")
            if p != precision or not host or not gpu or gpu.get("device_convert_ms") is None:
                continue
            spmv_ms = host["back_to_back_ms"]
            h, g = host["convert_ms"], gpu["device_convert_ms"]
            ratios.append((h / spmv_ms, g / spmv_ms, h / g))
            print(
                md.row(
                    [
                        matrix,
                        host["nnz"],
                        f"{h:.2f}",
                        f"{g:.3f}",
                        f"{spmv_ms * 1e3:.1f}",
                        f"{h / spmv_ms:.0f}",
                        f"{g / spmv_ms:.1f}",
                        f"{h / g:.0f}",
                    ]
                )
            )
        if ratios:
            print(
                md.row(
                    [
                        f"geomean ({len(ratios)})",
                        "",
                        "",
                        "",
                        "",
                        f"{geomean(r[0] for r in ratios):.0f}",
                        f"{geomean(r[1] for r in ratios):.1f}",
                        f"{geomean(r[2] for r in ratios):.0f}",
                    ]
                )
            )


if __name__ == "__main__":
    main()
