"""A garment skinned with UsdSkel whose pins follow the skin (issue 51): the blend-shape
stage of test_usd_blend_shapes.py with its grid made a garment (UVs, `drape_role`), its top
row pinned. drape bakes it; at every frame the pinned vertices of the PC2 cache must sit
where Pixar's UsdSkel.BakeSkinning puts them (joint motion and blend shapes), within 1e-5 m,
while the free vertices hang under gravity (they leave the skinned shape).
"""
import pytest

from readers import read_pc2
from test_usd_blend_shapes import FRAMES, N, baked_points, build

np = pytest.importorskip("numpy")
from pxr import Sdf, Usd, UsdGeom  # noqa: E402


def make_garment(path):
    stage = Usd.Stage.Open(str(path))
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/Rig/Body"))
    pts = mesh.GetPointsAttr().Get()
    api = UsdGeom.PrimvarsAPI(mesh)
    st = api.CreatePrimvar("st", Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.vertex)
    st.Set([(p[0], p[1]) for p in pts])
    pin = api.CreatePrimvar("pin", Sdf.ValueTypeNames.FloatArray, UsdGeom.Tokens.vertex)
    pin.Set([1.0 if p[1] > 0.99 else 0.0 for p in pts])
    mesh.GetPrim().CreateAttribute("userProperties:drape_role",
                                   Sdf.ValueTypeNames.String).Set("garment")
    stage.GetRootLayer().Save()
    return [i for i, p in enumerate(pts) if p[1] > 0.99]


def test_pins_of_a_usdskel_garment_follow_its_skin(drape, tmp_path):
    src = tmp_path / "garment.usda"
    build(src)
    pinned = make_garment(src)
    assert len(pinned) == N
    want = baked_points(src)
    out = tmp_path / "garment.pc2"
    drape("simulate", src, "--frames", f"{FRAMES[0]}..{FRAMES[-1]}", "-o", out,
          "--progress", "none")
    start, _, frames = read_pc2(out)
    assert start == FRAMES[0] and len(frames) == FRAMES[-1] - FRAMES[0] + 1
    worst_pin, free_moved = 0.0, 0.0
    for f in FRAMES:
        x = np.array(frames[f - FRAMES[0]])
        worst_pin = max(worst_pin, np.abs(x[pinned] - want[f][pinned]).max())
        free = [i for i in range(len(x)) if i not in pinned]
        free_moved = max(free_moved, np.abs(x[free] - want[f][free]).max())
    print(f"pins off the skin by at most {worst_pin:.3g} m; free cloth leaves it by "
          f"{free_moved:.3g} m")
    assert worst_pin < 1e-5
    assert free_moved > 0.05
