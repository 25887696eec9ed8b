"""The animated character of the Alembic tests, built in `bpy`: a bent tube (a "leg"
or "arm") skinned to a chain of three bones that bend over the frames, with a parent
Empty that carries it sideways, and a sleeve garment around it with UVs (its flat pattern)
and the custom property `drape_role = "garment"`. Exported by Blender's Alembic and USD
exporters (test_alembic_input.py).

Run as a script, `python tests/python/abc_scene.py fixtures/alembic` writes the small
copies of the scene that tests/inputs_alembic.rs reads (tube.abc, tube.usda with the
skinned points baked, tube_skel.usda with UsdSkel)."""
import math
import sys

import bpy
import bmesh

FIRST, LAST = 1, 13
SEGMENTS = 16
#: The tube: RINGS rings of radius RADIUS from z = 0 to z = LENGTH (m).
RADIUS, LENGTH, RINGS = 0.08, 0.9, 19
#: The sleeve: a cylinder of radius SLEEVE_R from SLEEVE_Z0 to SLEEVE_Z1, SLEEVE_ROWS rows.
SLEEVE_R, SLEEVE_Z0, SLEEVE_Z1, SLEEVE_ROWS = 0.11, 0.35, 0.75, 8
BEND = math.radians(35.0)  # largest bend of each joint


def tube_mesh(name, radius, z0, z1, rows, caps, segments=SEGMENTS):
    """A cylinder around Z as a bmesh-built mesh (quads), closed by fans when `caps`."""
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    rings = []
    for k in range(rows + 1):
        z = z0 + (z1 - z0) * k / rows
        rings.append([bm.verts.new((radius * math.cos(2 * math.pi * i / segments),
                                    radius * math.sin(2 * math.pi * i / segments), z))
                      for i in range(segments)])
    faces = []
    for k in range(rows):
        for i in range(segments):
            j = (i + 1) % segments
            faces.append(((k, i), (k, j), (k + 1, j), (k + 1, i)))
            bm.faces.new((rings[k][i], rings[k][j], rings[k + 1][j], rings[k + 1][i]))
    if caps:
        bm.faces.new(list(reversed(rings[0])))
        bm.faces.new(rings[-1])
    bm.to_mesh(mesh)
    bm.free()
    return mesh, faces


def build_body(segments=SEGMENTS, rings=RINGS):
    """The tube skinned to bones Upper, Middle, Lower (each a third of its length, weights
    blended over the joints), under the Empty Carrier that moves along X and turns."""
    scene = bpy.context.scene
    mesh, _ = tube_mesh("TubeMesh", RADIUS, 0.0, LENGTH, rings - 1, caps=True,
                        segments=segments)
    body = bpy.data.objects.new("Tube", mesh)
    scene.collection.objects.link(body)
    rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(rig)
    carrier = bpy.data.objects.new("Carrier", None)
    scene.collection.objects.link(carrier)
    rig.parent = carrier
    body.parent = carrier
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    third = LENGTH / 3
    names = ("Upper", "Middle", "Lower")
    parent = None
    for k, bone_name in enumerate(names):
        bone = rig.data.edit_bones.new(bone_name)
        bone.head, bone.tail = (0.0, 0.0, k * third), (0.0, 0.0, (k + 1) * third)
        if parent is not None:
            bone.parent, bone.use_connect = parent, True
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    groups = [body.vertex_groups.new(name=n) for n in names]
    for v in mesh.vertices:
        s = v.co.z / third  # 0..3 along the bones
        for k, g in enumerate(groups):
            w = max(0.0, 1.0 - abs(s - (k + 0.5)))
            if w > 0:
                g.add([v.index], w, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = rig
    for frame in range(FIRST, LAST + 1, 3):
        t = (frame - FIRST) / (LAST - FIRST)
        for k, bone_name in enumerate(names[1:]):
            pose = rig.pose.bones[bone_name]
            pose.rotation_mode = "XYZ"
            pose.rotation_euler = (BEND * math.sin(math.pi * t) * (1 + 0.5 * k), 0.0, 0.0)
            pose.keyframe_insert("rotation_euler", frame=frame)
        carrier.location = (0.3 * t, 0.0, 0.1 * t)
        carrier.rotation_euler = (0.0, 0.0, math.radians(20.0) * t)
        carrier.keyframe_insert("location", frame=frame)
        carrier.keyframe_insert("rotation_euler", frame=frame)
    return body


def build_sleeve():
    """The garment: an open tube around the upper part of the body with its unrolled
    rectangle as UVs (one seam), marked `drape_role = "garment"`, top ring pinned."""
    mesh, faces = tube_mesh("SleeveMesh", SLEEVE_R, SLEEVE_Z0, SLEEVE_Z1, SLEEVE_ROWS, False)
    circumference = 2 * math.pi * SLEEVE_R
    uv = mesh.uv_layers.new(name="UVMap")
    height = SLEEVE_Z1 - SLEEVE_Z0
    for poly, corners in zip(mesh.polygons, faces):
        for li, (k, i) in zip(poly.loop_indices, corners):
            # the closing column of quads takes u = 1 for its i = 0 corners (the seam)
            i_u = SEGMENTS if i == 0 and any(c[1] == SEGMENTS - 1 for c in corners) else i
            uv.data[li].uv = (circumference * i_u / SEGMENTS, height * k / SLEEVE_ROWS)
    ob = bpy.data.objects.new("Sleeve", mesh)
    bpy.context.scene.collection.objects.link(ob)
    ob["drape_role"] = "garment"
    return ob


def build_scene(fps=24, segments=SEGMENTS, rings=RINGS):
    """An empty scene with the body and the sleeve, playing FIRST..LAST at `fps`."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FIRST, LAST
    scene.render.fps = fps
    body = build_body(segments, rings)
    sleeve = build_sleeve()
    scene.frame_set(FIRST)
    return body, sleeve


def export_alembic(path):
    bpy.ops.wm.alembic_export(filepath=str(path), start=FIRST, end=LAST,
                              export_custom_properties=True, evaluation_mode="RENDER")


def export_usd(path, armatures=False):
    """USD with the skinned body's points baked per frame (`armatures=False`) or as UsdSkel."""
    bpy.ops.wm.usd_export(filepath=str(path), export_animation=True,
                          export_armatures=armatures, export_custom_properties=True)


if __name__ == "__main__":
    import pathlib

    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    build_scene(segments=8, rings=7)
    export_alembic(out / "tube.abc")
    export_usd(out / "tube.usda")
    export_usd(out / "tube_skel.usda", armatures=True)
