"""The scene drape reads: the garment and the bodies exported with Blender's own exporters.

Two formats (the `export_format` setting of the panel):

- **USD** (default, `export_usd`): Blender's USD exporter keeps one point per Blender vertex,
  in Blender's vertex order, and bakes every deformation of the bodies (armature, shape keys,
  any modifier) into time-sampled points.
- **glTF** (`export_gltf`): Blender's glTF exporter splits vertices where UVs (or normals)
  differ, so before the export the garment gets a point attribute `_DRAPE_INDEX` = its
  Blender vertex index; with `export_attributes` the exporter writes attributes whose name
  starts with `_` (as FLOAT, checked with Blender 4.5 and 5.3), and drape maps every glTF
  vertex back to that index (docs/reference.md, "Outputs"), so the PC2 has one point per Blender vertex in Blender's
  order, as with USD. Pins and keyframe weights (`pin`, `key_weight`: a float point
  attribute or a vertex group, which USD writes as primvars) go as `_PIN` / `_KEY_WEIGHT`.
  Bodies travel as glTF skins: the armatures deforming them are exported too and their
  actions sampled over the scene's frame range; other modifiers and shape keys of a body
  are not applied (use USD for bodies deformed otherwise). Shape keys `key_<frame>` go to
  drape as MDD keyframes (`keyframes.write_keyframes`, in the glTF's Y-up axes), not as
  morph targets. glTF is Y-up: the exporter converts (x, y, z) -> (x, z, -y), and the
  command asks drape for `--up z` (`UP_ARGS`), which converts the cache back
  (x, y, z) -> (x, -z, y), i.e. to Blender's object-local axes.

Both write the garment in its rest shape (the drape cache hidden, `key_<frame>` shape keys
muted) and mark it with the custom property `drape_role = "garment"` (USD
`userProperties:drape_role`, glTF node `extras.drape_role`). Both restore the selection.
"""
import contextlib

import bpy

from . import cache, keyframes, runner

#: The export formats of the `export_format` setting: (identifier, label, description).
FORMATS = (
    ("USD", "USD", "Blender's USD exporter: keeps Blender's vertex order and bakes every "
                   "body deformation to time-sampled points"),
    ("GLTF", "glTF", "Blender's glTF exporter (binary .glb): a _DRAPE_INDEX attribute maps "
                     "split vertices back to Blender's; bodies as armature skins"),
)

#: File extension of the scene of each format.
EXTENSION = {"USD": ".usdc", "GLTF": ".glb"}

#: Extra drape options each format needs: glTF is Y-up, the cache must be Blender's Z-up.
UP_ARGS = {"USD": (), "GLTF": ("--up", "z")}

#: The per-vertex attribute giving each glTF vertex its Blender vertex index.
INDEX_ATTRIBUTE = "_DRAPE_INDEX"


@contextlib.contextmanager
def _selected(context, garment, objects):
    """Selects exactly `objects` with `garment` active, marks the garment (and unmarks the
    others); restores the selection and the active object on exit."""
    view_layer = context.view_layer
    saved_selection = list(context.selected_objects)
    saved_active = view_layer.objects.active
    garment["drape_role"] = "garment"
    for ob in objects:
        if ob is not garment and ob.get("drape_role") == "garment":
            del ob["drape_role"]
    try:
        for ob in saved_selection:
            ob.select_set(False)
        for ob in objects:
            ob.select_set(True)
        view_layer.objects.active = garment
        yield
    finally:
        for ob in context.selected_objects:
            ob.select_set(False)
        for ob in saved_selection:
            ob.select_set(True)
        view_layer.objects.active = saved_active


def export_usd(context, garment, bodies, path):
    """Writes the garment (marked `drape_role = "garment"`, in its rest shape: no drape cache,
    no `key_<frame>` shape key) and the bodies to `path` with Blender's USD exporter over the
    scene's frame range; restores the selection."""
    with _selected(context, garment, [garment, *bodies]), \
            cache.modifiers_hidden(garment), keyframes.rest_shape(garment):
        result = bpy.ops.wm.usd_export(
            filepath=path,
            selected_objects_only=True,
            export_animation=True,
            export_custom_properties=True,
            export_uvmaps=True,
            export_normals=False,
            export_materials=False,
            export_armatures=False,  # armature motion is baked into time-sampled points
            export_shapekeys=False,
            evaluation_mode="VIEWPORT",
            convert_orientation=False,
        )
    if "FINISHED" not in result:
        raise runner.DrapeError(f"USD export to {path} failed")


def deforming_armatures(ob):
    """The armature objects deforming `ob`: its Armature modifiers' objects and an armature
    parent (parent type ARMATURE)."""
    found = []
    for mod in ob.modifiers:
        if mod.type == "ARMATURE" and mod.object is not None and mod.show_viewport:
            found.append(mod.object)
    if ob.parent is not None and ob.parent.type == "ARMATURE" and ob.parent_type == "ARMATURE":
        found.append(ob.parent)
    return [a for i, a in enumerate(found) if a not in found[:i]]


