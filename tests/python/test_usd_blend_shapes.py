"""UsdSkel blend shapes read by drape against Pixar's own evaluation (issue 51).

The stage is built here with `pxr`: a skinned 5×5 grid whose tip joint bends over time,
with two blend shapes animated by the SkelAnimation — `bulge` on every point, `ripple` on
some points (`pointIndices`) with two inbetweens (weights 0.4 and -0.5), driven below,
between and beyond its sub-shapes. Pixar's `UsdSkel.BakeSkinning` bakes a copy to plain
point samples (blend shapes, then linear blend skinning). drape's reading of the unbaked
stage (`examples/dump_scene_points.rs`) must give the baked points within 1e-5 m at every
frame; the same stage without its blend shapes must not (so the shapes are not a no-op).
"""
import pytest

np = pytest.importorskip("numpy")
pxr = pytest.importorskip("pxr")
from pxr import Gf, Sdf, Usd, UsdGeom, UsdSkel, Vt  # noqa: E402

FRAMES = [0, 3, 5, 8, 10, 14, 20]
TOLERANCE = 1e-5
N = 5


def grid():
    """Points (x, y in [0, 1], z = 0) and triangles of an N×N grid."""
    pts = [(i / (N - 1), j / (N - 1), 0.0) for j in range(N) for i in range(N)]
    tris = []
    for j in range(N - 1):
        for i in range(N - 1):
            a = j * N + i
            tris += [a, a + 1, a + N + 1, a, a + N + 1, a + N]
    return pts, tris


