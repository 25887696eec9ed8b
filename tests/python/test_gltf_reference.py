"""drape's glTF evaluation against an independent one (issue 4, "What must show").

pygltflib only parses the JSON here; everything else is written in this file from the
glTF 2.0 specification with numpy: accessors (strides, normalised integers, sparse),
node TRS and matrices, animation samplers (STEP, LINEAR with slerp, CUBICSPLINE with
tangents scaled by the key interval), morph targets (default, node and animated weights;
targets named key_<frame> are keyframes, not shapes), and linear blend skinning over
every JOINTS_n/WEIGHTS_n set with normalised weights (the skinned node's own transform
ignored). drape's side is `examples/dump_gltf_animation.rs`, which prints the world
position of every glTF vertex at the requested frames (time = frame / fps). They must
agree within 1e-5 m.

Needs numpy and pygltflib (skipped cleanly without them) and cargo to build the example
(or DRAPE_DUMP_GLTF pointing at a built one).
"""
import base64
import json
import os
import pathlib
import subprocess
import urllib.parse

import pytest

np = pytest.importorskip("numpy")
pygltflib = pytest.importorskip("pygltflib")

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
FPS = 24.0
# Keys are at frames 1, 13, 25, 37, 48 (the morph's STEP keys at 1, 13, 25, 37); sample
# on, between, before and after them.
FRAMES = ["0", "1", "4", "12.5", "13", "19", "25", "30.25", "37", "44", "48", "60"]
TOLERANCE = 1e-5

COMPONENT = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16,
             5125: np.uint32, 5126: np.float32}
NORMALISER = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}
COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
TRIANGLE_MODES = (None, 4)  # the fixtures use TRIANGLES only


