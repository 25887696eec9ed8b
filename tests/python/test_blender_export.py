"""A mesh with a UV seam, exported by Blender's own exporters, reads as one welded garment.

Blender (bpy) builds a grid cut by a UV seam into two UV islands (flat panels in metres)
and tags the object with the custom property drape_role = "garment". Its glTF exporter
splits vertices at the seam; its USD exporter keeps one point per vertex (.usda text and
.usdc crate, Blender's default). `drape inspect --json` of every export must report what
the mesh in Blender has: vertex count (welded particles), triangle count, UV islands
(panels) and seam edges.

Skipped when bpy is not installed (scripts/python-deps.sh installs it into .venv/).
"""
import json

import pytest

bpy = pytest.importorskip("bpy")
import bmesh  # noqa: E402
from bpy_extras import mesh_utils  # noqa: E402

NX, NY = 8, 5  # quads across and down
SEAM_COLUMN = 3  # the seam runs down between quad columns 3 and 4
GAP = 0.25  # how far the right panel is moved in UV space (m)


def build_garment():
    """A 1.6 m x 1.0 m grid of quads with a UV seam cut down one column of edges."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    mesh = bpy.data.meshes.new("ShirtPanel")
    bm = bmesh.new()
    verts = [
        [bm.verts.new((0.2 * i, 0.0, 1.0 - 0.2 * j)) for i in range(NX + 1)]
        for j in range(NY + 1)
    ]
    for j in range(NY):
        for i in range(NX):
            bm.faces.new((verts[j][i], verts[j + 1][i], verts[j + 1][i + 1], verts[j][i + 1]))
    uv = bm.loops.layers.uv.new("UVMap")
    for face in bm.faces:
        right = face.calc_center_median().x > 0.2 * SEAM_COLUMN + 1e-6
        for loop in face.loops:
            x, _, z = loop.vert.co
            # The cloth hangs in the XZ plane; its flat pattern is (x, z), in metres.
            loop[uv].uv = (x + (GAP if right else 0.0), z)
    for edge in bm.edges:
        x0, x1 = edge.verts[0].co.x, edge.verts[1].co.x
        edge.seam = abs(x0 - 0.2 * SEAM_COLUMN) < 1e-6 and abs(x1 - 0.2 * SEAM_COLUMN) < 1e-6
    bm.to_mesh(mesh)
    bm.free()
    ob = bpy.data.objects.new("Shirt", mesh)
    ob["drape_role"] = "garment"
    bpy.context.scene.collection.objects.link(ob)
    return ob


def blender_counts(ob):
    """What the mesh in Blender says: vertices, triangles, UV islands, UV-seam edges."""
    mesh = ob.data
    uv = mesh.uv_layers.active.data
    triangles = sum(len(p.vertices) - 2 for p in mesh.polygons)
    islands = len(mesh_utils.mesh_linked_uv_islands(mesh))
    # An edge is a seam if its two faces disagree on the UV of either end point.
    corners = {}  # (face, vertex) -> uv
    for poly in mesh.polygons:
        for li in poly.loop_indices:
            corners[(poly.index, mesh.loops[li].vertex_index)] = tuple(uv[li].uv)
    faces_of_edge = {}
    for poly in mesh.polygons:
        for key in poly.edge_keys:
            faces_of_edge.setdefault(key, []).append(poly.index)
    seams = sum(
        1
        for (a, b), faces in faces_of_edge.items()
        if len(faces) == 2
        and any(corners[(faces[0], v)] != corners[(faces[1], v)] for v in (a, b))
    )
    marked = sum(1 for e in mesh.edges if e.use_seam)
    return {
        "vertices": len(mesh.vertices),
        "triangles": triangles,
        "panels": islands,
        "seam_edges": seams,
        "marked_seams": marked,
    }


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    out = tmp_path_factory.mktemp("blender_export")
    ob = build_garment()
    want = blender_counts(ob)
    files = {}
    files["gltf"] = out / "shirt.gltf"
    bpy.ops.export_scene.gltf(
        filepath=str(files["gltf"]),
        export_format="GLTF_SEPARATE",
        export_extras=True,
        export_texcoords=True,
        export_normals=True,
    )
    files["glb"] = out / "shirt.glb"
    bpy.ops.export_scene.gltf(filepath=str(files["glb"]), export_format="GLB", export_extras=True)
    for ext in ("usda", "usdc"):
        files[ext] = out / f"shirt.{ext}"
        bpy.ops.wm.usd_export(
            filepath=str(files[ext]),
            export_custom_properties=True,
            export_uvmaps=True,
            export_materials=False,
        )
    return want, files


def test_the_blender_mesh_is_what_the_test_means(exports):
    want, _ = exports
    assert want == {
        "vertices": (NX + 1) * (NY + 1),
        "triangles": 2 * NX * NY,
        "panels": 2,
        "seam_edges": NY,
        "marked_seams": NY,
    }


def test_gltf_splits_the_seam_vertices_and_usd_does_not(exports):
    """The premise of welding: Blender's glTF has more vertices than the mesh."""
    want, files = exports
    doc = json.loads(files["gltf"].read_text())
    prim = doc["meshes"][0]["primitives"][0]
    count = doc["accessors"][prim["attributes"]["POSITION"]]["count"]
    assert count == want["vertices"] + (NY + 1)  # the seam column is duplicated
    assert doc["nodes"][0]["extras"]["drape_role"] == "garment"
    pxr = pytest.importorskip("pxr")
    from pxr import Usd, UsdGeom

    for ext in ("usda", "usdc"):
        stage = Usd.Stage.Open(str(files[ext]))
        meshes = [UsdGeom.Mesh(p) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)]
        assert len(meshes) == 1
        assert len(meshes[0].GetPointsAttr().Get()) == want["vertices"]
    del pxr


@pytest.mark.parametrize("kind", ["gltf", "glb", "usda", "usdc"])
def test_drape_inspect_reports_the_blender_mesh(exports, drape, kind):
    want, files = exports
    report = json.loads(drape("inspect", files[kind], "--json").stdout)
    assert report["bodies"] == []
    (garment,) = report["garments"]
    assert garment["name"] == "Shirt"
    got = {k: garment[k] for k in ("vertices", "triangles", "panels", "seam_edges")}
    assert got == {k: want[k] for k in got}, kind
    assert garment["uv_problems"] == []
