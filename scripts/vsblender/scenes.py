"""The benchmark scenes, built in Blender (`bpy`) and handed to drape unchanged.

- `sheet_on_sphere(side)`: Baraff fig. 1 at 1 m: a flat, horizontal 1 m square of
  `side × side` vertices (quads), 10 cm above a sphere of radius 0.25 m (48 × 24 UV sphere)
  centred at the origin; nothing pinned. Built with bmesh, exported with Blender's USD
  exporter (which keeps Blender's vertex order) with the sheet tagged
  `drape_role = "garment"`, so drape's cache lines up point by point with Blender's mesh.
- `skirt_on_character(gltf)`: the fixture `fixtures/skirt_on_character.gltf` imported with
  Blender's glTF importer (seam vertices merged, as drape welds them); drape reads the
  original `.gltf`. The skirt's `_PIN` vertices (≥ 0.5, drape's rule) become the vertex
  group `pin`, Blender's cloth pin group. drape's pins follow the body surface they sit
  on (the waist, skinned to the Spine bone only); in Blender the skirt gets an Armature
  modifier before the cloth with every vertex bound to Spine, so its pins follow the same
  bone. Both of the file's animations (Swing, Twist) play at once, as in drape: the
  importer's muted NLA tracks are unmuted and the active action cleared.

Both engines run at 24 frames per second, Z up, gravity 9.81 m/s², self-collision ON in
both (drape always detects it; Blender's default is off, turned on here so both do the same
work). The mapping of drape's default material (cotton, src/scene/material.rs) onto
Blender's cloth settings, applied by `configure_cloth`:

```text
drape (cotton)                      Blender cloth
density ρ = 0.15 kg/m²              settings.mass (per vertex) m = ρ · A / n  (A: rest area,
                                      n: vertices; "matched", the default) — or Blender's
                                      default 0.3 kg ("default", its Cotton preset)
(air drag: Blender's is per vertex) settings.air_damping = 1 · m / 0.3 (Blender's default
                                      drag per unit mass, i.e. its default terminal speed)
thickness τ = 0.004 m               collision.distance_min + body thickness_outer = τ
                                      (0.003 + 0.001: Blender adds the two)
self distance min(τ, ¼ mean edge)   collision.self_distance_min (≥ 0.001, Blender's floor)
gravity 9.81 m/s²                   scene gravity (0, 0, −9.81) (Blender's default)
steps: adaptive, ≤ 1 per frame      quality = 5 steps per frame (Blender's default)
```
What cannot be matched: Blender's spring, damping and drag coefficients are forces per
vertex in its own units, tuned for its default vertex mass of 0.3 kg; only their ratio to
the vertex mass shapes the motion. With the matched (≈ 1,000× smaller) mass and default
springs, Blender's cloth is far stiffer per unit weight than its default (less stretch,
stiffer bending) and its spring damping far heavier; the air damping alone is rescaled,
because unscaled it would hold the falling sheet to a few cm/s. Stiffness (tension 15,
compression 15, shear 5, bending 0.5 vs drape's moduli in N/m), spring damping and
friction (Blender's cloth/body friction 5 is not a Coulomb coefficient; drape's is 0.4)
stay at Blender's defaults. The cloth models differ (Blender: mass–spring on mesh edges;
drape: Baraff–Witkin triangles), so the scene is compared on what it shows: time,
stretch, penetration.
"""
import contextlib
import os
import pathlib
import sys

import bpy  # before bmesh, which bpy provides
import bmesh
import numpy as np

from . import metrics

FPS = 24
DENSITY = 0.15  # kg/m², drape's default material (cotton)
THICKNESS = 0.004  # m, drape's default material (cotton)
BODY_THICKNESS_OUTER = 0.001  # m, Blender's smallest outer thickness of a Collision modifier
SPHERE_RADIUS = 0.25  # m
SHEET_SIZE = 1.0  # m
DROP = 0.10  # m between the sphere's top and the sheet


