"""USD caches opened with Pixar's USD (`pxr`, the usd-core package): stage metadata, one
points and extent sample per frame, source topology with faceVarying UVs, Pixar's
compliance checker; and the partial file of an interrupted bake (issue 5)."""
import shutil
import subprocess

from pxr import Sdf, Usd, UsdGeom, UsdUtils

from readers import cache_points_at_rest, read_gltf_mesh, read_pc2
from test_blender_mesh_cache import bake_and_interrupt


def open_mesh(path):
    stage = Usd.Stage.Open(str(path))
    assert stage, f"USD cannot open {path}"
    prim = stage.GetDefaultPrim()
    assert prim and prim.IsA(UsdGeom.Mesh), "the default prim is the Mesh"
    return stage, UsdGeom.Mesh(prim)


def bake_usd_and_pc2(drape, scene, tmp_path, frames, *extra):
    for ext in ("usda", "pc2"):
        drape("simulate", scene, "--frames", frames, "-o", tmp_path / f"c.{ext}",
              "--progress", "none", *extra)
    return tmp_path / "c.usda", read_pc2(tmp_path / "c.pc2")[2]


def test_usd_cache_has_stage_metadata_and_a_sample_per_frame(drape, fixture, tmp_path):
    path, pc2 = bake_usd_and_pc2(drape, fixture("sheet_seam.gltf"), tmp_path, "3..9")
    stage, mesh = open_mesh(path)
    assert stage.GetTimeCodesPerSecond() == 24
    assert stage.GetFramesPerSecond() == 24
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (3, 9)
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y  # glTF is Y-up
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1
    assert mesh.GetSubdivisionSchemeAttr().Get() == UsdGeom.Tokens.none
    points = mesh.GetPointsAttr()
    extent = mesh.GetExtentAttr()
    assert points.GetTimeSamples() == [3, 4, 5, 6, 7, 8, 9]
    assert extent.GetTimeSamples() == [3, 4, 5, 6, 7, 8, 9]
    for k, t in enumerate(range(3, 10)):
        p = points.Get(t)
        assert [tuple(q) for q in p] == pc2[k], f"frame {t}: USD and PC2 hold the same f32"
        computed = UsdGeom.PointBased.ComputeExtent(p)
        assert extent.Get(t) == computed, f"frame {t}: extent is the points' bounds"


def test_usd_cache_keeps_source_topology_and_face_varying_uvs(drape, fixture, tmp_path):
    scene = fixture("sheet_seam.gltf")  # split vertices at a UV seam, mirrored island
    path, pc2 = bake_usd_and_pc2(drape, scene, tmp_path, "1..3")
    src = read_gltf_mesh(scene)
    indices, uvs = src["indices"], src["uvs"]
    assert len(set(src["point_of_vertex"])) < len(uvs), "the fixture has split vertices"
    _, mesh = open_mesh(path)
    counts = list(mesh.GetFaceVertexCountsAttr().Get())
    corners = list(mesh.GetFaceVertexIndicesAttr().Get())
    assert counts == [3] * (len(indices) // 3)
    assert corners == [src["point_of_vertex"][v] for v in indices], \
        "faces over cache points (_DRAPE_INDEX) in source order and winding"
    assert mesh.GetOrientationAttr().Get() == UsdGeom.Tokens.rightHanded
    st = UsdGeom.PrimvarsAPI(mesh).GetPrimvar("st")
    assert st.GetInterpolation() == UsdGeom.Tokens.faceVarying
    assert st.GetTypeName() == Sdf.ValueTypeNames.TexCoord2fArray
    values = st.Get()
    assert len(values) == len(corners)
    # Each corner keeps its own vertex's UV: the two sides of the seam differ.
    assert [tuple(values[k]) for k in range(len(indices))] == [uvs[v] for v in indices]
    # The first sample is the garment as given, one point per source vertex.
    assert [tuple(p) for p in mesh.GetPointsAttr().Get(1)] == cache_points_at_rest(src)


def test_usd_cache_passes_pixars_compliance_checker(drape, fixture, tmp_path):
    path, _ = bake_usd_and_pc2(drape, fixture("sheet_small.gltf"), tmp_path, "1..4")
    checker = UsdUtils.ComplianceChecker(arkit=False, skipARKitRootLayerCheck=False,
                                         rootPackageOnly=False, skipVariants=False)
    checker.CheckCompliance(str(path))
    assert checker.GetErrors() == []
    assert checker.GetFailedChecks() == []


def test_up_z_converts_points_and_sets_up_axis(drape, fixture, tmp_path):
    scene = fixture("sheet_small.gltf")
    drape("simulate", scene, "--frames", "1..3", "-o", tmp_path / "y.usda", "--progress", "none")
    drape("simulate", scene, "--frames", "1..3", "-o", tmp_path / "z.usda", "--up", "z",
          "--progress", "none")
    sy, my = open_mesh(tmp_path / "y.usda")
    sz, mz = open_mesh(tmp_path / "z.usda")
    assert UsdGeom.GetStageUpAxis(sz) == UsdGeom.Tokens.z
    for t in (1, 3):
        y = my.GetPointsAttr().Get(t)
        z = mz.GetPointsAttr().Get(t)
        assert [tuple(q) for q in z] == [(p[0], -p[2], p[1]) for p in y]


def test_interrupted_usd_bake_leaves_a_partial_stage_with_the_finished_frames(
    drape, fixture, tmp_path
):
    out = tmp_path / "sheet.usda"
    code, last_frame, events = bake_and_interrupt(drape, fixture("sheet_2corner.gltf"), out, 3)
    assert code == 130, events[-3:]
    assert not out.exists()
    k = last_frame["done"]
    # USD picks the file format by extension: open the partial text under a .usda name.
    copy = tmp_path / "partial_copy.usda"
    shutil.copy(tmp_path / "sheet.usda.partial", copy)
    stage, mesh = open_mesh(copy)
    assert mesh.GetPointsAttr().GetTimeSamples() == list(range(1, k + 1))
    assert mesh.GetExtentAttr().GetTimeSamples() == list(range(1, k + 1))
    assert stage.GetEndTimeCode() == k
    assert len(mesh.GetPointsAttr().Get(k)) == 2500


def test_a_full_disk_leaves_a_partial_stage_usd_opens(drape, fixture, tmp_path):
    """`ulimit -f` (with SIGXFSZ ignored) makes a write fail mid-bake as a full disk does:
    exit 3, and the partial .usda, cut back to its last finished frame, still opens."""
    out = tmp_path / "full.usda"
    script = (f"trap '' XFSZ; ulimit -f 48; exec '{drape.binary}' simulate "
              f"'{fixture('sheet_small.gltf')}' --frames 1..40 -o '{out}' --progress none")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr
    assert "keeps frames 1.." in r.stderr
    copy = tmp_path / "copy.usda"
    shutil.copy(tmp_path / "full.usda.partial", copy)
    stage, mesh = open_mesh(copy)
    samples = mesh.GetPointsAttr().GetTimeSamples()
    assert 1 <= len(samples) < 40
    assert samples == list(range(1, len(samples) + 1))
    assert mesh.GetExtentAttr().GetTimeSamples() == samples
    assert stage.GetEndTimeCode() == len(samples)
