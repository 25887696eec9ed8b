"""The plain-Python drape runner for Houdini (no `hou` import).

There is one runner for both plug-ins: `plugin-scripts/blender/drape/runner.py` (the Blender
extension must be self-contained, so the file lives there). This module loads that same
file, from `$DRAPE_RUNNER` if set, else from its place beside this package in the
repository (`../../../blender/drape/runner.py`), else from `_runner.py` beside this file (a
copy made when the package is deployed on its own), and adds the Houdini-only helpers:
`.geo` file names for `$F4` sequences and promoting a cancelled bake's `.geo.partial`
frames so a File SOP can read them."""
import glob
import importlib.util
import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
_CANDIDATES = [
    os.environ.get("DRAPE_RUNNER", ""),
    os.path.join(_HERE, "..", "..", "..", "blender", "drape", "runner.py"),
    os.path.join(_HERE, "_runner.py"),
]


def _load_shared():
    for path in _CANDIDATES:
        if path and os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("drape_houdini._shared_runner", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise ImportError(
        "drape_houdini: the shared runner (plugin-scripts/blender/drape/runner.py) was not "
        f"found; looked at {[p for p in _CANDIDATES if p]}; set DRAPE_RUNNER to its path"
    )


_shared = _load_shared()
globals().update({k: v for k, v in vars(_shared).items() if not k.startswith("__")})
SHARED_PATH = _shared.__file__


def frame_file(pattern, frame):
    """`pattern` with Houdini's `$F4` (four digits) / `$F` (unpadded) replaced by `frame`."""
    frame = int(frame)
    return re.sub(r"\$F(\d*)", lambda m: f"{frame:0{int(m.group(1) or 0)}d}", pattern)


def houdini_job_files(work_dir, garment, bodies, cache_format="geo"):
    """File names of one bake in `work_dir`: the garment's `.geo`, each body's `$F4.geo`
    sequence, the result (a `.geo` sequence, or with `cache_format="abc"` one Alembic
    archive for the Alembic SOP) and the scene file."""
    def safe(name):
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "node"

    g = safe(garment)
    return {
        "garment": os.path.join(work_dir, f"{g}.geo"),
        "bodies": [os.path.join(work_dir, f"{safe(b)}.$F4.geo") for b in bodies],
        "out": os.path.join(work_dir, "cache",
                            f"{g}.abc" if cache_format == "abc" else f"{g}.$F4.geo"),
        "scene": os.path.join(work_dir, f"{g}_scene.json"),
        "name": g,
    }


def promote_partial_frames(out_pattern):
    """After a cancelled or failed bake of a `.geo` sequence, renames every finished frame
    `name.0001.geo.partial` to `name.0001.geo` (File SOP reads those); returns the frames.
    For an Alembic `out_pattern` (`.abc`), renames its `.partial` archive, which holds the
    finished frames, to it; returns [] (the archive tells its frames)."""
    if out_pattern.lower().endswith(".abc"):
        if os.path.exists(out_pattern + ".partial"):
            os.replace(out_pattern + ".partial", out_pattern)
        return []
    regex = re.escape(os.path.basename(out_pattern))
    regex = re.sub(r"\\\$F(\d*)", lambda m: r"(\d+)", regex) + r"\.partial"
    frames = []
    for path in glob.glob(os.path.join(os.path.dirname(out_pattern), "*.partial")):
        m = re.fullmatch(regex, os.path.basename(path))
        if m:
            os.replace(path, path[: -len(".partial")])
            frames.append(int(m.group(1)))
    return sorted(frames)
