"""Readers for the files drape writes and reads, written from each format's description
independently of drape's Rust code: PC2, MDD, glTF (embedded buffers) and Houdini's JSON
`.geo` as Houdini itself saves it."""
import base64
import json
import struct


def read_pc2(path):
    """(start frame, sampling, [frame][point] -> (x, y, z)) of a PC2 file."""
    data = open(path, "rb").read()
    assert data[:12] == b"POINTCACHE2\0", f"{path}: no PC2 signature"
    version, points, start, sampling, samples = struct.unpack_from("<iiffi", data, 12)
    assert version == 1
    assert len(data) >= 32 + samples * points * 12, f"{path}: shorter than its header"
    flat = struct.unpack_from(f"<{samples * points * 3}f", data, 32)
    return start, sampling, _frames(flat, samples, points)


def read_mdd(path):
    """([time per frame], [frame][point] -> (x, y, z)) of a big-endian MDD file."""
    data = open(path, "rb").read()
    frames, points = struct.unpack_from(">ii", data, 0)
    times = list(struct.unpack_from(f">{frames}f", data, 8))
    offset = 8 + 4 * frames
    assert len(data) >= offset + frames * points * 12, f"{path}: shorter than its header"
    flat = struct.unpack_from(f">{frames * points * 3}f", data, offset)
    return times, _frames(flat, frames, points)


def _frames(flat, frames, points):
    return [
        [tuple(flat[(f * points + p) * 3:(f * points + p) * 3 + 3]) for p in range(points)]
        for f in range(frames)
    ]


def read_gltf_mesh(path, mesh=0):
    """{positions, uvs, indices, point_of_vertex} of mesh `mesh`'s first primitive of a
    .gltf with embedded (data URI) buffers. point_of_vertex maps each glTF vertex to its
    cache point: its _DRAPE_INDEX if the mesh has one (SPEC "Outputs"), else itself."""
    doc = json.load(open(path))
    buffers = [base64.b64decode(b["uri"].split(",", 1)[1]) for b in doc["buffers"]]
    prim = doc["meshes"][mesh]["primitives"][0]

    def accessor(i):
        acc = doc["accessors"][i]
        view = doc["bufferViews"][acc["bufferView"]]
        width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3}[acc["type"]]
        code = {5126: "f", 5125: "I", 5123: "H"}[acc["componentType"]]
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        flat = struct.unpack_from(f"<{acc['count'] * width}{code}", buffers[view["buffer"]], start)
        if width == 1:
            return list(flat)
        return [tuple(flat[k:k + width]) for k in range(0, len(flat), width)]

    attrs = prim["attributes"]
    positions = accessor(attrs["POSITION"])
    if "_DRAPE_INDEX" in attrs:
        point_of_vertex = [int(k) for k in accessor(attrs["_DRAPE_INDEX"])]
    else:
        point_of_vertex = list(range(len(positions)))
    return {
        "positions": positions,
        "uvs": accessor(attrs["TEXCOORD_0"]),
        "indices": accessor(prim["indices"]),
        "point_of_vertex": point_of_vertex,
    }


def cache_points_at_rest(mesh):
    """The positions a cache's first sample holds: for point k, a vertex with index k."""
    points = {}
    for v, k in enumerate(mesh["point_of_vertex"]):
        points.setdefault(k, mesh["positions"][v])
    return [points[k] for k in range(max(points) + 1)]


# --- Houdini JSON geometry ----------------------------------------------------------------
#
# A .geo file is a JSON array of alternating keys and values ("fileversion", "pointcount",
# "topology", "attributes", "primitives", ...); nested objects use the same flat key/value
# arrays. Attribute values are stored either as a list of "tuples" or, in the paged form
# Houdini writes by default, as "rawpagedata" in pages of "pagesize" elements, split into
# "packing" sub-vectors, with pages flagged in "constantpageflags" holding one tuple only.
# Polygons come as "Polygon_run" blocks (consecutive vertices, counts in "nvertices" or
# run-length "nvertices_rle") or single "Poly" primitives with their "vertex" list; vertex
# v refers to point topology["pointref"]["indices"][v].


