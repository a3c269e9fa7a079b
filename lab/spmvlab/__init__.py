"""spmvlab: the laboratory's shared Python (stdlib only, Python >= 3.9).

Reading `spmv bench --json` / `spmv pagerank --json` output (plain or .gz), the geometric mean,
Markdown tables, old/new comparisons and ratio summaries, in three modules the others import:

    data     load, merge, results by problem or by matrix, GFLOPS, the anchors file
    stats    geometric mean, percentiles
    md       Markdown rows, headers and per-format cells

and one module per analysis, each run as `python3 lab/tables.py NAME ARGS...` (or
`python3 -m spmvlab.NAME ARGS...` with lab/ on the path); `NAME --help` says what it prints:

    anchors          a bench run beside the other codes' figures (../shared/anchors)
    auto_check       issue 14's check of `auto` and `tune` (docs/auto.md)
    bench_tables     per-format tables of a bench run (docs/results-h200.md)
    brcp             BRCP's SpMV times and error experiment (docs/brcp.md)
    brief            one line per bench JSON: each format's back-to-back time
    compare          two runs of the same work: new/old times, or timing noise
    compression      bytes per entry, bound and targets (docs/compression.md)
    csr5_conversion  CSR5's host and GPU conversion against its product (docs/load-balanced.md)
    diagonal         the diagonal family's tables (docs/diagonal.md)
    load_balanced    merge-csr and csr5 against cuSPARSE and the anchors (docs/load-balanced.md)
    merge            one run's JSON from the files of its parts
    pagerank         `spmv pagerank --json` tables (docs/pagerank.md)
    ratio            one format over another, geometric means, optionally by DASP row class
    teb              the TEB paper's comparison (docs/teb.md)

and those that run on the GPU machine beside `spmv` (they need CuPy, PyTorch, the wheel):

    solve_cupy       CuPy's CG on the same problems as `spmv solve`, and the comparison
    krylov_peers     spmv's MINRES, GMRES and method="auto" against CuPy's cg/minres/gmres
    python_bench     `op.apply` from Python against CuPy's and PyTorch's CSR products
"""
