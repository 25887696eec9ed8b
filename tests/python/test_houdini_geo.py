"""Houdini .geo sequences parsed back by a reader written from the JSON geometry format
as Houdini saves it (readers.read_houdini_geo), issue 5."""
import json

from readers import cache_points_at_rest, read_gltf_mesh, read_houdini_geo, read_pc2


def test_geo_sequence_holds_every_frame_with_houdini_winding_and_vertex_uvs(
    drape, fixture, tmp_path
):
    scene = fixture("sheet_seam.gltf")
    drape("simulate", scene, "--frames", "2..6", "-o", tmp_path / "c.$F4.geo",
          "--progress", "none")
    drape("simulate", scene, "--frames", "2..6", "-o", tmp_path / "c.pc2", "--progress", "none")
    pc2 = read_pc2(tmp_path / "c.pc2")[2]
    src = read_gltf_mesh(scene)
    indices, uvs = src["indices"], src["uvs"]
    points = [src["point_of_vertex"][v] for v in indices]
    source_triangles = [points[k:k + 3] for k in range(0, len(points), 3)]
    assert sorted(p.name for p in tmp_path.glob("c.*.geo")) == [
        f"c.{f:04d}.geo" for f in range(2, 7)
    ]
    for k, f in enumerate(range(2, 7)):
        geo = read_houdini_geo(tmp_path / f"c.{f:04d}.geo")
        assert geo["points"] == pc2[k], f"frame {f}: P equals the PC2 sample"
        # Houdini winds front faces the other way round: each polygon reversed.
        assert [poly[::-1] for poly in geo["polygons"]] == source_triangles
        # Vertex uv (u, v, 0) travels with its corner.
        flat_uv = [uv for corner_uvs in geo["vertex_uv"] for uv in corner_uvs[::-1]]
        assert flat_uv == [(*uvs[v], 0) for v in indices]
    assert read_houdini_geo(tmp_path / "c.0002.geo")["points"] == cache_points_at_rest(src)


def test_reader_understands_houdinis_paged_storage(tmp_path):
    """The reader is checked on the paged layout Houdini writes by default (rawpagedata with
    a constant page), so its agreement with drape's files is not a tautology."""
    geo = [
        "fileversion", "20.5.278", "hasindex", False,
        "pointcount", 3, "vertexcount", 3, "primitivecount", 1,
        "topology", ["pointref", ["indices", [0, 2, 1]]],
        "attributes", [
            "pointattributes", [[
                ["scope", "public", "type", "numeric", "name", "P",
                 "options", {"type": {"type": "string", "value": "point"}}],
                ["size", 3, "storage", "fpreal32",
                 "values", ["size", 3, "storage", "fpreal32", "packing", [2, 1],
                            "pagesize", 2, "constantpageflags", [[False, False], [True, False]],
                            "rawpagedata", [0, 1, 2, 3, 9, 4, 5, 6]]],
            ]],
        ],
        "primitives", [[["type", "Poly"], ["vertex", [0, 1, 2], "closed", True]]],
    ]
    path = tmp_path / "paged.geo"
    path.write_text(json.dumps(geo))
    got = read_houdini_geo(path)
    assert got["points"] == [(0, 1, 9), (2, 3, 9), (4, 5, 6)]
    assert got["polygons"] == [[0, 2, 1]]
    assert got["vertex_uv"] is None