@pytest.fixture(scope="module")
def dump():
    """dump(path) -> drape's evaluation of every mesh of `path` at FRAMES."""
    exe = os.environ.get("DRAPE_DUMP_GLTF")
    if not exe:
        subprocess.run(["cargo", "build", "--quiet", "--release", "--example",
                        "dump_gltf_animation"], cwd=ROOT, check=True, timeout=1800)
        exe = ROOT / "target" / "release" / "examples" / "dump_gltf_animation"

    def run(path):
        r = subprocess.run([str(exe), str(path), "--fps", str(FPS), *FRAMES],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    return run


def quat_matrix(q):
    """Rotation matrix of a quaternion (x, y, z, w), normalised first."""
    x, y, z, w = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def trs_matrix(t, r, s):
    m = np.eye(4)
    m[:3, :3] = quat_matrix(r) @ np.diag(s)
    m[:3, 3] = t
    return m


def slerp(a, b, s):
    """Shortest-arc spherical interpolation of unit quaternions (glTF 2.0 Appendix C)."""
    d = float(np.dot(a, b))
    if d < 0.0:
        b, d = -b, -d
    if d > 1.0 - 1e-13:
        q = (1 - s) * a + s * b
        return q / np.linalg.norm(q)
    angle = np.arccos(d)
    return (np.sin((1 - s) * angle) * a + np.sin(s * angle) * b) / np.sin(angle)


def sample(times, values, interpolation, t, width, rotation):
    n = len(times)
    if interpolation == "CUBICSPLINE":
        keys = values.reshape(n, 3, width)
        in_tan, value, out_tan = keys[:, 0], keys[:, 1], keys[:, 2]
    else:
        value = values.reshape(n, width)
    if t <= times[0]:
        return value[0].copy()
    if t >= times[-1]:
        return value[-1].copy()
    k = int(np.searchsorted(times, t, side="right")) - 1
    td = times[k + 1] - times[k]
    s = (t - times[k]) / td
    if interpolation == "STEP":
        return value[k].copy()
    if interpolation == "LINEAR":
        if rotation:
            return slerp(value[k], value[k + 1], s)
        return (1 - s) * value[k] + s * value[k + 1]
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
    v = h00 * value[k] + h10 * td * out_tan[k] + h01 * value[k + 1] + h11 * td * in_tan[k + 1]
    return v / np.linalg.norm(v) if rotation else v


def attribute(attrs, name):
    if isinstance(attrs, dict):
        return attrs.get(name)
    return getattr(attrs, name, None)


class Reference:
    """An independent evaluation of a glTF file."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.g = pygltflib.GLTF2().load(str(path))
        self.buffers = [self._buffer(b) for b in self.g.buffers]
        self.parent = {}
        for i, node in enumerate(self.g.nodes):
            for c in node.children or []:
                self.parent[c] = i

    def _buffer(self, b):
        if b.uri is None:
            return self.g.binary_blob()
        if b.uri.startswith("data:"):
            return base64.b64decode(b.uri.split(",", 1)[1])
        return (self.path.parent / urllib.parse.unquote(b.uri)).read_bytes()

    def _read_view(self, view_index, offset, dtype, count, n):
        view = self.g.bufferViews[view_index]
        data = self.buffers[view.buffer]
        item = np.dtype(dtype).itemsize * n
        stride = view.byteStride or item
        start = (view.byteOffset or 0) + (offset or 0)
        rows = [np.frombuffer(data, dtype=dtype, count=n, offset=start + k * stride)
                for k in range(count)]
        return np.array(rows, dtype=np.float64).reshape(count, n)

    def accessor(self, index):
        a = self.g.accessors[index]
        dtype, n = COMPONENT[a.componentType], COMPONENTS[a.type]
        if a.bufferView is not None:
            out = self._read_view(a.bufferView, a.byteOffset, dtype, a.count, n)
        else:
            out = np.zeros((a.count, n))
        if a.sparse is not None:
            sp = a.sparse
            idx = self._read_view(sp.indices.bufferView, sp.indices.byteOffset,
                                  COMPONENT[sp.indices.componentType], sp.count, 1)
            out[idx[:, 0].astype(int)] = self._read_view(
                sp.values.bufferView, sp.values.byteOffset, dtype, sp.count, n)
        if a.normalized:
            out = np.maximum(out / NORMALISER[a.componentType], -1.0)
        return out

    def pose(self, t):
        """World matrices of all nodes and animated morph weights at time t."""
        trs = {}
        weights = {}
        for anim in self.g.animations:
            for ch in anim.channels:
                smp = anim.samplers[ch.sampler]
                times = self.accessor(smp.input)[:, 0]
                values = self.accessor(smp.output).ravel()
                path = ch.target.path
                width = {"translation": 3, "rotation": 4, "scale": 3}.get(path)
                if width is None:  # weights: one per morph target
                    per_key = 3 if smp.interpolation == "CUBICSPLINE" else 1
                    width = len(values) // (len(times) * per_key)
                v = sample(times, values, smp.interpolation, t, width, path == "rotation")
                if path == "weights":
                    weights[ch.target.node] = v
                else:
                    trs.setdefault(ch.target.node, {})[path] = v
        local = []
        for i, node in enumerate(self.g.nodes):
            if node.matrix:
                local.append(np.array(node.matrix, dtype=np.float64).reshape(4, 4).T)
                continue
            o = trs.get(i, {})
            t_ = o.get("translation", node.translation or [0, 0, 0])
            r_ = o.get("rotation", node.rotation or [0, 0, 0, 1])
            s_ = o.get("scale", node.scale or [1, 1, 1])
            local.append(trs_matrix(np.array(t_, float), np.array(r_, float), np.array(s_, float)))
        world = {}

        def world_of(i):
            if i not in world:
                p = self.parent.get(i)
                world[i] = (world_of(p) if p is not None else np.eye(4)) @ local[i]
            return world[i]

        return [world_of(i) for i in range(len(self.g.nodes))], weights

    def mesh_positions(self, node_index, t):
        node = self.g.nodes[node_index]
        mesh = self.g.meshes[node.mesh]
        world, anim_weights = self.pose(t)
        names = (mesh.extras or {}).get("targetNames", [])
        default = anim_weights.get(node_index)
        if default is None:
            default = node.weights if getattr(node, "weights", None) else (mesh.weights or [])
        skin = self.g.skins[node.skin] if node.skin is not None else None
        out = []
        for prim in mesh.primitives:
            if prim.mode not in TRIANGLE_MODES:
                continue
            p = self.accessor(attribute(prim.attributes, "POSITION"))
            for k, target in enumerate(prim.targets or []):
                name = names[k] if k < len(names) else ""
                is_key = name.startswith("key_") and name[4:].lstrip("-").isdigit()
                w = default[k] if k < len(default) else 0.0
                delta = attribute(target, "POSITION")
                if not is_key and w != 0.0 and delta is not None:
                    p = p + w * self.accessor(delta)
            homog = np.hstack([p, np.ones((len(p), 1))])
            if skin is not None and attribute(prim.attributes, "JOINTS_0") is not None:
                ibm = (self.accessor(skin.inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
                       if skin.inverseBindMatrices is not None
                       else np.tile(np.eye(4), (len(skin.joints), 1, 1)))
                joint_mats = np.array([world[j] @ ibm[k] for k, j in enumerate(skin.joints)])
                blend = np.zeros((len(p), 4, 4))
                total = np.zeros(len(p))
                n = 0
                while attribute(prim.attributes, f"JOINTS_{n}") is not None:
                    joints = self.accessor(attribute(prim.attributes, f"JOINTS_{n}")).astype(int)
                    wts = self.accessor(attribute(prim.attributes, f"WEIGHTS_{n}"))
                    for c in range(4):
                        blend += wts[:, c, None, None] * joint_mats[joints[:, c]]
                        total += wts[:, c]
                    n += 1
                blend /= total[:, None, None]
                out.append(np.einsum("vij,vj->vi", blend, homog)[:, :3])
            else:
                out.append((homog @ world[node_index].T)[:, :3])
        return np.vstack(out)


@pytest.mark.parametrize("name", [
    "character.gltf",
    "character_cubic.glb",
    "skirt_on_character.gltf",
    "tshirt_on_character.gltf",
    "skirt_keys.gltf",
])
def test_drape_evaluates_gltf_animation_like_the_reference(dump, name):
    path = FIXTURES / name
    ref = Reference(path)
    drape = dump(path)
    assert drape["meshes"], "drape found no meshes"
    worst = 0.0
    for mesh in drape["meshes"]:
        for frame, positions in mesh["frames"].items():
            got = np.array(positions)
            want = ref.mesh_positions(mesh["node"], float(frame) / FPS)
            assert got.shape == want.shape, (mesh["name"], frame)
            worst = max(worst, float(np.abs(got - want).max()))
    assert worst < TOLERANCE, f"{name}: max deviation {worst:.3g} m"


def test_the_character_moves_and_breathes(dump):
    """Guards the comparison above against two static evaluations agreeing."""
    for name in ("character.gltf", "character_cubic.glb"):
        body = next(m for m in dump(FIXTURES / name)["meshes"] if m["name"] == "Body")
        assert body["skinned"] and body["animated"]
        first, middle = np.array(body["frames"]["1"]), np.array(body["frames"]["25"])
        assert np.abs(middle - first).max() > 0.3, name
    cubic = Reference(FIXTURES / "character_cubic.glb")
    # Same pose with and without the STEP morph weight (1 at frame 13, 0.5 at 25).
    with_breath = cubic.mesh_positions(4, 13.0 / FPS + 1e-6)
    cubic.g.animations[0].channels = [c for c in cubic.g.animations[0].channels
                                      if c.target.path != "weights"]
    without = cubic.mesh_positions(4, 13.0 / FPS + 1e-6)
    assert abs(np.linalg.norm(with_breath - without, axis=1).max() - 0.03) < 1e-6
