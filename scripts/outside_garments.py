"""Garments for the outside characters of ../shared/assets, built in Blender as an artist
would, and the figures of their bakes (docs/benchmarks.md, "Outside characters").

Usage (Blender 4.5 as a Python module: the Python of .venv/, scripts/python-deps.sh 4.5):

    python scripts/outside_garments.py build   [--assets DIR] [--out DIR] [--scenes NAME...]
    python scripts/outside_garments.py measure [--out DIR]

`build` imports each character with Blender's glTF importer, plays its animation from its
first frame, measures its hips there (the bounding box of the vertices its hips bone moves
most: the first bone of the rig with several children, where legs and spine meet), builds a
garment around them and exports character and garment with Blender's glTF exporter
(animation sampled over the character's range) to OUT/<scene>.glb, through the drape
extension's `export_gltf` (the garment marked `drape_role = "garment"`, its `pin` attribute
written as `_PIN`, `_DRAPE_INDEX` mapping the vertices split at the seam back to Blender's).
It writes OUT/scenes.json (frames, fps, garment edges) for `measure` and scripts/outside-bench.sh.

Scenes:
  figure_skirt        RiggedFigure (Cesium, CC-BY 4.0) in an A-line skirt (hem radius 1.8 x
                      waist): a cone panel whose UVs are its flat development in metres (one
                      panel, one seam at the back), bound to the hips bone, the waist ring
                      pinned; no edge of the figure crosses the cloth at the first frame.
  figure_skirt_hands  The same skirt cut full (hem radius 3 x waist): the hanging hands pass
                      through the cloth at the first frame (issue 50's case).
  figure_skirt_unbound
                      The A-line skirt not bound to the rig: its pinned waist attaches to the
                      nearest body surface at the first frame (docs/reference.md, "Pins"),
                      which for part of the ring is a hanging hand.
  fox_cape            Fox (Walk clip) under a blanket over its back: an open cylinder of 240
                      degrees around its hips and back, pinned along the spine, in the fox's
                      own centimetre-sized units (the file says metres: drape sees a fox 165
                      "metres" long).

For each garment the script counts the character's vertices inside the garment's cone and
the character's edges that cross the cloth at the first frame (the body through the garment).

`measure` reads, for each scene of OUT/scenes.json, the run report OUT/<scene>.report.json
and the cache OUT/<scene>.pc2 (or the partial cache of a failed bake) that
scripts/outside-bench.sh leaves, and prints frames baked, exit code, ms/frame, steps/frame,
the worst edge stretch (edge length over its length in the garment as built, which is its
UV panel) and the deepest penetration of a garment particle into the body (its distance to
the body's surface at a frame where it lies inside the body, `depth`; in mm of the size the
character was modelled at).
"""
import argparse
import json
import math
import pathlib
import sys

import bpy
import bmesh  # noqa: I001 (bmesh and mathutils come with bpy)
from mathutils import Matrix, Vector
from mathutils.bvhtree import BVHTree

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "plugin-scripts" / "blender"))

import drape  # noqa: E402 (the Blender extension: its glTF export)
from vsblender import metrics  # noqa: E402

#: Skirt: ease of the waist ring over the hips' half-diagonal, length over waist height.
EASE = 1.05
LENGTH_OF_WAIST_HEIGHT = 0.5
#: Hem radius over waist radius: a classic A-line (clear of the figure's hanging hands) and a
#: full skirt (47 degrees from the vertical on the figure), whose cloth the hands cross.
A_LINE, FULL = 1.8, 3.0
#: Skirt mesh: rings from waist to hem, vertices around (816 vertices).
SKIRT_GRID = (17, 48)
#: Fox blanket: arc (degrees) around the body axis, rings along it, columns around it.
CAPE_ARC, CAPE_GRID = 240.0, (22, 34)


