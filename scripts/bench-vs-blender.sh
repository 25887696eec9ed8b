#!/usr/bin/env bash
# drape against Blender's cloth modifier, side by side in one run (issue 8): a 1 m sheet of
# 2,500 and 10,000 vertices falling onto a sphere and the skirt-on-character fixture, 60
# frames each; per scene both engines' ms per frame, their ratio, maximum edge stretch and
# deepest penetration. Prints a markdown table, writes target/bench-vs-blender.json.
# Builds the release binary (cargo rebuilds only if it is outdated) and runs
# scripts/bench_vs_blender.py with the Python of scripts/python-deps.sh (bpy 4.5).
# Flags go to the Python script: --quick (10 frames, small sheets), --frames N,
# --json PATH, --work DIR (keep scenes and caches), --blender-mass matched|default,
# --scenes WORD..., --repeat N (each engine N times, alternating; the median ms/frame).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin drape
PYTHON=$(bash scripts/python-deps.sh | tail -n 1)
exec "$PYTHON" scripts/bench_vs_blender.py --drape target/release/drape "$@"
