#!/usr/bin/env python3
"""python3 lab/tables.py NAME ARGS...: runs the module spmvlab.NAME (dashes may stand for
underscores) from anywhere; without a NAME, lists the modules."""

import pathlib
import runpy
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    import spmvlab

    sys.exit(spmvlab.__doc__)
module = "spmvlab." + sys.argv[1].replace("-", "_")
sys.argv = [module] + sys.argv[2:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
