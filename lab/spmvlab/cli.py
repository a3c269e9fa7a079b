"""The modules' command lines."""

import argparse


def parser(prog, doc):
    """An argument parser named PROG whose help is the module's docstring DOC, as written."""
    return argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
