#!/usr/bin/env bash
# Usage: scripts/outside-bench.sh [OUT]
# Bakes garments on the outside characters of ../shared/assets (docs/benchmarks.md, "Outside
# characters"): scripts/outside_garments.py builds the scenes in Blender (bpy 4.5) into OUT
# (default target/outside), then `drape simulate` bakes each over the character's animation
# range with a run report, and the script prints per scene: frames baked, exit code,
# ms/frame, steps/frame, worst edge stretch and deepest penetration into the body.
# The binary is $DRAPE_BIN, else target/release/drape; the Python is $PYTHON, else .venv's.
# A bake still running after $OUTSIDE_TIMEOUT seconds (default 1800) is stopped (SIGTERM:
# exit 130, the partial cache is measured).
set -uo pipefail
cd "$(dirname "$0")/.."
assets=$(realpath -m ../shared/assets)
if [ ! -f "$assets/RiggedFigure.glb" ]; then
    echo "outside-bench: no $assets/RiggedFigure.glb (the outside characters are kept beside the repository, not in it): nothing to bake" >&2
    exit 0
fi
drape=$(realpath "${DRAPE_BIN:-target/release/drape}")
python=${PYTHON:-.venv/bin/python}
out=$(realpath -m "${1:-target/outside}")
"$python" scripts/outside_garments.py build --assets "$assets" --out "$out" 2>&1 \
    | grep -v -e '| INFO:' -e 'Texture.png' -e '^$' || exit 1
"$python" -c 'import json, sys
for name, scene in json.load(open(sys.argv[1])).items():
    print(name, "%d..%d" % tuple(scene["frames"]))' "$out/scenes.json" |
while read -r scene frames; do
    rm -f "$out/$scene.pc2" "$out/$scene.pc2.partial" "$out/$scene.report.json"
    echo "drape simulate $scene.glb --frames $frames ..." >&2
    timeout --preserve-status "${OUTSIDE_TIMEOUT:-1800}" "$drape" simulate "$out/$scene.glb" --frames "$frames" \
        --up z -o "$out/$scene.pc2" --report "$out/$scene.report.json" --progress none \
        < /dev/null 2> "$out/$scene.stderr"
    echo "  exit $?; $(tr '\n' ' ' < "$out/$scene.stderr" | cut -c1-400)" >&2
done
"$python" scripts/outside_garments.py measure --out "$out" 2>&1 \
    | grep -v -e '| INFO:' -e '^$'
