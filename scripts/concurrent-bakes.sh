#!/usr/bin/env bash
# Usage: scripts/concurrent-bakes.sh [DRAPE] [SCENE] [FRAMES] [N]
# Bakes SCENE N times in a row, then N times at once, and prints both wall times, their
# ratio (concurrent / sequential: 1 means the bakes share the machine without waste) and
# whether every cache is byte-identical to the first. Defaults: target/release/drape,
# fixtures/sheet_2corner.gltf (2,500 particles), 96 frames, 4 bakes.
set -euo pipefail
bin=$(realpath "${1:-target/release/drape}")
scene=$(realpath "${2:-fixtures/sheet_2corner.gltf}")
frames=${3:-96}
n=${4:-4}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bake() { "$bin" simulate "$scene" -o "$dir/$1.pc2" --frames "1..$frames" --progress none; }
t0=$(date +%s.%N)
for k in $(seq "$n"); do bake "seq$k"; done
t1=$(date +%s.%N)
for k in $(seq "$n"); do bake "par$k" & done
wait
t2=$(date +%s.%N)
same=yes
for f in "$dir"/*.pc2; do cmp -s "$dir/seq1.pc2" "$f" || same=no; done
awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v n="$n" -v same="$same" \
    'BEGIN { s = t1 - t0; p = t2 - t1; printf "%d bakes: in a row %.2f s, at once %.2f s, ratio %.3f; caches identical: %s\n", n, s, p, p / s, same }'
