"""The few statistics the tables use."""

import math


def geomean(values):
    """The geometric mean of the positive finite values (NaN when there are none)."""
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def percentile(values, q):
    """The value at fraction Q of the sorted values (q = 0.5: the upper median; NaN for none)."""
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")
