"""The cells of one Markdown table row, one per format, shared by the table scripts."""


def cells(results, formats, key, text, failed="FAIL"):
    """`results` maps format -> result (bench or PageRank JSON). Per format: "—" when it is
    missing or declined the matrix, `failed` for a wrong or failed run, else text(result),
    in bold for the correct result with the smallest `key`. Returns (cells, best format)."""
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
            out.append(f"**{text(r)}**" if f == best else text(r))
    return out, best
