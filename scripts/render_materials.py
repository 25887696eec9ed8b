"""One garment baked in several materials, pictured side by side at the last frame (the
README's "Materials" figure, docs/images/materials.png).

Usage (Blender as a Python module: the Python of .venv/ or .venv-bpy5/, made by
scripts/python-deps.sh):

    .venv/bin/python scripts/render_materials.py [--drape BIN] [--scene SCENE.gltf]
        [--materials silk cotton denim] [-o docs/images/materials.png]
        [--size 1500x600] [--engine workbench|cycles] [--garment NAME]

For each material the script bakes the scene with
`drape simulate SCENE --material M --up z -o TMP/M.pc2 --force` (Z-up, Blender's axes:
the cache then plays on the mesh Blender's glTF importer makes, whose vertices are the
file's, in its order), imports the scene with `bpy.ops.import_scene.gltf`, puts a Mesh Cache
modifier reading that cache on the garment (as the Blender extension does), poses the
bodies at the cache's last frame and renders one panel; the panels, each labelled with its
material, are joined left to right into one PNG. The camera looks at the garment from the
front (the glTF front, +Z, which is Blender's -Y) and 30 degrees to its left, framing the
garment's bounding sphere over all materials, so the same settings frame any garment.

The default engine is Workbench (solid shading, studio light), which needs an OpenGL
context: in background mode Blender takes one from EGL (Mesa's software renderer does, no
GPU needed). Where no EGL library is installed, `--engine cycles` renders on the CPU with
few samples.

Printed: per material, at the last frame, the mean height (world Z, metres) of the
garment's hem (the vertices of its open edges in the lower half of the garment as
modelled, seams closed), the hem's mean distance from the garment's vertical axis (how far
it flares) and the garment's lowest point, after the same figures as modelled; then the
output path. Rendering and numbers depend only on the inputs: rerun the script
after a material preset changes.
"""
import argparse
import math
import os
import pathlib
import struct
import subprocess
import sys
import tempfile

import bpy
import numpy as np
from mathutils import Vector

ROOT = pathlib.Path(__file__).resolve().parents[1]

GARMENT_COLOUR = (0.23, 0.38, 0.62)  # a mid blue, apart from the grey body
BODY_COLOUR = (0.72, 0.72, 0.70)
LABEL_COLOUR = (0.08, 0.08, 0.08)
BACKGROUND = (0.93, 0.93, 0.93)
VIEW_AZIMUTH = math.radians(30.0)  # from the front towards the garment's left
VIEW_ELEVATION = math.radians(8.0)
FIELD_OF_VIEW = math.radians(30.0)  # across the panel's longer side
MARGIN = 1.1  # the garment's bounding box fills 1 / MARGIN of the frame, across or up
LABEL_STRIP = 0.16  # the bottom part of each panel kept for its label
LABEL_SIZE = 0.07  # the label's font size as a fraction of the panel's height


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--drape", default=str(ROOT / "target" / "release" / "drape"),
                   help="the drape binary (default target/release/drape)")
    p.add_argument("--scene", default=str(ROOT / "fixtures" / "skirt_on_character.gltf"),
                   help="a .gltf or .glb scene (default fixtures/skirt_on_character.gltf)")
    p.add_argument("--materials", nargs="+", default=["silk", "cotton", "denim"],
                   help="presets or material JSON files, one panel each, left to right")
    p.add_argument("-o", "--output", default=str(ROOT / "docs" / "images" / "materials.png"),
                   help="the PNG written (default docs/images/materials.png)")
    p.add_argument("--size", default="1500x600", help="WIDTHxHEIGHT of the whole picture")
    p.add_argument("--engine", choices=["workbench", "cycles"], default="workbench",
                   help="workbench (OpenGL through EGL) or cycles (CPU, 16 samples)")
    p.add_argument("--garment", help="the garment mesh, when the scene has several")
    args = p.parse_args(argv)
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        p.error(f"--size {args.size!r}: give WIDTHxHEIGHT, e.g. 1500x600")
    if w < 3 * len(args.materials) or h < 16:
        p.error(f"--size {args.size}: too small for {len(args.materials)} panels")
    args.width, args.height = w, h
    if pathlib.Path(args.scene).suffix.lower() not in (".gltf", ".glb"):
        p.error(f"--scene {args.scene}: this script imports glTF only (.gltf, .glb)")
    return args


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def bake(drape, scene, material, garment, out):
    """The cache of `scene` in `material`, Z-up; (first frame, frames, points) of it."""
    cmd = [drape, "simulate", scene, "--material", material, "--up", "z", "-o", str(out),
           "--force", "--progress", "none"]
    if garment:
        cmd += ["--garment", garment]
    r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stderr.strip()}")
    with open(out, "rb") as f:
        head = f.read(32)
    if head[:12] != b"POINTCACHE2\0":
        fail(f"{out}: not a PC2 cache")
    _, points, start, _, samples = struct.unpack_from("<iiffi", head, 12)
    return int(round(start)), samples, points


