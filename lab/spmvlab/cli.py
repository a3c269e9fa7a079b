"""The modules' command lines."""

import argparse


def parser(prog, doc):
    """An argument parser named PROG whose help is the module's docstring DOC, as written."""
    return argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def solver_comparison(prog, doc, run, run_help, max_iter):
    """The command line of a solver comparison (PROG and DOC as for `parser`): its parser, its
    subcommands and its `run` subcommand (RUN_HELP), which calls RUN(args) with --tol, --max-iter
    (MAX_ITER by default) and the matrices. Each subcommand sets `go`, what `args.go(args)` runs."""
    ap = parser(prog, doc)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help=run_help)
    r.add_argument("--tol", type=float, default=1e-8)
    r.add_argument("--max-iter", type=int, default=max_iter)
    r.add_argument("matrices", nargs="+")
    r.set_defaults(go=run)
    return ap, sub, r
