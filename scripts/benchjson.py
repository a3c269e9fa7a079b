"""What the bench table scripts share: a run's correct back-to-back results by precision and
matrix, and the geometric mean."""
import json
import math


def geo(values):
    """The geometric mean (NaN for none)."""
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def ok_by_matrix(path):
    """{(precision, matrix): {format label: result}} of the results of `spmv bench --json` that
    ran correctly and have a back-to-back time."""
    by = {}
    for r in json.load(open(path))["results"]:
        if r["status"] == "ok" and r.get("back_to_back_ms"):
            by.setdefault((r["precision"], r["matrix"]), {})[r["format"]] = r
    return by


def merge(paths):
    """One run's JSON from several `spmv bench --json` files of it (a run split in parts):
    the first file's settings, every file's results; a missing or unreadable part is left out."""
    merged = None
    for path in paths:
        try:
            part = json.load(open(path))
        except (OSError, ValueError):
            continue
        if merged is None:
            merged = part
        else:
            merged["results"].extend(part["results"])
    return merged or {"results": []}


if __name__ == "__main__":
    import sys

    if len(sys.argv) < 3 or sys.argv[1] != "--merge":
        sys.exit("usage: benchjson.py --merge PART.json ... > RUN.json")
    json.dump(merge(sys.argv[2:]), sys.stdout)