def import_scene(scene):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    # Merge Vertices off: the mesh keeps the file's vertices, the order the cache has.
    bpy.ops.import_scene.gltf(filepath=str(scene), merge_vertices=False)


def find_garment(name):
    meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    if name:
        found = [o for o in meshes if o.name == name]
    else:
        found = [o for o in meshes if _role(o) == "garment"]
    if len(found) != 1:
        names = ", ".join(sorted(o.name for o in meshes))
        fail(f"{'no mesh named ' + name if name else 'not one mesh marked as garment'} "
             f"in the scene (meshes: {names}); give --garment NAME")
    return found[0]


def _role(ob):
    marked = ob.get("drape")
    if marked is not None and hasattr(marked, "get"):
        return marked.get("role")
    return ob.get("drape_role")


def shown_objects():
    """The garment and the bodies: every mesh but the importer's bone display shapes."""
    shapes = {b.custom_shape for o in bpy.context.scene.objects if o.type == "ARMATURE"
              for b in o.pose.bones if b.custom_shape}
    return [o for o in bpy.context.scene.objects
            if o.type == "MESH" and o not in shapes]


def hem_vertices(mesh, co):
    """Indices of the hem: vertices on an open edge of the garment with its seams closed
    (vertices at one position welded; an importer splits them where the UV panels meet),
    in the lower half of the garment as modelled (`co`, world positions)."""
    _, weld = np.unique(np.round(co, 6), axis=0, return_inverse=True)
    weld = weld.ravel()
    uses = {}
    for poly in mesh.polygons:
        for a, b in poly.edge_keys:
            key = (min(weld[a], weld[b]), max(weld[a], weld[b]))
            uses[key] = uses.get(key, 0) + 1
    open_welded = {w for key, n in uses.items() if n == 1 for w in key}
    mid = 0.5 * (co[:, 2].min() + co[:, 2].max())
    return np.array([i for i in range(len(co)) if weld[i] in open_welded and co[i, 2] < mid],
                    dtype=np.int64)


