"""Draco-compressed glTF (`KHR_draco_mesh_compression`) as Blender writes it: the scene of
test_blender_extension.py (a UV'd garment grid with a seam, marked `drape_role = garment`,
over a box skinned to a keyframed armature) exported twice with Blender's glTF exporter,
with and without Draco, and read by drape. Both must give the same garment and body, and
bakes that agree within what Draco's quantisation changes.

Run as a script (`.venv/bin/python tests/python/test_gltf_draco.py`) it rewrites the pair
fixtures/draco/scene_plain.glb and fixtures/draco/scene_draco.glb that the Rust tests of
src/io/gltf/tests/extensions.rs read.
"""
import json
import math
import pathlib
import sys

import pytest

bpy = pytest.importorskip("bpy")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_blender_extension import (  # noqa: E402
    FIRST, HALF, LAST, build_body, build_garment, fresh_scene, read_pc2)

#: Blender's Draco settings, stated rather than left to the exporter's defaults (which are
#: the same): compression level 6 (edgebreaker connectivity), positions quantised to 14
#: bits, texture coordinates and generic attributes (joints, weights) to 12.
DRACO = dict(
    export_draco_mesh_compression_level=6,
    export_draco_position_quantization=14,
    export_draco_texcoord_quantization=12,
    export_draco_generic_quantization=12,
)
#: Draco quantises each position to a grid of 2¹⁴ − 1 steps over the largest side of the
#: mesh's bounding box: the garment is 2·HALF = 0.6 m wide (step 37 µm), the body box
#: 0.8 m (step 49 µm). A decoded position lies within half a step of the original.
BODY_STEP_M = 0.8 / (2**14 - 1)
GARMENT_STEP_M = 2 * HALF / (2**14 - 1)
#: Largest distance (m) allowed between the two bakes at any vertex and frame. The inputs
#: differ by at most half a quantisation step in position (≤ 25 µm) and in rest lengths
#: by the 12-bit UV step (≈ 0.2 mm on the 0.85-unit UV range); the cloth falls onto the box
#: and the contact solve amplifies such differences (the USD and glTF exports, which differ
#: only by float rounding, agree within 1 mm: test_blender_gltf_export.PATHS_AGREE_M).
#: 5 mm is under 1 % of the 0.6 m garment, well below the 0.1 m grid spacing: a misread
#: attribute (wrong UVs, wrong vertex order, a body that does not move) fails it.
BAKES_AGREE_M = 0.005
BAKE_FRAMES = (FIRST, 12)


def write_scene(folder):
    """Builds the scene and exports it as `scene_plain.glb` and `scene_draco.glb` in
    `folder` with the glTF settings of the extension's export_gltf; returns both paths."""
    fresh_scene("/bin/true", FIRST, LAST)
    build_body()
    garment = build_garment()
    garment["drape_role"] = "garment"
    for o in bpy.context.view_layer.objects:
        o.select_set(True)
    paths = []
    for name, draco in (("scene_plain.glb", False), ("scene_draco.glb", True)):
        path = pathlib.Path(folder) / name
        extra = DRACO if draco else {}
        result = bpy.ops.export_scene.gltf(
            filepath=str(path), export_format="GLB", check_existing=False,
            use_selection=True, export_extras=True, export_yup=True, export_apply=False,
            export_texcoords=True, export_normals=False, export_materials="NONE",
            export_animations=True, export_animation_mode="SCENE", export_frame_range=True,
            export_anim_slide_to_zero=False, export_force_sampling=True, export_skins=True,
            export_morph=False, export_cameras=False, export_lights=False,
            export_draco_mesh_compression_enable=draco, **extra)
        assert result == {"FINISHED"}
        paths.append(path)
    return paths


def glb_json(path):
    data = pathlib.Path(path).read_bytes()
    length = int.from_bytes(data[12:16], "little")
    return json.loads(data[20:20 + length])


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return write_scene(tmp_path_factory.mktemp("draco"))


def test_blender_writes_draco_without_uncompressed_data(exported):
    """The Draco file is what the test is about: every primitive compressed, its POSITION
    accessor without a buffer view (so nothing but the decoder can give the data)."""
    plain, draco = (glb_json(p) for p in exported)
    assert "KHR_draco_mesh_compression" in draco.get("extensionsRequired", [])
    assert "KHR_draco_mesh_compression" not in plain.get("extensionsUsed", [])
    for mesh in draco["meshes"]:
        for prim in mesh["primitives"]:
            assert "KHR_draco_mesh_compression" in prim["extensions"]
            assert "bufferView" not in draco["accessors"][prim["attributes"]["POSITION"]]


def test_drape_reads_the_same_garment_and_body_from_both(exported, drape):
    seen = [json.loads(drape("inspect", "--json", p).stdout) for p in exported]
    for scene in seen:
        assert "KHR_draco_mesh_compression" not in scene["ignored_extensions"]
    (g0,), (g1,) = (s["garments"] for s in seen)
    # The 7 vertices split at the UV seam are welded again: 7 x 7 grid vertices.
    assert g0["vertices"] == g1["vertices"] == 49
    assert g0["triangles"] == g1["triangles"] == 72
    assert g0["panels"] == g1["panels"] == 2 and g0["seam_edges"] == g1["seam_edges"] == 6
    assert seen[0]["bodies"] == seen[1]["bodies"] == [
        {"frames": [FIRST, LAST], "name": "Body", "vertices": 8}]


def test_bakes_of_both_exports_agree(exported, drape, tmp_path):
    caches = []
    for path in exported:
        out = tmp_path / (path.stem + ".pc2")
        drape("simulate", path, "--frames", f"{BAKE_FRAMES[0]}..{BAKE_FRAMES[1]}",
              "--progress", "none", "-o", out)
        caches.append(read_pc2(out)[2])
    plain, draco = caches
    assert len(plain) == len(draco) == BAKE_FRAMES[1] - BAKE_FRAMES[0] + 1
    # One point per glTF vertex: the 49 grid vertices and the 7 split at the seam.
    assert len(plain[0]) == len(draco[0]) == 56
    # Draco may reorder vertices: pair them by rest position (0.1 m apart on the grid; the
    # two copies of a seam vertex are welded, so either serves).
    pair = [min(range(56), key=lambda j: math.dist(p, plain[0][j])) for p in draco[0]]
    assert len(set(pair)) == 49, "every grid vertex is found"
    rest = max(math.dist(p, plain[0][j]) for p, j in zip(draco[0], pair))
    # Half a step along each axis, plus float rounding.
    assert rest <= 0.5 * math.sqrt(3) * GARMENT_STEP_M + 1e-6, f"rest moved {rest * 1e6:.1f} µm"
    fell = max(abs(a[1] - b[1]) for a, b in zip(plain[0], plain[-1]))
    assert fell > 0.1, "the garment falls onto the body"
    worst = max(math.dist(fd[i], fp[j]) for fp, fd in zip(plain, draco)
                for i, j in enumerate(pair))
    print(f"largest plain/Draco cache distance: {worst * 1e3:.3f} mm; rest {rest * 1e6:.1f} µm")
    assert worst < BAKES_AGREE_M, f"the bakes differ by up to {worst * 1e3:.2f} mm"


if __name__ == "__main__":
    folder = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "draco"
    folder.mkdir(exist_ok=True)
    for p in write_scene(folder):
        print(f"wrote {p}")
