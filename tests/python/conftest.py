"""Shared fixtures of the Python tests: the real drape binary and the fixtures folder.

The tests read drape's caches with the programs that consume them (Blender's Mesh Cache
modifier through `bpy`, Pixar's USD through `pxr`) and with readers written from the
formats (readers.py). scripts/python-deps.sh installs them; scripts/test.sh runs them.
"""
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