def evaluated_points(ob):
    """World positions of `ob`'s evaluated mesh (modifiers applied), an (N, 3) array."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ev = ob.evaluated_get(depsgraph)
    mesh = ev.to_mesh()
    co = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", co)
    ev.to_mesh_clear()
    co = co.reshape(-1, 3)
    m = np.array(ob.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]


def set_colour(ob, colour):
    ob.color = (*colour, 1.0)
    mat = bpy.data.materials.new(f"{ob.name}_colour")
    mat.diffuse_color = (*colour, 1.0)
    if mat.node_tree is None:
        mat.use_nodes = True
    bsdf = mat.node_tree.nodes.get("Principled BSDF")
    bsdf.inputs["Base Color"].default_value = (*colour, 1.0)
    bsdf.inputs["Roughness"].default_value = 0.8
    ob.data.materials.clear()
    ob.data.materials.append(mat)


def setup_render(args, panel_w):
    sc = bpy.context.scene
    r = sc.render
    r.resolution_x, r.resolution_y, r.resolution_percentage = panel_w, args.height, 100
    r.film_transparent = args.engine == "cycles"  # the backdrop is added when joining
    r.use_stamp = False
    r.image_settings.file_format = "PNG"
    r.image_settings.color_mode = "RGBA"
    sc.view_settings.view_transform = "Standard"
    sc.view_settings.look = "None"
    world = bpy.data.worlds.new("Backdrop")
    world.color = BACKGROUND
    if world.node_tree is None:
        world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (*BACKGROUND, 1.0)
    sc.world = world
    if args.engine == "workbench":
        r.engine = "BLENDER_WORKBENCH"
        shading = sc.display.shading
        shading.light = "STUDIO"
        shading.color_type = "OBJECT"
        shading.show_cavity = True
        shading.cavity_type = "WORLD"
        shading.show_shadows = False
        sc.display.render_aa = "8"
    else:
        r.engine = "CYCLES"
        sc.cycles.device = "CPU"
        sc.cycles.samples = 16
        sc.cycles.use_denoising = False
        sc.cycles.seed = 0
        world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.5
        sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
        sun.data.energy = 2.0
        sun.rotation_euler = (math.radians(40), 0.0, math.radians(-30))
        sc.collection.objects.link(sun)


def place_camera(points, panel_w, panel_h):
    """A camera on the front-left of the garment whose frame, less a strip at the bottom
    for the label, holds the bounding box of `points` (world positions, (N, 3)); returns
    the camera and the tangent of its half-angle up the frame."""
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    bpy.context.scene.collection.objects.link(cam)
    bpy.context.scene.camera = cam
    cam.data.sensor_fit = "AUTO"  # the angle spans the panel's longer side
    cam.data.lens_unit = "FOV"
    cam.data.angle = FIELD_OF_VIEW
    long_side = max(panel_w, panel_h)
    tan_x = math.tan(FIELD_OF_VIEW / 2.0) * panel_w / long_side
    tan_y = math.tan(FIELD_OF_VIEW / 2.0) * panel_h / long_side
    # Blender's front is -Y (the glTF front, +Z); the camera turns towards +X (the
    # garment's left as it faces the viewer) and rises a little.
    back = np.array([math.sin(VIEW_AZIMUTH) * math.cos(VIEW_ELEVATION),
                     -math.cos(VIEW_AZIMUTH) * math.cos(VIEW_ELEVATION),
                     math.sin(VIEW_ELEVATION)])
    right = np.cross(back, [0.0, 0.0, 1.0]) * -1.0
    right /= np.linalg.norm(right)
    up = np.cross(back, right)
    lo, hi = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (lo + hi)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])]) - centre
    # A corner p (from the centre) at camera distance d lies at depth d - p.back; it is in
    # the frame when |p.right| <= depth * tan_x / MARGIN, and likewise up the frame.
    usable_y = tan_y * (1.0 - LABEL_STRIP)
    distance = max(float(np.max(np.abs(corners @ right) / tan_x * MARGIN + corners @ back)),
                   float(np.max(np.abs(corners @ up) / usable_y * MARGIN + corners @ back)))
    cam.location = Vector(centre + back * distance)
    cam.rotation_euler = Vector(-back).to_track_quat("-Z", "Y").to_euler()
    # Shift the frame down by half the label strip: the box sits in the part above it.
    cam.data.shift_y = -LABEL_STRIP * panel_h / long_side / 2.0
    cam.data.clip_start = distance / 100.0
    cam.data.clip_end = distance * 100.0
    return cam, tan_y


def add_label(cam, tan_y):
    """A text object fixed in the camera's view, centred in the label strip at the bottom
    of the frame (see place_camera)."""
    curve = bpy.data.curves.new("Label", "FONT")
    curve.align_x = "CENTER"
    curve.align_y = "CENTER"
    depth = 1.0  # metres in front of the camera
    curve.size = LABEL_SIZE * 2.0 * tan_y * depth
    label = bpy.data.objects.new("Label", curve)
    bpy.context.scene.collection.objects.link(label)
    label.parent = cam
    # The frame at this depth spans y from -tan_y (1 + LABEL_STRIP) to tan_y (1 - LABEL_STRIP).
    label.location = (0.0, -tan_y * depth, -depth)
    set_colour(label, LABEL_COLOUR)
    return label


def print_figures(name, shape, hem):
    """One row: the hem's mean height, its mean distance from the garment's vertical axis
    (through the mean of its vertices) and the garment's lowest point, in metres."""
    axis = shape[:, :2].mean(axis=0)
    height = float(shape[hem, 2].mean())
    radius = float(np.linalg.norm(shape[hem, :2] - axis, axis=1).mean())
    print(f"{name:<12} {height:>10.3f} {radius:>10.3f} {float(shape[:, 2].min()):>8.3f}")


