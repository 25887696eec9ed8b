"""A skirt made from Blender's own cylinder primitive, with the UVs Blender gives it (issue 50,
"garments whose UVs are not a sewing pattern"): `primitive_cylinder_add` without caps, scaled
in object mode into a tube around the walking figure of test_blender_install.py, its waist
ring pinned (the float point attribute `pin`). Its UVs are a texture rectangle, far from the
unrolled tube, so drape's default `--rest auto` rests it on the modelled shape. Exported by
Blender's USD (.usda) and glTF (.glb) exporters and baked by the binary, and baked through
the extension's operator: every bake ends with exit 0 and its cache reads back."""
import json
import pathlib
import subprocess

import pytest

bpy = pytest.importorskip("bpy")
import bmesh  # noqa: E402

from readers import read_pc2  # noqa: E402
from test_blender_extension import fresh_scene  # noqa: E402
from test_blender_install import FIRST, LAST, build_figure, select  # noqa: E402

#: The tube: Blender's default cylinder (radius 1, depth 2) scaled to radius 0.24 m and
#: 0.4 m long, its top ring at the figure's waist (z 0.95 m, radius 0.14 m) and clear of the
#: hips (z 0.75 m, radius 0.20 m); CUTS loop cuts between its two rings make it cloth.
RADIUS, LENGTH, WAIST_Z = 0.24, 0.4, 0.95
CUTS = 11


def build_cylinder_skirt():
    """Blender's cylinder primitive (32 vertices, no caps, default UVs), CUTS rings added
    between its two (as Loop Cut does: the UVs are interpolated), scaled and placed in object
    mode (the scale is not applied), the top ring pinned with the `pin` attribute."""
    bpy.ops.mesh.primitive_cylinder_add(vertices=32, end_fill_type="NOTHING",
                                        calc_uvs=True, location=(0.0, 0.0, WAIST_Z - LENGTH / 2))
    ob = bpy.context.active_object
    ob.name = "CylinderSkirt"
    ob.scale = (RADIUS, RADIUS, LENGTH / 2)
    mesh = ob.data
    bm = bmesh.new()
    bm.from_mesh(mesh)
    upright = [e for e in bm.edges if abs(e.verts[0].co.z - e.verts[1].co.z) > 1e-6]
    bmesh.ops.subdivide_edges(bm, edges=upright, cuts=CUTS, use_grid_fill=True)
    bm.to_mesh(mesh)
    bm.free()
    pin = mesh.attributes.new("pin", "FLOAT", "POINT")
    pin.data.foreach_set("value", [1.0 if v.co.z > 1 - 1e-6 else 0.0 for v in mesh.vertices])
    return ob


@pytest.fixture(scope="module")
def scene(drape):
    scene = fresh_scene(drape.binary, FIRST, LAST)
    body = build_figure()
    skirt = build_cylinder_skirt()
    scene.frame_set(FIRST)
    return skirt, body


def bake_file(drape, path, *args):
    """`drape simulate PATH` with a report; returns (exit code, stderr, report)."""
    out, report = path.with_suffix(".pc2"), path.with_name(path.stem + "_report.json")
    r = subprocess.run([str(drape.binary), "simulate", str(path), "--frames", f"{FIRST}..{LAST}",
                        "-o", str(out), "--report", str(report), "--force", "--progress", "none",
                        *args], capture_output=True, text=True, timeout=600)
    return r.returncode, r.stderr, json.loads(report.read_text())


def summary(report):
    frames = report["per_frame"]
    return (f"{sum(f['steps'] for f in frames) / len(frames):.1f} steps/frame, worst strain "
            f"{100 * max(f['max_strain'] for f in frames):.1f}%")


@pytest.mark.parametrize("suffix", [".usda", ".glb"])
def test_blenders_cylinder_exported_by_blender_bakes_with_the_default_rest(
        drape, scene, tmp_path, suffix):
    skirt, body = scene
    path = tmp_path / f"cylinder{suffix}"
    extension = __import__("drape")
    export = extension.export_usd if suffix == ".usda" else extension.export_gltf
    select(skirt, body)
    export(bpy.context, skirt, [body], str(path))
    garment = json.loads(drape("inspect", path, "--json").stdout)["garments"][0]
    assert garment["rest"] == ["shape"], garment
    assert garment["uv_mismatch"][0] > 0.15, garment
    code, err, report = bake_file(drape, path)
    assert code == 0, err
    assert "differs from the modelled shape" in err and "--rest uv" in err, err
    _, _, frames = read_pc2(path.with_suffix(".pc2"))
    assert len(frames) == LAST - FIRST + 1
    assert len(frames[0]) == len(skirt.data.vertices)
    print(f"\n{suffix}: UV mismatch {100 * garment['uv_mismatch'][0]:.0f}%; --rest auto: "
          f"{summary(report)}")


def test_the_operator_bakes_blenders_cylinder_with_the_panels_default_rest(scene):
    skirt, body = scene
    assert skirt.drape.rest == "AUTO"
    select(skirt, body)
    bpy.context.scene.frame_set(FIRST)
    assert bpy.ops.drape.simulate_garment() == {"FINISHED"}
    mod = skirt.modifiers["Drape"]
    start, _, frames = read_pc2(mod.filepath)
    assert start == FIRST and len(frames) == LAST - FIRST + 1
    assert len(frames[0]) == len(skirt.data.vertices)
    report = pathlib.Path(mod.filepath).with_name(
        pathlib.Path(mod.filepath).stem + "_report.json")
    print(f"\noperator: {summary(json.loads(report.read_text()))}")
