#!/usr/bin/env bash
# Installs the Python programs that read drape's caches back in tests/python (Blender as
# the `bpy` module, Pixar's `usd-core`, pytest) into .venv/ at the repository root.
# Idempotent: a stamp holding the hash of tests/python/requirements.txt skips pip when
# nothing changed. Prints the venv's python path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
REQ=tests/python/requirements.txt
VENV=.venv
PY=${DRAPE_PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    echo "python-deps: bpy 4.5 needs CPython 3.11; $PY is $("$PY" --version 2>&1)" >&2
    exit 1
fi
stamp="$VENV/.drape-requirements.sha256"
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "python-deps: $VENV up to date" >&2
else
    echo "python-deps: installing $REQ into $VENV (bpy is ~370 MB; takes a few minutes)" >&2
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ"
    echo "$want" >"$stamp"
fi
echo "$VENV/bin/python"