#: Per-vertex weights drape reads from glTF custom attributes: (Blender name, glTF name).
#: The USD exporter writes the point attribute or vertex group `pin` / `key_weight` as a
#: primvar of that name; the glTF exporter writes only attributes named `_...`.
WEIGHTS = (("pin", "_PIN"), ("key_weight", "_KEY_WEIGHT"))


def point_weights(ob, name):
    """Per-vertex floats of `ob` named `name`: its FLOAT point attribute, else its vertex
    group (0 where a vertex is not in it), else None."""
    mesh = ob.data
    attr = mesh.attributes.get(name)
    if attr is not None and attr.domain == "POINT" and attr.data_type == "FLOAT":
        values = [0.0] * len(mesh.vertices)
        attr.data.foreach_get("value", values)
        return values
    group = ob.vertex_groups.get(name)
    if group is None:
        return None
    values = [0.0] * len(mesh.vertices)
    for v in mesh.vertices:
        for g in v.groups:
            if g.group == group.index:
                values[v.index] = g.weight
    return values


class gltf_attributes:
    """Context manager writing the garment's glTF point attributes: `_DRAPE_INDEX` (INT, the
    vertex index) and `_PIN` / `_KEY_WEIGHT` from `pin` / `key_weight` (`WEIGHTS`); on exit
    removes them and restores attributes of those names the mesh had."""

    def __init__(self, ob):
        self.ob = ob
        self.saved = []  # (name, data_type, domain, values) of replaced attributes
        self.written = []

    def _write(self, name, data_type, values):
        attrs = self.ob.data.attributes
        old = attrs.get(name)
        if old is not None:
            if old.data_type in ("INT", "FLOAT") and old.domain == "POINT":
                kept = [0] * len(old.data)
                old.data.foreach_get("value", kept)
                self.saved.append((name, old.data_type, old.domain, kept))
            attrs.remove(attrs.get(name))
        attrs.new(name, data_type, "POINT").data.foreach_set("value", values)
        self.written.append(name)

    def __enter__(self):
        weights = [(dst, point_weights(self.ob, src)) for src, dst in WEIGHTS]
        self._write(INDEX_ATTRIBUTE, "INT", list(range(len(self.ob.data.vertices))))
        for name, values in weights:
            if values is not None:
                self._write(name, "FLOAT", values)
        return self

    def __exit__(self, *exc):
        attrs = self.ob.data.attributes
        for name in self.written:
            if attrs.get(name) is not None:
                attrs.remove(attrs.get(name))
        for name, data_type, domain, values in self.saved:
            attrs.new(name, data_type, domain).data.foreach_set("value", values)
        return False


def export_gltf(context, garment, bodies, path):
    """Writes the garment (marked `drape_role = "garment"`, in its rest shape, with
    `_DRAPE_INDEX`, `_PIN`, `_KEY_WEIGHT`: `gltf_attributes`) and the bodies, with the
    armatures that deform them, to the binary glTF `path` with Blender's glTF exporter,
    animation sampled over the scene's frame range; restores the selection and the
    garment's attributes."""
    rigs = [a for b in bodies for a in deforming_armatures(b)]
    objects = [garment, *bodies, *(a for i, a in enumerate(rigs) if a not in rigs[:i])]
    with _selected(context, garment, objects), cache.modifiers_hidden(garment), \
            keyframes.rest_shape(garment), gltf_attributes(garment):
        try:
            result = bpy.ops.export_scene.gltf(
                filepath=path,
                export_format="GLB",
                check_existing=False,
                use_selection=True,
                export_extras=True,  # custom properties: drape_role
                export_attributes=True,  # _DRAPE_INDEX
                export_yup=True,
                export_apply=False,  # the garment's own vertices; bodies move by skins
                export_texcoords=True,
                export_normals=False,
                export_materials="NONE",
                export_animations=True,
                export_animation_mode="SCENE",
                export_frame_range=True,
                export_anim_slide_to_zero=False,  # glTF time t = frame / fps
                export_force_sampling=True,
                export_skins=True,
                export_morph=False,  # keyframes travel as MDD (keyframes.write_keyframes)
                export_cameras=False,
                export_lights=False,
            )
        except RuntimeError as e:
            raise runner.DrapeError(f"glTF export to {path} failed: {e}") from e
    if "FINISHED" not in result:
        raise runner.DrapeError(f"glTF export to {path} failed")


def export_scene(context, garment, bodies, path, export_format="USD"):
    """Exports with `export_usd` or `export_gltf` by `export_format` ('USD' or 'GLTF')."""
    if export_format == "GLTF":
        return export_gltf(context, garment, bodies, path)
    if export_format == "USD":
        return export_usd(context, garment, bodies, path)
    raise runner.DrapeError(f"unknown export format {export_format!r}; use 'USD' or 'GLTF'")
