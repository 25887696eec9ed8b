#!/usr/bin/env bash
# Runs every test of drape: formatting, lints, unit and integration tests (release build,
# since the physics tests simulate thousands of particles).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --check
cargo clippy --release --all-targets -- -D warnings
cargo test --release
