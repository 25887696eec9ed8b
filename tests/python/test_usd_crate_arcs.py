"""Composition arcs in binary crate files (issue 51): a `.usdc` set that references a
`.usdc` component through a variant, loads a payload and instances a prototype, written by
Pixar's `pxr`. drape's reading (`examples/dump_scene_points.rs`) must put every mesh point
where Pixar's composed stage does (world space, instance proxies included), within 1e-6 m,
at two frames of an animated transform.
"""
import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("pxr")
from pxr import Gf, Sdf, Usd, UsdGeom  # noqa: E402

FRAMES = [1, 12]


def triangle(stage, path, x):
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr([(x, 0, 0), (x + 1, 0, 0), (x, 1, 0)])
    mesh.CreateFaceVertexCountsAttr([3])
    mesh.CreateFaceVertexIndicesAttr([0, 1, 2])
    return mesh


def build(d):
    comp = Usd.Stage.CreateNew(str(d / "component.usdc"))
    root = UsdGeom.Xform.Define(comp, "/Comp").GetPrim()
    comp.SetDefaultPrim(root)
    vset = root.GetVariantSets().AddVariantSet("size")
    for name, x in [("small", 0.0), ("large", 5.0)]:
        vset.AddVariant(name)
        vset.SetVariantSelection(name)
        with vset.GetVariantEditContext():
            triangle(comp, "/Comp/Geo", x)
    vset.SetVariantSelection("large")
    comp.GetRootLayer().Save()

    pay = Usd.Stage.CreateNew(str(d / "payload.usdc"))
    p = UsdGeom.Xform.Define(pay, "/Prop").GetPrim()
    pay.SetDefaultPrim(p)
    triangle(pay, "/Prop/Geo", -3.0)
    pay.GetRootLayer().Save()

    s = Usd.Stage.CreateNew(str(d / "set.usdc"))
    UsdGeom.SetStageUpAxis(s, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(s, 1.0)
    s.SetStartTimeCode(1)
    s.SetEndTimeCode(12)
    world = UsdGeom.Xform.Define(s, "/World")
    op = world.AddTranslateOp()
    op.Set(Gf.Vec3d(0, 0, 0), 1)
    op.Set(Gf.Vec3d(0, 2, 0), 12)
    a = UsdGeom.Xform.Define(s, "/World/A").GetPrim()
    a.GetReferences().AddReference("./component.usdc")
    b = UsdGeom.Xform.Define(s, "/World/B")
    b.AddTranslateOp().Set(Gf.Vec3d(0, 0, 7))
    b.GetPrim().GetPayloads().AddPayload("./payload.usdc")
    proto = UsdGeom.Xform.Define(s, "/Proto")
    proto.GetPrim().SetSpecifier(Sdf.SpecifierClass)
    triangle(s, "/Proto/Geo", 20.0)
    for name, z in [("I1", 1.0), ("I2", -1.0)]:
        inst = UsdGeom.Xform.Define(s, f"/World/{name}")
        inst.AddTranslateOp().Set(Gf.Vec3d(0, 0, z))
        inst.GetPrim().GetInherits().AddInherit("/Proto")
        inst.GetPrim().SetInstanceable(True)
    s.GetRootLayer().Save()
    return d / "set.usdc"


def pixar_points(path, frame):
    stage = Usd.Stage.Open(str(path))
    out = []
    for prim in stage.Traverse(Usd.TraverseInstanceProxies()):
        if prim.IsA(UsdGeom.Mesh):
            m = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(frame)
            out += [list(m.Transform(Gf.Vec3d(p)))
                    for p in UsdGeom.Mesh(prim).GetPointsAttr().Get(frame)]
    return np.array(sorted(map(tuple, out)))


def test_crate_file_arcs_compose_as_pixar_does(tmp_path, dump_scene):
    path = build(tmp_path)
    meshes = dump_scene(path, FRAMES)["meshes"]
    assert len(meshes) == 4, [m["name"] for m in meshes]
    for f in FRAMES:
        got = np.array(sorted(tuple(p) for m in meshes for p in m["frames"][str(f)]))
        want = pixar_points(path, f)
        assert got.shape == want.shape
        worst = np.abs(got - want).max()
        assert worst < 1e-6, f"frame {f}: max |Δ| {worst:.3g} m"