def build(path, with_shapes=True):
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetStartTimeCode(0)
    stage.SetEndTimeCode(20)
    root = UsdSkel.Root.Define(stage, "/Rig")
    skel = UsdSkel.Skeleton.Define(stage, "/Rig/Skel")
    joints = ["root", "root/tip"]
    skel.CreateJointsAttr(joints)
    bind = [Gf.Matrix4d(1), Gf.Matrix4d(1).SetTranslate(Gf.Vec3d(0, 0.5, 0))]
    skel.CreateBindTransformsAttr(Vt.Matrix4dArray(bind))
    skel.CreateRestTransformsAttr(Vt.Matrix4dArray([Gf.Matrix4d(1),
                                                    Gf.Matrix4d(1).SetTranslate(Gf.Vec3d(0, 0.5, 0))]))
    anim = UsdSkel.Animation.Define(stage, "/Rig/Anim")
    anim.CreateJointsAttr(joints)
    anim.CreateTranslationsAttr().Set(Vt.Vec3fArray([(0, 0, 0), (0, 0.5, 0)]))
    anim.CreateScalesAttr().Set(Vt.Vec3hArray([(1, 1, 1), (1, 1, 1)]))
    rot = anim.CreateRotationsAttr()
    for t, deg in [(0, 0.0), (10, 40.0), (20, -25.0)]:
        q = Gf.Rotation(Gf.Vec3d(1, 0, 0), deg).GetQuat()
        rot.Set(Vt.QuatfArray([Gf.Quatf(1), Gf.Quatf(q)]), t)
    UsdSkel.BindingAPI.Apply(skel.GetPrim()).CreateAnimationSourceRel().SetTargets([anim.GetPath()])

    pts, tris = grid()
    mesh = UsdGeom.Mesh.Define(stage, "/Rig/Body")
    mesh.CreatePointsAttr(Vt.Vec3fArray(pts))
    mesh.CreateFaceVertexCountsAttr([3] * (len(tris) // 3))
    mesh.CreateFaceVertexIndicesAttr(tris)
    binding = UsdSkel.BindingAPI.Apply(mesh.GetPrim())
    binding.CreateSkeletonRel().SetTargets([skel.GetPath()])
    idx, wts = [], []
    for (_, y, _) in pts:
        tip = min(1.0, max(0.0, (y - 0.25) / 0.5))
        idx += [0, 1]
        wts += [1 - tip, tip]
    binding.CreateJointIndicesPrimvar(False, 2).Set(idx)
    binding.CreateJointWeightsPrimvar(False, 2).Set(wts)
    binding.CreateGeomBindTransformAttr(Gf.Matrix4d(1))
    if with_shapes:
        bulge = UsdSkel.BlendShape.Define(stage, "/Rig/Body/bulge")
        bulge.CreateOffsetsAttr(Vt.Vec3fArray(
            [(0.0, 0.0, 0.2 * np.sin(np.pi * x) * np.sin(np.pi * y)) for (x, y, _) in pts]))
        ripple = UsdSkel.BlendShape.Define(stage, "/Rig/Body/ripple")
        some = [1, 6, 7, 12, 18, 23]
        ripple.CreatePointIndicesAttr(some)
        ripple.CreateOffsetsAttr(Vt.Vec3fArray([(0.05, 0.0, 0.1)] * len(some)))
        ripple.CreateInbetween("half").SetOffsets(Vt.Vec3fArray([(-0.1, 0.05, 0.0)] * len(some)))
        ripple.GetInbetween("half").SetWeight(0.4)
        ripple.CreateInbetween("back").SetOffsets(Vt.Vec3fArray([(0.0, 0.2, -0.1)] * len(some)))
        ripple.GetInbetween("back").SetWeight(-0.5)
        binding.CreateBlendShapesAttr(["bulge", "ripple"])
        binding.CreateBlendShapeTargetsRel().SetTargets([bulge.GetPath(), ripple.GetPath()])
        anim.CreateBlendShapesAttr(["ripple", "bulge"])
        w = anim.CreateBlendShapeWeightsAttr()
        for t, (r, b) in [(0, (0.0, 0.0)), (5, (0.2, 0.5)), (10, (0.7, 1.0)),
                          (14, (1.3, 0.8)), (17, (-0.8, 0.3)), (20, (-0.2, 1.5))]:
            w.Set(Vt.FloatArray([r, b]), t)
    stage.GetRootLayer().Save()
    return stage, root


def baked_points(path):
    """World points per frame after Pixar's UsdSkel.BakeSkinning."""
    stage = Usd.Stage.Open(str(path))
    assert UsdSkel.BakeSkinning(UsdSkel.Root(stage.GetPrimAtPath("/Rig")),
                                Gf.Interval(0, 20))
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/Rig/Body"))
    out = {}
    for f in FRAMES:
        m = mesh.ComputeLocalToWorldTransform(f)
        out[f] = np.array([list(m.Transform(Gf.Vec3d(p)))
                           for p in mesh.GetPointsAttr().Get(f)])
    return out


def drape_points(dump_scene, path):
    d = dump_scene(path, FRAMES)
    (body,) = [m for m in d["meshes"] if m["name"] == "Body"]
    assert body["animated"]
    return {f: np.array(body["frames"][str(f)]) for f in FRAMES}


def test_blend_shapes_match_pixar_bake(tmp_path, dump_scene):
    src = tmp_path / "shapes.usda"
    build(src)
    want = baked_points(src)
    got = drape_points(dump_scene, src)
    worst = max(np.abs(got[f] - want[f]).max() for f in FRAMES)
    print(f"blend shapes: max |Δ| {worst:.3g} m")
    assert worst <= TOLERANCE, f"max |Δ| {worst:.3g} m against UsdSkel.BakeSkinning"

    # The same stage as a binary crate file: relationships (skel:skeleton,
    # skel:blendShapeTargets) and inbetween weights come through the .usdc reader too.
    crate = tmp_path / "shapes.usdc"
    Usd.Stage.Open(str(src)).Export(str(crate))
    got = drape_points(dump_scene, crate)
    worst = max(np.abs(got[f] - want[f]).max() for f in FRAMES)
    print(f"blend shapes from .usdc: max |Δ| {worst:.3g} m")
    assert worst <= TOLERANCE, f".usdc: max |Δ| {worst:.3g} m against UsdSkel.BakeSkinning"

    plain = tmp_path / "plain.usda"
    build(plain, with_shapes=False)
    without = drape_points(dump_scene, plain)
    effect = max(np.abs(without[f] - want[f]).max() for f in FRAMES)
    print(f"shapes move points by up to {effect:.3g} m")
    assert effect > 0.05, f"the blend shapes move points by only {effect:.3g} m"
