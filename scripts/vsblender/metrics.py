"""Quality figures of a simulated garment, the same definitions for drape and Blender.

Both engines' results are point caches: `frames[f, i]` is particle i's position (m, world
space, Z up) at the f-th frame, frame 0 being the garment as given (its rest shape).

```text
stretch     = max over frames f and mesh edges (i, j) of  |x_i(f) − x_j(f)| / L_ij − 1,
              L_ij = |x_i(0) − x_j(0)|  (rest length: the initial, flat / as-modelled state)
penetration = max over frames f and particles i of  max(0, −d(x_i(f), body(f))),
              d = signed distance to the body's surface at frame f (negative inside:
              the nearest surface point's face normal points away from x_i)
```
Stretch is a fraction (0.01 = 1 %); penetration is in metres. Only numpy and Blender's
`mathutils` (for the BVH of the body) are used, so the figures can be checked on hand-made
files without running either simulator.
"""
import json
import pathlib
import struct

import numpy as np

PC2_HEADER = struct.Struct("<12siiffi")


def read_pc2(path):
    """(start frame, frames[samples, points, 3] as float64) of a PC2 file."""
    data = pathlib.Path(path).read_bytes()
    if len(data) < PC2_HEADER.size:
        raise ValueError(f"{path}: shorter than a PC2 header")
    magic, version, points, start, _sampling, samples = PC2_HEADER.unpack_from(data, 0)
    if magic != b"POINTCACHE2\0" or version != 1:
        raise ValueError(f"{path}: not a PC2 (version 1) file")
    count = samples * points * 3
    if len(data) < PC2_HEADER.size + 4 * count:
        raise ValueError(f"{path}: shorter than its header says ({samples} x {points})")
    flat = np.frombuffer(data, dtype="<f4", count=count, offset=PC2_HEADER.size)
    return start, flat.reshape(samples, points, 3).astype(np.float64)


def write_pc2(path, frames, start=1.0):
    """Writes frames[samples, points, 3] as a PC2 file starting at frame `start`."""
    frames = np.asarray(frames, dtype="<f4")
    samples, points, _ = frames.shape
    with open(path, "wb") as out:
        out.write(PC2_HEADER.pack(b"POINTCACHE2\0", 1, points, float(start), 1.0, samples))
        out.write(frames.tobytes())


def edges_of_faces(faces):
    """Sorted unique edges (E, 2) of polygons given as vertex index lists."""
    pairs = set()
    for face in faces:
        n = len(face)
        for k in range(n):
            a, b = int(face[k]), int(face[(k + 1) % n])
            if a != b:
                pairs.add((min(a, b), max(a, b)))
    return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


def max_stretch(frames, edges):
    """Largest len/rest len − 1 over every frame and edge; rest lengths from frames[0].
    Edges of zero rest length (welded duplicates of a seam) are skipped."""
    frames = np.asarray(frames, dtype=np.float64)
    edges = np.asarray(edges, dtype=np.int64)
    rest = np.linalg.norm(frames[0, edges[:, 0]] - frames[0, edges[:, 1]], axis=1)
    keep = rest > 1e-9
    edges, rest = edges[keep], rest[keep]
    if len(edges) == 0:
        raise ValueError("no edge of positive rest length")
    worst = -np.inf
    for x in frames:
        length = np.linalg.norm(x[edges[:, 0]] - x[edges[:, 1]], axis=1)
        worst = max(worst, float(np.max(length / rest - 1.0)))
    return worst


class Body:
    """A body's surface at one frame (world-space vertices and polygons) for depth queries."""

    def __init__(self, vertices, faces):
        from mathutils.bvhtree import BVHTree

        self.vertices = np.asarray(vertices, dtype=np.float64)
        self.faces = [list(map(int, f)) for f in faces]
        self.tree = BVHTree.FromPolygons(self.vertices.tolist(), self.faces, all_triangles=False)
        self.low = self.vertices.min(axis=0)
        self.high = self.vertices.max(axis=0)

    def depth(self, points):
        """Deepest penetration (m, ≥ 0) of `points` [N, 3] below the surface."""
        from mathutils import Vector

        points = np.asarray(points, dtype=np.float64)
        inside_box = np.all((points >= self.low) & (points <= self.high), axis=1)
        worst = 0.0
        for p in points[inside_box]:
            hit = self.tree.find_nearest(Vector(p))
            if hit[0] is None:
                continue
            location, normal, _index, distance = hit
            if (Vector(p) - location).dot(normal) < 0.0:
                worst = max(worst, float(distance))
        return worst


def max_penetration(frames, bodies):
    """Deepest penetration over frames: `bodies[f]` is the body at frame f (one Body for
    all frames if the body is static)."""
    worst = 0.0
    for f, x in enumerate(frames):
        body = bodies if isinstance(bodies, Body) else bodies[f]
        worst = max(worst, body.depth(x))
    return worst


def gltf_mesh(path, node_name):
    """(positions [V, 3], triangles [T, 3]) of the first primitive of node `node_name`'s
    mesh in a .gltf with embedded (data URI) buffers, in the file's order and axes."""
    import base64

    doc = json.loads(pathlib.Path(path).read_text())
    nodes = [n for n in doc["nodes"] if n.get("name") == node_name and "mesh" in n]
    if not nodes:
        raise ValueError(f"{path}: no mesh node named {node_name!r}")
    prim = doc["meshes"][nodes[0]["mesh"]]["primitives"][0]
    buffers = [base64.b64decode(b["uri"].split(",", 1)[1]) for b in doc["buffers"]]

    def accessor(index, width):
        acc = doc["accessors"][index]
        view = doc["bufferViews"][acc["bufferView"]]
        dtype = {5126: "<f4", 5125: "<u4", 5123: "<u2", 5121: "u1"}[acc["componentType"]]
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        packed = width * np.dtype(dtype).itemsize
        if view.get("byteStride", packed) != packed:
            raise ValueError(f"{path}: interleaved buffer views are not read here")
        flat = np.frombuffer(buffers[view["buffer"]], dtype=dtype,
                             count=acc["count"] * width, offset=start)
        return flat.reshape(-1, width)

    positions = accessor(prim["attributes"]["POSITION"], 3).astype(np.float64)
    triangles = accessor(prim["indices"], 1).reshape(-1, 3).astype(np.int64)
    return positions, triangles


def y_up_to_z_up(points):
    """Blender's glTF axis conversion (and drape's `--up z`): (x, y, z) → (x, −z, y)."""
    points = np.asarray(points, dtype=np.float64)
    return np.stack([points[..., 0], -points[..., 2], points[..., 1]], axis=-1)
