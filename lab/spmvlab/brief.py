"""One line per `spmv bench --json` file: each correct format's back-to-back time, with the
exchange time and halo bytes of a run over several devices (`lab/run multi-gpu`)."""

from . import cli, data


def line(report):
    def one(r):
        text = f"{r['format']}: {r['back_to_back_ms']:.3f} ms"
        if r.get("exchange_ms"):
            text += f" (exch {r['exchange_ms'] * 1e3:.0f} us, halo {r['halo_bytes'] / 1e6:.2f} MB)"
        return text

    return "  ".join(one(r) for r in report["results"] if r["status"] == "ok")


def main(argv=None):
    ap = cli.parser("brief", __doc__)
    ap.add_argument("results", nargs="+")
    args = ap.parse_args(argv)
    for path in args.results:
        print(line(data.load(path)))


if __name__ == "__main__":
    main()