class Scene:
    """One benchmark scene as built in Blender, and how drape gets it.

    garment, body: the Blender objects; drape_input: the file drape simulates; drape_args:
    extra `drape simulate` flags; drape_edges: edges (E, 2) of drape's cache points;
    drape_rest: drape's expected first cache sample (to check order and axes);
    blender_edges: edges of Blender's garment mesh; body_animated: whether the body moves."""

    def __init__(self, name, garment, body, drape_input, drape_args, drape_edges,
                 drape_rest, body_animated):
        self.name = name
        self.garment = garment
        self.body = body
        self.drape_input = pathlib.Path(drape_input)
        self.drape_args = list(drape_args)
        self.drape_edges = drape_edges
        self.drape_rest = drape_rest
        self.blender_edges = metrics.edges_of_faces([p.vertices for p in garment.data.polygons])
        self.body_animated = body_animated
        self.settings = {}


def _reset(frames):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.render.fps_base = 1.0
    scene.frame_start = 1
    scene.frame_end = 1 + frames
    scene.gravity = (0.0, 0.0, -9.81)
    return scene


@contextlib.contextmanager
def logs_to_stderr():
    """Blender's importers and exporters log on stdout (Python and C); stdout is kept for
    the benchmark's table."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _link(name, mesh):
    ob = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def _grid(side):
    """A SHEET_SIZE square of side × side vertices at height SPHERE_RADIUS + DROP, UVs in
    metres (its flat pattern is itself)."""
    mesh = bpy.data.meshes.new("Sheet")
    bm = bmesh.new()
    step = SHEET_SIZE / (side - 1)
    z = SPHERE_RADIUS + DROP
    verts = [[bm.verts.new((-SHEET_SIZE / 2 + step * i, -SHEET_SIZE / 2 + step * j, z))
              for i in range(side)] for j in range(side)]
    for j in range(side - 1):
        for i in range(side - 1):
            bm.faces.new((verts[j][i], verts[j][i + 1], verts[j + 1][i + 1], verts[j + 1][i]))
    uv = bm.loops.layers.uv.new("UVMap")
    for face in bm.faces:
        for loop in face.loops:
            x, y, _ = loop.vert.co
            loop[uv].uv = (x + SHEET_SIZE / 2, y + SHEET_SIZE / 2)
    bm.to_mesh(mesh)
    bm.free()
    return mesh


def _sphere():
    mesh = bpy.data.meshes.new("Sphere")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=48, v_segments=24, radius=SPHERE_RADIUS)
    bm.to_mesh(mesh)
    bm.free()
    return mesh


def _export_usd(path, objects):
    for ob in bpy.context.scene.objects:
        ob.select_set(ob in objects)
    bpy.context.view_layer.objects.active = objects[0]
    with logs_to_stderr():
        result = bpy.ops.wm.usd_export(
            filepath=str(path),
            selected_objects_only=True,
            export_animation=False,
            export_custom_properties=True,
            export_uvmaps=True,
            export_normals=False,
            export_materials=False,
            convert_orientation=False,
        )
    if "FINISHED" not in result:
        raise RuntimeError(f"USD export to {path} failed")


def sheet_on_sphere(side, work, frames, mass="matched"):
    """The sheet of `side × side` vertices over the sphere; drape gets `work/<name>.usdc`."""
    _reset(frames)
    name = f"sheet_{side * side}_on_sphere"
    sheet = _link("Sheet", _grid(side))
    sheet["drape_role"] = "garment"
    sphere = _link("Sphere", _sphere())
    path = pathlib.Path(work) / f"{name}.usdc"
    _export_usd(path, [sheet, sphere])
    rest = np.array([tuple(v.co) for v in sheet.data.vertices])
    scene = Scene(name, sheet, sphere, path, [], None, rest, body_animated=False)
    scene.drape_edges = scene.blender_edges  # the USD keeps Blender's vertex order
    configure_cloth(scene, mass=mass)
    return scene


def skirt_on_character(gltf, frames, mass="matched"):
    """The glTF fixture in Blender; drape gets the original file (`--up z` makes its cache
    Z up, Blender's axis conversion of glTF)."""
    _reset(frames)
    with logs_to_stderr():
        result = bpy.ops.import_scene.gltf(filepath=str(gltf), merge_vertices=True)
    if "FINISHED" not in result:
        raise RuntimeError(f"glTF import of {gltf} failed")
    skirt, body, rig = (bpy.data.objects.get(n) for n in ("Skirt", "Body", "Armature"))
    if skirt is None or body is None or rig is None:
        raise RuntimeError(f"{gltf}: expected objects Skirt, Body and Armature")
    _play_every_animation(rig)
    pin = skirt.data.attributes.get("_PIN")
    if pin is None:
        raise RuntimeError(f"{gltf}: the skirt has no _PIN attribute")
    group = skirt.vertex_groups.new(name="pin")
    group.add([i for i, d in enumerate(pin.data) if d.value >= 0.5], 1.0, "REPLACE")
    spine = skirt.vertex_groups.new(name="Spine")
    spine.add(range(len(skirt.data.vertices)), 1.0, "REPLACE")
    follow = skirt.modifiers.new("FollowSpine", "ARMATURE")
    follow.object = rig
    positions, triangles = metrics.gltf_mesh(gltf, "Skirt")
    scene = Scene("skirt_on_character", skirt, body, gltf, ["--up", "z"],
                  metrics.edges_of_faces(triangles), metrics.y_up_to_z_up(positions),
                  body_animated=True)
    configure_cloth(scene, pin_group="pin", mass=mass)
    return scene


def _play_every_animation(rig):
    """drape plays every glTF animation at once; Blender's importer makes the first the
    active action and stashes the others in muted NLA tracks. Play all tracks instead."""
    data = rig.animation_data
    if data is None:
        return
    for track in data.nla_tracks:
        track.mute = False
    data.action = None


def _area(ob):
    return sum(p.area for p in ob.data.polygons)


def mean_edge(ob):
    """Mean edge length (m) of a mesh object's own (rest) mesh."""
    v = ob.data.vertices
    lengths = [(v[a].co - v[b].co).length for a, b in (e.vertices for e in ob.data.edges)]
    return sum(lengths) / max(1, len(lengths))


BLENDER_DEFAULT_MASS = 0.3  # kg per vertex (Blender's default and Cotton preset)
MASS_MODES = ("matched", "default")


def configure_cloth(scene, pin_group=None, mass="matched"):
    """A Cloth modifier on the garment (Blender's defaults, quality 5, with the mapping of
    the module doc; `mass` "matched" or "default") and a Collision modifier on the body;
    records the settings used."""
    garment, body = scene.garment, scene.body
    body.modifiers.new("Collision", "COLLISION")  # last: after the body's Armature modifier
    body.collision.thickness_outer = BODY_THICKNESS_OUTER
    cloth = garment.modifiers.new("Cloth", "CLOTH")
    settings = cloth.settings
    vertices = len(garment.data.vertices)
    if mass == "matched":
        settings.mass = DENSITY * _area(garment) / vertices
        settings.air_damping *= settings.mass / BLENDER_DEFAULT_MASS
    elif mass != "default":
        raise ValueError(f"mass mode {mass!r}: expected one of {MASS_MODES}")
    if pin_group:
        settings.vertex_group_mass = pin_group
    coll = cloth.collision_settings
    coll.use_collision = True
    coll.distance_min = THICKNESS - BODY_THICKNESS_OUTER
    coll.use_self_collision = True
    self_distance = max(0.001, min(THICKNESS, 0.25 * mean_edge(garment)))
    coll.self_distance_min = self_distance
    cache = cloth.point_cache
    cache.frame_start = bpy.context.scene.frame_start
    cache.frame_end = bpy.context.scene.frame_end
    scene.settings = {
        "blender_version": bpy.app.version_string,
        "fps": FPS,
        "quality_steps_per_frame": settings.quality,
        "mass_mode": mass,
        "vertex_mass_kg": settings.mass,
        "density_kg_m2": DENSITY,
        "collision_distance_m": coll.distance_min + body.collision.thickness_outer,
        "self_collision": True,
        "self_distance_m": coll.self_distance_min,
        "tension_stiffness": settings.tension_stiffness,
        "shear_stiffness": settings.shear_stiffness,
        "bending_stiffness": settings.bending_stiffness,
        "air_damping": settings.air_damping,
        "friction": coll.friction,
        "pin_group": pin_group,
        "gravity_m_s2": -bpy.context.scene.gravity[2],
    }

