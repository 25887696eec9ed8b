#!/usr/bin/env bash
# Usage: scripts/kill-partials.sh [DRAPE] [RUNS]
# SIGKILLs RUNS bakes (default 200) at random instants, spread over PC2, MDD, USD and .geo,
# and reads every partial cache back with the consuming program's reader (pxr for USD,
# tests/python/readers.py for PC2, MDD and .geo); exit 1 if any is unreadable or wrong.
# Needs .venv with usd-core (scripts/python-deps.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:-$here/../target/release/drape}")
exec "$here/../.venv/bin/python" "$here/kill_partials.py" "$bin" --runs "${2:-200}"
