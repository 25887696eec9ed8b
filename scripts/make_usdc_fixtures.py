"""Regenerates the binary USD (.usdc) fixtures from the checked-in .usda fixtures.

Each fixtures/usd/NAME.usda that has a .usdc twin is exported by Pixar's own library
(usd-core's `pxr`, installed in .venv by scripts/python-deps.sh) as a crate file:

    .venv/bin/python scripts/make_usdc_fixtures.py

The Rust test `usdc_crate_files_read_like_their_usda_sources` (tests/inputs_usd_geo.rs)
checks that drape reads each .usdc as the same garment / body as its .usda source.
"""
import pathlib
import sys

from pxr import Sdf

ROOT = pathlib.Path(__file__).resolve().parents[1]
USD = ROOT / "fixtures" / "usd"
# Small ones only (the 1.2 MB character stays text).
SOURCES = ["sheet_seam.usda", "body_anim.usda"]


def main():
    for name in SOURCES:
        src = USD / name
        dst = src.with_suffix(".usdc")
        layer = Sdf.Layer.FindOrOpen(str(src))
        if layer is None:
            sys.exit(f"cannot open {src}")
        if not layer.Export(str(dst)):
            sys.exit(f"cannot write {dst}")
        print(f"{dst.relative_to(ROOT)}: {dst.stat().st_size} bytes")


if __name__ == "__main__":
    main()
