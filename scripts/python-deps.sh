#!/usr/bin/env bash
# Installs the Python programs that read drape's caches back in tests/python (Blender as
# the `bpy` module, Pixar's `usd-core`, pytest) into a venv at the repository root.
#
#   scripts/python-deps.sh     Blender 4.5 LTS: .venv/, CPython 3.11, tests/python/requirements.txt
#   scripts/python-deps.sh 5   Blender 5.3: .venv-bpy5/, CPython 3.13, requirements-bpy5.txt
#
# Each `bpy` release is built for exactly one CPython minor version, so each Blender line gets
# its own venv. The interpreter is $DRAPE_PYTHON if set, else pythonX.Y on PATH, else pyenv's
# newest X.Y under $(pyenv root)/versions. Idempotent: a stamp holding the hash of the
# requirements file skips pip when nothing changed. Prints the venv's python path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-4.5}" in
    4 | 4.5) REQ=tests/python/requirements.txt VENV=.venv WANT=3.11 ;;
    5 | 5.3) REQ=tests/python/requirements-bpy5.txt VENV=.venv-bpy5 WANT=3.13 ;;
    *)
        echo "python-deps: unknown Blender line '$1' (4.5 or 5)" >&2
        exit 2
        ;;
esac

# True when "$1" runs and is CPython $WANT.
is_wanted() {
    "$1" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$WANT'.split('.'))))" \
        >/dev/null 2>&1
}

find_python() {
    if [ -n "${DRAPE_PYTHON:-}" ]; then
        echo "$DRAPE_PYTHON"
        return
    fi
    local candidates=("python$WANT")
    local root
    root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
    # pyenv's shims only answer for the versions made global; the interpreters themselves
    # always sit under versions/. Newest patch release first.
    while IFS= read -r dir; do
        candidates+=("$dir/bin/python$WANT")
    done < <(ls -d "$root/versions/$WANT".* 2>/dev/null | sort -rV)
    candidates+=("/usr/bin/python$WANT" "/usr/local/bin/python$WANT" python3)
    local c
    for c in "${candidates[@]}"; do
        if is_wanted "$c"; then
            echo "$c"
            return
        fi
    done
    echo "${candidates[0]}"
}

PY=$(find_python)
if ! is_wanted "$PY"; then
    echo "python-deps: the bpy of $REQ needs CPython $WANT; none found (set DRAPE_PYTHON)" >&2
    exit 1
fi
stamp="$VENV/.drape-requirements.sha256"
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "python-deps: $VENV up to date" >&2
else
    echo "python-deps: installing $REQ into $VENV with $PY (bpy: ~400 MB, a few minutes)" >&2
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ"
    echo "$want" >"$stamp"
fi
echo "$VENV/bin/python"
