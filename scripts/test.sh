#!/usr/bin/env bash
# Runs every test of drape: formatting, lints, unit and integration tests (release build,
# since the physics tests simulate thousands of particles), then the Python tests that read
# every cache with the programs that consume them (Blender's bpy, Pixar's USD), installed
# into .venv/ by scripts/python-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --check
cargo clippy --release --all-targets -- -D warnings
cargo test --release
cargo build --release --bin drape
PYTHON=$(bash scripts/python-deps.sh | tail -n 1)
DRAPE_BIN="$PWD/target/release/drape" "$PYTHON" -m pytest tests/python -q
