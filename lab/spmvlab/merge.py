"""One run's JSON, on stdout, from the `spmv bench --json` files of its parts (a run split in
parts, e.g. by `lab/run auto`): the first file's settings, every file's results; a missing or
unreadable part is left out."""

import json
import sys

from . import cli, data


def main(argv=None):
    ap = cli.parser("merge", __doc__)
    ap.add_argument("parts", nargs="+")
    args = ap.parse_args(argv)
    json.dump(data.merge(args.parts), sys.stdout)


if __name__ == "__main__":
    main()
