"""Markdown table rows."""


def row(cells):
    """One table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def header(columns, align=None):
    """A table's header and rule; ALIGN is one letter per column, 'l' or 'r' (default: none)."""
    rule = ["---:" if a == "r" else "---" for a in (align or "l" * len(columns))]
    return row(columns) + "\n" + row(rule)


def bold(text, yes=True):
    """TEXT in bold when YES."""
    return f"**{text}**" if yes else text


def cells(results, formats, key, text, failed="FAIL"):
    """The cells of one row, one per format. RESULTS maps format -> result (bench or PageRank
    JSON). Per format: "—" when it is missing or declined the matrix, FAILED for a wrong or
    failed run, else text(result), in bold for the correct result with the smallest KEY.
    Returns (cells, best format)."""
    ok = {f: r for f, r in results.items() if r["status"] == "ok"}
    best = min(ok, key=lambda f: ok[f][key]) if ok else None
    out = []
    for f in formats:
        r = results.get(f)
        if r is None or r["status"] == "unsupported":
            out.append("—")
        elif r["status"] != "ok":
            out.append(failed)
        else:
            out.append(bold(text(r), f == best))
    return out, best


def table(title, columns, rows, align=None):
    """A whole table on stdout: TITLE, the header, one line per row of cells, a blank line."""
    print(f"{title}\n")
    print(header(columns, align))
    for cells_of_row in rows:
        print(row(cells_of_row))
    print()
