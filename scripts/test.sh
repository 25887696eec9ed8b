#!/usr/bin/env bash
# Runs every test of drape: formatting, lints, unit and integration tests (release build,
# since the physics tests simulate thousands of particles), then the Python tests that read
# every cache with the programs that consume them (Blender's bpy, Pixar's USD): all of them
# with Blender 4.5 LTS (.venv/), then the Blender ones (tests/python/test_blender_*.py) again
# with Blender 5.x (.venv-bpy5/); scripts/python-deps.sh makes both venvs. Last, a batch of
# shots through a real single-node Slurm (scripts/slurm-test.sh installs Debian's slurm-wlm
# and munge if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --check
cargo clippy --release --all-targets -- -D warnings
# Builds every crate once: the binary and the examples the Python tests run come from here
# (`cargo test` builds them with the `dev` feature the tests turn on, which adds nothing to
# what they do; building them again with `cargo build` would compile drape a second time).
cargo test --release
PYTHON=$(bash scripts/python-deps.sh 4.5 | tail -n 1)
PYTHON5=$(bash scripts/python-deps.sh 5 | tail -n 1)
export DRAPE_BIN="$PWD/target/release/drape"
export DRAPE_DUMP_GLTF="$PWD/target/release/examples/dump_gltf_animation"
export DRAPE_DUMP_SCENE="$PWD/target/release/examples/dump_scene_points"
# The Linux x64 Blender extension package of the binary under test (docs/blender.md,
# "Release steps"): target/blender-extension/drape-<version>-linux_x64.zip.
scripts/build-blender-extension.sh target/blender-extension
"$PYTHON" -m pytest tests/python -q
"$PYTHON5" -m pytest tests/python/test_blender_*.py -q
scripts/slurm-test.sh "$DRAPE_BIN"