def _pairs(flat):
    """A flat [key, value, key, value, ...] array as a dict."""
    if isinstance(flat, dict):
        return flat
    return {flat[i]: flat[i + 1] for i in range(0, len(flat) - 1, 2)}


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _attribute_values(body, count):
    """Tuples of one attribute, from 'tuples' or paged 'rawpagedata' storage, rounded to
    f32 when the storage is fpreal32 (JSON text holds the shortest decimal)."""
    values = _pairs(_pairs(body)["values"])
    tuples = _stored_tuples(values, count)
    if values.get("storage") == "fpreal32":
        return [tuple(_f32(c) for c in t) for t in tuples]
    return tuples


def _stored_tuples(values, count):
    size = values["size"]
    if "tuples" in values:
        return [tuple(t) for t in values["tuples"]]
    if "arrays" in values:  # one array per component
        return list(zip(*values["arrays"]))
    raw = values["rawpagedata"]
    pagesize = values.get("pagesize", 1024)
    packing = values.get("packing", [size])
    constant = values.get("constantpageflags", [[] for _ in packing])
    out = [[0.0] * size for _ in range(count)]
    at = 0
    for page in range((count + pagesize - 1) // pagesize):
        lo = page * pagesize
        hi = min(count, lo + pagesize)
        first = 0
        for s, width in enumerate(packing):
            flags = constant[s] if s < len(constant) else []
            if page < len(flags) and flags[page]:
                value = raw[at:at + width]
                at += width
                for e in range(lo, hi):
                    out[e][first:first + width] = value
            else:
                for e in range(lo, hi):
                    out[e][first:first + width] = raw[at:at + width]
                    at += width
            first += width
    return [tuple(t) for t in out]


def read_houdini_geo(path):
    """{'points': [(x,y,z)], 'polygons': [[point, ...]] in the file's (Houdini) winding,
    'vertex_uv': [[(u, v, w), ...]] per polygon corner (None if absent), counts} of a
    JSON .geo file."""
    geo = _pairs(json.load(open(path)))
    npoints, nvertices = geo["pointcount"], geo["vertexcount"]
    pointref = _pairs(_pairs(geo["topology"])["pointref"])["indices"]
    assert len(pointref) == nvertices, "vertex count disagrees with the topology"
    attributes = _pairs(geo.get("attributes", []))
    found = {}
    for scope, count in (("pointattributes", npoints), ("vertexattributes", nvertices)):
        for head, body in attributes.get(scope, []):
            found[(scope, _pairs(head)["name"])] = _attribute_values(body, count)
    polygons = []  # vertex numbers per polygon
    for block in geo["primitives"]:
        kind = _pairs(block[0])["type"]
        body = block[1]
        if kind == "Polygon_run":
            fields = _pairs(body)
            at = fields.get("startvertex", 0)
            if "nvertices_rle" in fields:
                rle = fields["nvertices_rle"]
                sizes = [n for i in range(0, len(rle), 2) for n in [rle[i]] * rle[i + 1]]
            else:
                sizes = fields["nvertices"]
            assert len(sizes) == fields["nprimitives"]
            for n in sizes:
                polygons.append(list(range(at, at + n)))
                at += n
        elif kind == "Poly":
            for prim in body if isinstance(body[0], list) else [body]:
                polygons.append(list(_pairs(prim)["vertex"]))
        else:
            raise AssertionError(f"{path}: unexpected primitive type {kind}")
    assert len(polygons) == geo["primitivecount"]
    uv = found.get(("vertexattributes", "uv"))
    return {
        "points": found[("pointattributes", "P")],
        "polygons": [[pointref[v] for v in poly] for poly in polygons],
        "vertex_uv": None if uv is None else [[uv[v] for v in poly] for poly in polygons],
        "fileversion": geo["fileversion"],
    }
