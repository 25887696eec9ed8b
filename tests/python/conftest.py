"""Shared fixtures of the Python tests: the real drape binary and the fixtures folder.

The tests read drape's caches with the programs that consume them (Blender's Mesh Cache
modifier through `bpy`, Pixar's USD through `pxr`) and with readers written from the
formats (readers.py). scripts/python-deps.sh installs them; scripts/test.sh runs them.
"""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


@pytest.fixture(scope="session")
def drape():
    """Runs the release binary (or $DRAPE_BIN): drape(*args, code=0) -> CompletedProcess."""
    binary = pathlib.Path(os.environ.get("DRAPE_BIN", ROOT / "target" / "release" / "drape"))
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run `cargo build --release` first")

    def run(*args, code=0):
        r = subprocess.run(
            [str(binary), *map(str, args)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=600,
        )
        assert r.returncode == code, f"drape {args}: exit {r.returncode}\n{r.stderr}"
        return r

    run.binary = binary
    return run


@pytest.fixture
def fixture():
    return lambda name: FIXTURES / name


@pytest.fixture(scope="session")
def dump_scene():
    """dump_scene(path, frames) -> drape's reading of every mesh of `path` at `frames`
    (examples/dump_scene_points.rs: {"meshes": [{"name", "animated", "frames": {"13":
    [[x, y, z], ...]}}]}), from $DRAPE_DUMP_SCENE or the example cargo builds."""
    exe = os.environ.get("DRAPE_DUMP_SCENE")
    if not exe:
        subprocess.run(["cargo", "build", "--quiet", "--release", "--example",
                        "dump_scene_points"], cwd=ROOT, check=True, timeout=1800)
        exe = ROOT / "target" / "release" / "examples" / "dump_scene_points"

    def run(path, frames):
        r = subprocess.run([str(exe), str(path), *map(str, frames)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    return run

