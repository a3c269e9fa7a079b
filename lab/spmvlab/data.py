"""Reading what `spmv bench --json` and `spmv pagerank --json` write, and the anchors file."""

import gzip
import json
import os


def load(path):
    """The JSON document in PATH, gzipped when its name ends in .gz."""
    with (gzip.open if str(path).endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def report_of(source):
    """SOURCE itself when it is a loaded report, else the report in the file it names."""
    return load(source) if isinstance(source, (str, os.PathLike)) else source


def by_problem(source):
    """{(matrix, precision): {format: result}} of every result of a bench run, in its order."""
    by = {}
    for r in report_of(source)["results"]:
        by.setdefault((r["matrix"], r["precision"]), {})[r["format"]] = r
    return by


def ok_by_matrix(source):
    """{(precision, matrix): {format: result}} of the results that ran correctly and have a
    back-to-back time."""
    by = {}
    for r in report_of(source)["results"]:
        if r["status"] == "ok" and r.get("back_to_back_ms"):
            by.setdefault((r["precision"], r["matrix"]), {})[r["format"]] = r
    return by


def merge(paths):
    """One run's JSON from several `spmv bench --json` files of it (a run split in parts): the
    first file's settings, every file's results; a missing or unreadable part is left out."""
    merged = None
    for path in paths:
        try:
            part = load(path)
        except (OSError, ValueError):
            continue
        if merged is None:
            merged = part
        else:
            merged["results"].extend(part["results"])
    return merged or {"results": []}


def generated(matrix):
    """Whether a result's matrix is a generator spec (its name holds a ':') rather than a file."""
    return ":" in matrix


def extra(r):
    """A result's format-specific statistics as a dict."""
    return dict(r["stats"]["extra"])


def gflops(r, key="back_to_back_ms"):
    """2·nnz / time, in GFLOPS, from the time under KEY (milliseconds)."""
    return 2 * r["nnz"] / (r[key] * 1e-3) / 1e9


def machine(report, sms=False, buffers=False):
    """The bench run's machine, copy roofline and repetitions, as one sentence; SMS adds the
    multiprocessors, BUFFERS the copy's buffer size."""
    m = report["machine"]
    arch = f"{m['arch']}, {m['multiprocessors']} SMs" if sms else m["arch"]
    copy = f" (read + write, {m['copy_bytes'] >> 20} MiB buffers)" if buffers else ""
    return (
        f"{m['name']} ({arch}), copy roofline {m['copy_gbs']:.0f} GB/s{copy}; median of {report['reps']} runs "
        f"after {report['warmup']} warm-up runs"
    )


def number(value):
    """A figure of the anchors file as a float, None for "", "NA" and the like."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def anchors(path):
    """{matrix: {column: text}} of an anchors file (../shared/anchors/*.tsv: '#' comments, a
    header line starting with `matrix`, tab-separated)."""
    rows, header = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "matrix":
                header = fields
            else:
                rows[fields[0]] = dict(zip(header, fields))
    return rows
