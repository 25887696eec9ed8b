#!/usr/bin/env bash
# Builds the Blender extension package an artist installs from one file (Edit ▸ Preferences ▸
# Get Extensions ▸ Install from Disk): the add-on of plugin-scripts/blender/drape with the
# drape binary inside (bin/drape, bin/drape.exe on Windows), for this machine's platform or
# DRAPE_PLATFORM's.
#
#   scripts/build-blender-extension.sh OUTDIR
#
# Writes OUTDIR/drape-<version>-<platform>.zip (e.g. drape-0.1.0-linux_x64.zip) and prints its
# path on the last line. The staged manifest gets `platforms = ["<platform>"]` (Blender's
# platform tags: linux-x64, linux-arm64, macos-x64, macos-arm64, windows-x64, windows-arm64),
# so Blender installs it only where the binary runs; the extension finds its packaged binary
# first (the preference "drape binary" stays as an override).
#
# Environment:
#   DRAPE_BIN=path       package this binary instead of building one
#   DRAPE_PROFILE=name   cargo profile to build (default `dist`, the whole-program optimised
#                        one the packages ship; `release` reuses target/release/drape)
#   DRAPE_PLATFORM=tag   Blender platform tag of the binary (default: this machine's)
#   BLENDER_PYTHON=path  a Python with `bpy` whose bundled extension tool (bl_pkg's
#                        blender_ext.py) builds the package; default .venv/bin/python, then
#                        .venv-bpy5/bin/python, then `blender --command extension build`.
#                        Without any of them the zip is assembled here the same way.
set -euo pipefail
if [ $# -ne 1 ]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
SRC="$ROOT/plugin-scripts/blender/drape"

# ---- the binary -----------------------------------------------------------------------------
if [ -n "${DRAPE_BIN:-}" ]; then
    BIN=$DRAPE_BIN
else
    PROFILE=${DRAPE_PROFILE:-dist}
    echo "build-blender-extension: cargo build --profile $PROFILE --bin drape" >&2
    (cd "$ROOT" && cargo build --profile "$PROFILE" --bin drape >&2)
    case "$PROFILE" in
        dev | test) dir=debug ;;
        *) dir=$PROFILE ;;
    esac
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/$dir/drape"
fi
if [ ! -x "$BIN" ]; then
    echo "build-blender-extension: $BIN is not an executable" >&2
    exit 1
fi

# ---- the platform ---------------------------------------------------------------------------
if [ -n "${DRAPE_PLATFORM:-}" ]; then
    PLATFORM=$DRAPE_PLATFORM
else
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) PLATFORM=linux-x64 ;;
        Linux-aarch64 | Linux-arm64) PLATFORM=linux-arm64 ;;
        Darwin-x86_64) PLATFORM=macos-x64 ;;
        Darwin-arm64) PLATFORM=macos-arm64 ;;
        *)
            echo "build-blender-extension: unknown platform $(uname -sm); set DRAPE_PLATFORM" >&2
            exit 1
            ;;
    esac
fi

# ---- the staged source: the add-on, bin/drape, the manifest with its platform ---------------
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
cp -R "$SRC" "$STAGE/drape"
rm -rf "$STAGE/drape/__pycache__"
mkdir -p "$STAGE/drape/bin"
NAME=drape
[ "${PLATFORM%%-*}" = windows ] && NAME=drape.exe
cp "$BIN" "$STAGE/drape/bin/$NAME"
chmod 755 "$STAGE/drape/bin/$NAME"
# The line tables of `release` are of no use to an artist; `dist` has none.
if command -v strip >/dev/null 2>&1 && [ "${PLATFORM%%-*}" = linux ]; then
    strip --strip-debug "$STAGE/drape/bin/$NAME" 2>/dev/null || true
fi
# `platforms` is a top-level key: it goes before the first [table] of the manifest.
awk -v p="$PLATFORM" '
    !done && /^\[/ { print "platforms = [\"" p "\"]\n"; done = 1 }
    { print }
    END { if (!done) print "platforms = [\"" p "\"]" }
' "$SRC/blender_manifest.toml" >"$STAGE/drape/blender_manifest.toml"

# ---- the package ----------------------------------------------------------------------------
ext_tool() {
    # bl_pkg's command-line tool inside the bpy of Python $1 (no import of bpy: it is a
    # stand-alone script of the standard library).
    "$1" - <<'EOF' 2>/dev/null
import glob, importlib.util, os
spec = importlib.util.find_spec("bpy")
for root in (spec.submodule_search_locations or []) if spec else []:
    for tool in sorted(glob.glob(os.path.join(root, "*", "scripts", "addons_core", "bl_pkg",
                                              "cli", "blender_ext.py"))):
        print(tool)
        raise SystemExit
EOF
}

TOOL="" PY=""
for candidate in "${BLENDER_PYTHON:-}" "$ROOT/.venv/bin/python" "$ROOT/.venv-bpy5/bin/python"; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    TOOL=$(ext_tool "$candidate" || true)
    if [ -n "$TOOL" ]; then
        PY=$candidate
        break
    fi
done
before=$(ls "$OUT")
if [ -n "$TOOL" ]; then
    echo "build-blender-extension: $TOOL build --split-platforms" >&2
    "$PY" "$TOOL" build --source-dir "$STAGE/drape" --output-dir "$OUT" --split-platforms >&2
elif command -v blender >/dev/null 2>&1; then
    echo "build-blender-extension: blender --command extension build --split-platforms" >&2
    blender --factory-startup --command extension build --source-dir "$STAGE/drape" \
        --output-dir "$OUT" --split-platforms >&2
else
    echo "build-blender-extension: no bpy nor blender found; assembling the zip directly" >&2
    python3 - "$STAGE/drape" "$OUT" "$PLATFORM" <<'EOF'
import os, re, sys, zipfile
src, out, platform = sys.argv[1:]
manifest = open(os.path.join(src, "blender_manifest.toml"), encoding="utf-8").read()
version = re.search(r'^version\s*=\s*"([^"]+)"', manifest, re.M).group(1)
ident = re.search(r'^id\s*=\s*"([^"]+)"', manifest, re.M).group(1)
path = os.path.join(out, f"{ident}-{version}-{platform.replace('-', '_')}.zip")
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    for dirpath, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".pyc"):
                full = os.path.join(dirpath, name)
                z.write(full, os.path.relpath(full, src))
EOF
fi
zip_path=$(cd "$OUT" && comm -13 <(echo "$before") <(ls) | grep "\.zip$" | head -n 1 || true)
if [ -z "$zip_path" ]; then  # rebuilt over an existing zip of the same name
    zip_path=$(cd "$OUT" && ls -t drape-*"${PLATFORM//-/_}".zip | head -n 1)
fi
echo "$OUT/$zip_path"