def load_character(path, action=None):
    """Imports the glTF `path` into an empty scene; returns (body mesh, rig). The scene
    plays the rig's action (`action` if given) over its frame range."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(path))
    bodies = [o for o in bpy.context.scene.objects
              if o.type == "MESH" and drape.export.deforming_armatures(o)]
    if len(bodies) != 1:
        raise SystemExit(f"{path}: expected one skinned mesh, found {[o.name for o in bodies]}")
    body = bodies[0]
    rig = drape.export.deforming_armatures(body)[0]
    if action is not None:
        rig.animation_data.action = bpy.data.actions[action]
    first, last = rig.animation_data.action.frame_range
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = int(first), int(math.ceil(last))
    scene.frame_set(scene.frame_start)
    return body, rig


def world_mesh(ob):
    """(world-space vertices, edges, polygons) of `ob` evaluated at the current frame."""
    evaluated = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    points = [ob.matrix_world @ v.co for v in mesh.vertices]
    edges = [tuple(e.vertices) for e in mesh.edges]
    faces = [list(p.vertices) for p in mesh.polygons]
    evaluated.to_mesh_clear()
    return points, edges, faces


def hips_bone(rig):
    """The first bone from the root with several children: where legs and spine meet."""
    bone = next(b for b in rig.data.bones if b.parent is None)
    while len(bone.children) == 1:
        bone = bone.children[0]
    return bone.name


def hips_box(body, rig):
    """(low, high) corners of the vertices whose strongest bone is the hips bone."""
    group = body.vertex_groups[hips_bone(rig)].index
    points = world_mesh(body)[0]
    hips = [points[v.index] for v in body.data.vertices
            if v.groups and max(v.groups, key=lambda g: g.weight).group == group]
    low = Vector([min(p[i] for p in hips) for i in range(3)])
    high = Vector([max(p[i] for p in hips) for i in range(3)])
    return low, high


class Cone:
    """A frustum panel around the local −Z axis of `frame` (a world matrix): radius `r0` at
    the local origin, `r1` at local z = −length, over `arc` radians from local +X (the seam
    when the arc is whole, else centred on +X)."""

    def __init__(self, frame, r0, r1, length, arc=2 * math.pi):
        self.frame, self.r0, self.r1, self.length, self.arc = frame, r0, r1, length, arc
        self.whole = arc >= 2 * math.pi - 1e-9
        self.start = 0.0 if self.whole else -arc / 2
        self.slant = math.hypot(length, r1 - r0)

    def radius(self, t):
        return self.r0 + t * (self.r1 - self.r0)

    def point(self, t, phi):
        r = self.radius(t)
        return self.frame @ Vector((r * math.cos(phi), r * math.sin(phi), -t * self.length))

    def uv(self, t, phi):
        """The flat development, in the file's units: an annular sector around the apex (a rectangle
        for a cylinder), arc length and slant length kept."""
        k = (self.r1 - self.r0) / self.slant
        a = phi - self.start
        if abs(k) < 1e-9:
            return (self.r0 * a, -t * self.slant)
        s = self.r0 / k + t * self.slant
        return (s * math.sin(k * a), -s * math.cos(k * a))

    def signed_gap(self, p):
        """(t, phi, radial distance − cone radius) of world point p in the cone's frame."""
        q = self.frame.inverted() @ p
        phi = math.atan2(q.y, q.x)
        if self.whole:
            phi %= 2 * math.pi
        return -q.z / self.length, phi, math.hypot(q.x, q.y) - self.radius(-q.z / self.length)

    def covers(self, t, phi):
        return 0.0 <= t <= 1.0 and (self.whole or abs(phi) <= self.arc / 2)

    def build(self, name, rings, around, pinned):
        """The garment object: `rings` × `around` quads, UVs `uv`, seam edges marked,
        point attribute `pin` = 1 where `pinned(ring, column)`, `drape_role` set."""
        columns = around if self.whole else around + 1
        step = self.arc / around
        bm = bmesh.new()
        verts = [[bm.verts.new(self.point(j / (rings - 1), self.start + i * step))
                  for i in range(columns)] for j in range(rings)]
        uv = bm.loops.layers.uv.new("UVMap")
        for j in range(rings - 1):
            for i in range(around):
                corners = [(i, j), (i, j + 1), (i + 1, j + 1), (i + 1, j)]
                face = bm.faces.new([verts[b][a % columns] for a, b in corners])
                for loop, (a, b) in zip(face.loops, corners):
                    loop[uv].uv = self.uv(b / (rings - 1), self.start + a * step)
        if self.whole:
            for j in range(rings - 1):
                bm.edges.get((verts[j][0], verts[j + 1][0])).seam = True
        mesh = bpy.data.meshes.new(name)
        bm.to_mesh(mesh)
        bm.free()
        pins = [1.0 if pinned(v // columns, v % columns) else 0.0
                for v in range(len(mesh.vertices))]
        mesh.attributes.new("pin", "FLOAT", "POINT").data.foreach_set("value", pins)
        ob = bpy.data.objects.new(name, mesh)
        ob["drape_role"] = "garment"
        bpy.context.scene.collection.objects.link(ob)
        return ob


def crossings(cone, body, samples=16):
    """(character vertices inside the cone, character edges that cross its cloth, character
    vertices) at the current frame: an edge crosses where the radial gap changes sign between two samples
    along it that both lie over the panel."""
    points, edges, _ = world_mesh(body)
    gaps = [cone.signed_gap(p) for p in points]
    inside = sum(1 for t, phi, gap in gaps if cone.covers(t, phi) and gap < 0)
    crossing = 0
    for a, b in edges:
        gaps = [cone.signed_gap(points[a].lerp(points[b], s / samples)) for s in range(samples + 1)]
        if any(cone.covers(*g0[:2]) and cone.covers(*g1[:2]) and (g0[2] < 0) != (g1[2] < 0)
               for g0, g1 in zip(gaps, gaps[1:])):
            crossing += 1
    return inside, crossing, len(points)


def figure_skirt(body, rig, hands=False, bound=True):
    """The figure's skirt: waist ring at the top of the hips, around their half-diagonal
    with EASE, knee length (LENGTH_OF_WAIST_HEIGHT); flared as an A-line, or as a full
    skirt that the hands pass through (`hands`; checks that they do, or do not); bound to
    the hips bone unless not `bound`."""
    low, high = hips_box(body, rig)
    waist = Vector(((low.x + high.x) / 2, (low.y + high.y) / 2, high.z))
    r0 = EASE * math.hypot(high.x - low.x, high.y - low.y) / 2
    length = LENGTH_OF_WAIST_HEIGHT * (waist.z - min(p.z for p in world_mesh(body)[0]))
    # Local +X (the seam) toward the back (+Y, the figure faces −Y), local −Z down.
    frame = Matrix.Translation(waist) @ Matrix.Rotation(math.pi / 2, 4, "Z")
    cone = Cone(frame, r0, (FULL if hands else A_LINE) * r0, length)
    if (crossings(cone, body)[1] > 0) != hands:
        raise SystemExit(f"the {'full' if hands else 'A-line'} skirt does not "
                         f"{'meet' if hands else 'clear'} the figure's hands at the first frame")
    skirt = cone.build("Skirt", *SKIRT_GRID, pinned=lambda ring, column: ring == 0)
    if not bound:
        return cone, skirt
    # Bound to the hips bone by an Armature modifier: the pinned waist follows the hips
    # (drape pins follow the garment's own skin) rather than the nearest body surface at the
    # first frame, which for part of the ring is the hanging hand. Not parented to the rig:
    # the exporter would then write the skirt under the rig's Y-up rotation, and the cache
    # (object-local, converted by --up z) would come back turned by it. The exporter warns
    # "Armature must be the parent of skinned mesh" and writes the skin all the same.
    skirt.vertex_groups.new(name=hips_bone(rig)).add(range(len(skirt.data.vertices)), 1.0,
                                                     "REPLACE")
    skirt.modifiers.new("Armature", "ARMATURE").object = rig
    return cone, skirt


def fox_cape(body, rig):
    """The fox's blanket: an open cylinder along the body (+Y, head toward −Y) from the
    back of the hips forward over twice the hips' length, around the hips' cross-section
    with EASE, pinned along the spine (its middle column)."""
    low, high = hips_box(body, rig)
    centre = Vector(((low.x + high.x) / 2, high.y, (low.z + high.z) / 2))
    radius = EASE * math.hypot(high.x - low.x, high.z - low.z) / 2
    length = 2 * (high.y - low.y)
    # Local −Z toward the head (−Y), local +X up: the spine at the middle of the arc.
    frame = Matrix.Translation(centre) @ Matrix(((0, 1, 0), (0, 0, 1), (1, 0, 0))).to_4x4()
    cone = Cone(frame, radius, radius, length, math.radians(CAPE_ARC))
    middle = CAPE_GRID[1] // 2
    return cone, cone.build("Blanket", *CAPE_GRID, pinned=lambda ring, column: column == middle)


#: scene name -> (asset file, animation clip, garment builder(body, rig), metres per file
#: unit as the character was modelled: ../shared/assets/README.md).
SCENES = {
    "figure_skirt": ("RiggedFigure.glb", None, figure_skirt, 1.0),
    "figure_skirt_hands": ("RiggedFigure.glb", None,
                           lambda b, r: figure_skirt(b, r, hands=True), 1.0),
    "figure_skirt_unbound": ("RiggedFigure.glb", None,
                             lambda b, r: figure_skirt(b, r, bound=False), 1.0),
    "fox_cape": ("Fox/Fox.gltf", "Walk", fox_cape, 0.01),
}


def build_scene(name, assets, out):
    """Builds scene `name` in the current Blender session and exports OUT/<name>.glb;
    returns its entry of scenes.json. The garment and the body stay in the scene."""
    asset, action, make, unit = SCENES[name]
    body, rig = load_character(pathlib.Path(assets) / asset, action)
    scene = bpy.context.scene
    cone, garment = make(body, rig)
    inside, crossing, total = crossings(cone, body)
    path = pathlib.Path(out) / f"{name}.glb"
    drape.export_gltf(bpy.context, garment, [body], str(path))
    mesh = garment.data
    entry = {
        "glb": path.name, "body": body.name, "garment": garment.name, "metres_per_unit": unit,
        "frames": [scene.frame_start, scene.frame_end], "fps": scene.render.fps,
        "body_vertices": total, "garment_vertices": len(mesh.vertices),
        "pinned": sum(1 for a in mesh.attributes["pin"].data if a.value >= 0.5),
        "radii": [cone.r0, cone.r1], "length": cone.length, "arc_deg": math.degrees(cone.arc),
        "inside": inside, "crossing_edges": crossing,
        "edges": [list(e.vertices) for e in mesh.edges],
    }
    first, last = entry["frames"]
    print(f"{name}: {asset} ({total} Blender vertices, frames {first}..{last}"
          f" at {entry['fps']} fps) + {garment.name}: {entry['garment_vertices']} vertices, "
          f"{len(mesh.polygons)} quads, {entry['pinned']} pinned; radius {cone.r0:.3f} -> "
          f"{cone.r1:.3f}, length {cone.length:.3f} (file units of {unit} m), "
          f"arc {entry['arc_deg']:.0f} deg")
    print(f"  first frame: {inside} character vertices inside the garment's cone, "
          f"{crossing} character edges cross the cloth -> {path}")
    return entry


def build(args):
    assets = pathlib.Path(args.assets)
    if not (assets / "RiggedFigure.glb").is_file():
        raise SystemExit(f"{assets}: no RiggedFigure.glb (see ../shared/assets/README.md)")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = {name: build_scene(name, assets, out) for name in args.scenes or SCENES}
    (out / "scenes.json").write_text(json.dumps(manifest, indent=1) + "\n")


#: Direction of the rays that count surface crossings, off the axes of low-poly bodies.
RAY = Vector((0.123, 0.456, 1.0)).normalized()


def depth(points, faces, x):
    """Deepest penetration (≥ 0) of the points x into the body (points, faces): the
    distance to its surface of points inside it. Inside = a positive winding number along
    RAY (exits minus entries), which holds for bodies made of overlapping closed shells; the
    sign of the nearest face's normal misleads near a low-poly body's edges."""
    tree = BVHTree.FromPolygons([tuple(p) for p in points], faces, all_triangles=False)
    worst = 0.0
    for p in map(Vector, x):
        winding, origin = 0, p
        while (hit := tree.ray_cast(origin, RAY))[0] is not None:
            winding += 1 if hit[1].dot(RAY) > 0 else -1
            origin = hit[0] + 1e-5 * RAY
        if winding > 0:
            worst = max(worst, tree.find_nearest(p)[3])
    return worst


def penetration(entry, out, frames, start):
    """(deepest over all frames, deepest from the tenth frame on) of the garment's cache
    frames into the body, the body evaluated by Blender from the exported scene."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(out / entry["glb"]))
    body = bpy.context.scene.objects[entry["body"]]
    deepest = []
    for k, x in enumerate(frames):
        bpy.context.scene.frame_set(int(start) + k)
        points, _, faces = world_mesh(body)
        deepest.append(depth(points, faces, x))
    return max(deepest), max(deepest[10:], default=0.0)


def measure(args):
    out = pathlib.Path(args.out)
    manifest = json.loads((out / "scenes.json").read_text())
    print("| scene | garment particles | frames | ms/frame | steps/frame | worst stretch "
          "| deepest penetration (from frame 10) | exit |")
    print("|---|---|---|---|---|---|---|---|")
    for name, entry in manifest.items():
        if not (out / f"{name}.report.json").is_file():
            print(f"| {name} | no report: see {out / name}.stderr |")
            continue
        report = json.loads((out / f"{name}.report.json").read_text())
        per_frame = report["per_frame"]
        baked = len(per_frame)
        ms = 1000 * sum(f["seconds"] for f in per_frame) / max(baked, 1)
        steps = sum(f["steps"] for f in per_frame) / max(baked, 1)
        cache = next((p for p in (out / f"{name}.pc2", out / f"{name}.pc2.partial")
                      if p.is_file()), None)
        stretch = deep = deep10 = float("nan")
        if cache is not None:
            start, frames = metrics.read_pc2(cache)
            stretch = metrics.max_stretch(frames, entry["edges"])
            deep, deep10 = (entry["metres_per_unit"] * d
                            for d in penetration(entry, out, frames, start))
        total = entry["frames"][1] - entry["frames"][0]
        print(f"| {name} | {report['garments'][0]['vertices']} | {baked} of {total} | {ms:.0f} "
              f"| {steps:.1f} | {100 * stretch:.1f}% | {1000 * deep:.1f} ({1000 * deep10:.1f})"
              f" mm | {report['exit_code']} |")
        if report["status"] != "ok":
            print(f"  {name}: {report['status']}: {report.get('error', '')}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the scenes and export them to OUT/<scene>.glb")
    b.add_argument("--assets", default=str(ROOT.parent / "shared" / "assets"),
                   help="the outside assets (default ../shared/assets beside the repository)")
    b.add_argument("--scenes", nargs="*", choices=list(SCENES), help="only these scenes")
    m = sub.add_parser("measure", help="figures of the bakes of scripts/outside-bench.sh")
    for s in (b, m):
        s.add_argument("--out", default=str(ROOT / "target" / "outside"),
                       help="scenes, caches and reports (default target/outside)")
    args = p.parse_args(argv)
    build(args) if args.command == "build" else measure(args)


if __name__ == "__main__":
    main()
