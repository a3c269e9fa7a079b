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
