"""Pixar's USD (usd-core, module `pxr`) opens the generated .usda fixtures of
examples/gen_io_fixtures.rs: they are valid USD, and what pxr reads agrees with the
Houdini .geo copies of the same data (read here with the json module alone).

Skipped when pxr is not installed (scripts/python-deps.sh installs it into .venv/).
"""
import json
import math
from pathlib import Path

import pytest

pxr = pytest.importorskip("pxr")
from pxr import Gf, Sdf, Usd, UsdGeom  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def geo_points(path):
    """P of a Houdini JSON .geo file as a list of (x, y, z)."""
    doc = json.loads(path.read_text())
    top = dict(zip(doc[::2], doc[1::2]))
    attrs = dict(zip(top["attributes"][::2], top["attributes"][1::2]))
    for definition, data in attrs["pointattributes"]:
        d = dict(zip(definition[::2], definition[1::2]))
        if d["name"] == "P":
            values = dict(zip(data[::2], data[1::2]))["values"]
            return [tuple(t) for t in dict(zip(values[::2], values[1::2]))["tuples"]]
    raise AssertionError("no P")


def open_stage(name):
    stage = Usd.Stage.Open(str(FIXTURES / "usd" / name))
    assert stage is not None, name
    return stage


@pytest.mark.parametrize("name", ["sheet_seam.usda", "body_anim.usda", "character_anim.usda"])
def test_fixture_opens_and_every_mesh_is_well_formed(name):
    stage = open_stage(name)
    meshes = [UsdGeom.Mesh(p) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)]
    assert meshes, name
    for mesh in meshes:
        counts = mesh.GetFaceVertexCountsAttr().Get()
        indices = mesh.GetFaceVertexIndicesAttr().Get()
        assert sum(counts) == len(indices)
        time = stage.GetStartTimeCode() if stage.HasAuthoredTimeCodeRange() else Usd.TimeCode.Default()
        points = mesh.GetPointsAttr().Get(time)
        assert max(indices) < len(points)


def test_sheet_has_faceVarying_st_pins_and_the_garment_role():
    stage = open_stage("sheet_seam.usda")
    prim = stage.GetPrimAtPath("/root/SheetSeam/SheetSeamMesh")
    mesh = UsdGeom.Mesh(prim)
    assert len(mesh.GetPointsAttr().Get()) == 13 * 13
    st = UsdGeom.PrimvarsAPI(prim).GetPrimvar("st")
    assert st.GetInterpolation() == UsdGeom.Tokens.faceVarying
    assert len(st.Get()) == len(mesh.GetFaceVertexIndicesAttr().Get())
    pin = UsdGeom.PrimvarsAPI(prim).GetPrimvar("pin")
    assert sum(1 for w in pin.Get() if w >= 0.5) == 2
    role = stage.GetPrimAtPath("/root/SheetSeam").GetAttribute("userProperties:drape_role")
    assert role.Get() == "garment"
    # Same points, in the same order, as the Houdini copy.
    geo = geo_points(FIXTURES / "houdini" / "sheet_seam.geo")
    for p, q in zip(mesh.GetPointsAttr().Get(), geo):
        assert max(abs(a - b) for a, b in zip(p, q)) < 1e-7


def test_body_time_samples_in_centimetres_match_the_geo_sequence_in_metres():
    stage = open_stage("body_anim.usda")
    assert UsdGeom.GetStageMetersPerUnit(stage) == pytest.approx(0.01)
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (1, 24)
    prim = stage.GetPrimAtPath("/root/Body/BodyMesh")
    points = UsdGeom.Mesh(prim).GetPointsAttr()
    assert points.GetTimeSamples() == [float(f) for f in range(1, 25)]
    cache = UsdGeom.XformCache()
    worst = 0.0
    for frame in (1, 7, 13, 24):
        cache.SetTime(Usd.TimeCode(frame))
        world = cache.GetLocalToWorldTransform(prim)
        geo = geo_points(FIXTURES / "houdini" / f"body.{frame:04d}.geo")
        for p, q in zip(points.Get(frame), geo):
            w = world.Transform(Gf.Vec3d(p)) * 0.01
            worst = max(worst, max(abs(a - b) for a, b in zip(w, q)))
    assert worst < 1e-6, worst


def test_cache_of_a_usd_garment_has_its_point_count_and_order(drape, tmp_path):
    """Issue 4: a cache written for a USD garment has one point per USD point, in the USD
    point order, at rest in the first sample (positions as pxr reads them)."""
    from readers import read_pc2

    for name in ["sheet_seam.usda", "sheet_seam.usdc"]:
        src = FIXTURES / "usd" / name
        out = tmp_path / (name + ".pc2")
        drape("simulate", src, "--frames", "1..4", "-o", out, "--progress", "none")
        stage = Usd.Stage.Open(str(src))
        mesh = next(UsdGeom.Mesh(p) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh))
        points = [tuple(p) for p in mesh.GetPointsAttr().Get(Usd.TimeCode.Default())]
        start, _, frames = read_pc2(out)
        assert start == 1.0 and len(frames) == 4
        assert len(frames[0]) == len(points) == 169
        for k, (a, b) in enumerate(zip(frames[0], points)):
            assert max(abs(x - y) for x, y in zip(a, b)) == 0.0, f"{name} point {k}: {a} vs {b}"
        # The sheet then moves (it hangs from two pinned corners).
        assert max(abs(a[1] - b[1]) for a, b in zip(frames[3], frames[0])) > 1e-4