def render_panel(path):
    """Renders the scene to `path` and returns its pixels, (H, W, 4) rows bottom to top,
    over the backdrop colour."""
    bpy.context.scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(str(path))
    w, h = img.size
    px = np.empty(w * h * 4, dtype=np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    px = px.reshape(h, w, 4)
    alpha = px[:, :, 3:4]
    px[:, :, :3] = px[:, :, :3] * alpha + np.array(BACKGROUND, dtype=np.float32) * (1 - alpha)
    px[:, :, 3] = 1.0
    return px


def save_png(pixels, path):
    """Writes an (H, W, 4) array of 0..1 values (rows bottom to top, as Blender keeps
    them) as an 8-bit RGB PNG."""
    h, w, _ = pixels.shape
    img = bpy.data.images.new("Materials", w, h, alpha=False)
    img.pixels.foreach_set(np.ascontiguousarray(pixels, dtype=np.float32).ravel())
    img.filepath_raw = str(path)
    img.file_format = "PNG"
    bpy.context.scene.render.image_settings.color_mode = "RGB"
    bpy.context.scene.render.image_settings.compression = 100
    img.save_render(str(path))
    bpy.data.images.remove(img)


def main(argv):
    args = parse_args(argv)
    drape = pathlib.Path(args.drape)
    if not drape.exists():
        fail(f"{drape}: no drape binary; run `cargo build --release` or give --drape")
    n = len(args.materials)
    panel_w = args.width // n
    out = pathlib.Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="drape-materials-") as tmp:
        tmp = pathlib.Path(tmp)
        caches = []
        for i, material in enumerate(args.materials):
            cache = tmp / f"{i}.pc2"
            first, frames, points = bake(str(drape), args.scene, material, args.garment, cache)
            caches.append((material, cache, first, frames))

        import_scene(args.scene)
        garment = find_garment(args.garment)
        if len(garment.data.vertices) != points:
            fail(f"garment '{garment.name}': Blender's import has "
                 f"{len(garment.data.vertices)} vertices, the cache {points}")
        modelled = evaluated_points(garment)
        hem = hem_vertices(garment.data, modelled)
        if len(hem) == 0:
            fail(f"garment '{garment.name}' has no open edge in its lower half (no hem)")

        objects = shown_objects()
        for ob in bpy.context.scene.objects:
            ob.hide_render = ob not in objects
        for ob in objects:
            set_colour(ob, GARMENT_COLOUR if ob == garment else BODY_COLOUR)
            ob.data.polygons.foreach_set("use_smooth", [True] * len(ob.data.polygons))
        mod = garment.modifiers.new("drape", "MESH_CACHE")
        mod.cache_format = "PC2"

        # Every material's last frame, for the figures and the framing.
        shapes = []
        for material, cache, first, frames in caches:
            mod.filepath = str(cache)
            mod.frame_start = first
            bpy.context.scene.frame_set(first + frames - 1)
            shapes.append(evaluated_points(garment))
        setup_render(args, panel_w)
        cam, tan_y = place_camera(np.concatenate(shapes), panel_w, args.height)
        label = add_label(cam, tan_y)

        panels = []
        print(f"garment '{garment.name}', hem of {len(hem)} vertices, "
              f"frame {caches[0][2] + caches[0][3] - 1}; heights are world Z in metres")
        print(f"{'material':<12} {'hem height':>10} {'hem radius':>10} {'lowest':>8}")
        print_figures("(modelled)", modelled, hem)
        for (material, cache, first, frames), shape in zip(caches, shapes):
            mod.filepath = str(cache)
            mod.frame_start = first
            bpy.context.scene.frame_set(first + frames - 1)
            label.data.body = pathlib.Path(material).stem
            panels.append(render_panel(tmp / f"{len(panels)}.png"))
            print_figures(pathlib.Path(material).stem, shape, hem)

    picture = np.empty((args.height, args.width, 4), dtype=np.float32)
    picture[:] = (*BACKGROUND, 1.0)
    for i, panel in enumerate(panels):
        picture[:, i * panel_w:(i + 1) * panel_w] = panel
    save_png(picture, out)
    print(f"wrote {out} ({args.width}x{args.height}, {n} panels)")


if __name__ == "__main__":
    main(sys.argv[1:] if "--" not in sys.argv else sys.argv[sys.argv.index("--") + 1:])
