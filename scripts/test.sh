#!/usr/bin/env bash
# The project's test command (README; .ci/run calls it): the Rust workspace's tests, then
# the Python package's wheel built and its pytest suite (scripts/python-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
bash scripts/python-test.sh
