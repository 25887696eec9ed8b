"""Drape for Blender: Object ▸ Drape ▸ Simulate Garment / Match Keyframes / Match Silhouettes /
Bake All Garments
(README.md, "Blender extension").

The active object is the garment, the other selected meshes are bodies (none selected: the
bodies of the garment's last bake). The bake settings (material, frames, quality as the
largest step, rest state, export format) live on the garment (`Object.drape`, `settings`), so a re-bake
and Bake All repeat them. The drape binary is the preference "drape binary" if set, else the
one packaged in the extension (`bin/drape`, scripts/build-blender-extension.sh), else drape
on PATH. The garment (marked by the custom property `drape_role = "garment"`) and the
bodies are exported (`export`) to a temporary USD, which keeps Blender's vertex order and
bakes armature motion to time-sampled points, or to glTF (the panel's Export Format, or the
operators' `export_format`), where a `_DRAPE_INDEX` attribute maps the vertices the exporter
splits back to Blender's; `drape simulate --progress json` runs in a subprocess
(`runner.Job`) and its PC2 is loaded by a Mesh Cache modifier (`cache.apply_mesh_cache`).
From the UI the operators are modal (progress bar, status text, Esc cancels and loads the
partial cache); in background mode they block until drape ends (`operators`).

Match Keyframes does the same with `drape control`: the garment's shape keys `key_<frame>`
are the shapes it must reach at those frames, written to an MDD keyframe file
(`keyframes.write_keyframes`); the status text shows the objective and the RMS keyframe
error of every L-BFGS iteration, then the frames of the final bake. Match Silhouettes asks
instead that, seen from the scene camera, the garment's outline fill the selected Grease
Pencil strokes (or curves) drawn in camera view at their frames (`silhouettes.collect`,
`drape control --silhouettes`); its status text shows the silhouette IoU.

Shape keys and the cache: the exported garment is the rest shape (`key_<frame>` keys are
muted during the export, `keyframes.rest_shape`), and the Mesh Cache modifier overwrites
every vertex (`deform_mode = 'OVERWRITE'`, factor 1, first in the stack) after the shape
keys are applied, so shape key values never alter the played cache. Keep `key_<frame>` keys
at value 0 (Blender's default for a new key) so that without the cache the garment shows
its rest shape.
"""

import os

import bpy
from bpy.props import StringProperty

from . import cache, export, keyframes, operators, runner, settings, silhouettes  # noqa: F401
from .export import export_gltf, export_usd  # noqa: F401 (used by scripts and tests)
from .operators import (  # noqa: F401 (the operators' machinery, used by the tests)
    EXTENSION_DIR, OPERATOR_FORMATS, DRAPE_OT_bake_all, DRAPE_OT_match_keyframes,
    DRAPE_OT_match_silhouettes, DRAPE_OT_simulate_garment, _DrapeJobOperator, _paths, binary)


class DrapePreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    binary_path: StringProperty(
        name="drape binary",
        description="Path to a drape executable, overriding the one packaged in the "
                    "extension; empty: the packaged one, else drape on PATH",
        subtype="FILE_PATH",
        default="",
    )

    def draw(self, context):
        self.layout.prop(self, "binary_path")
        try:
            found = binary(context)
        except runner.DrapeError as e:
            found = str(e)
        self.layout.label(text=f"Uses: {found}")


class DRAPE_MT_object(bpy.types.Menu):
    bl_idname = "DRAPE_MT_object"
    bl_label = "Drape"

    def draw(self, context):
        self.layout.operator(DRAPE_OT_simulate_garment.bl_idname)
        self.layout.operator(DRAPE_OT_match_keyframes.bl_idname)
        self.layout.operator(DRAPE_OT_match_silhouettes.bl_idname)
        self.layout.operator(DRAPE_OT_bake_all.bl_idname)


class DRAPE_PT_physics(bpy.types.Panel):
    bl_label = "Drape"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == "MESH"

    def draw(self, context):
        layout = self.layout
        own = context.object.drape
        layout.prop(own, "material")
        layout.prop(own, "max_step", text="Quality: Max Step")
        layout.prop(own, "rest")
        layout.prop(own, "use_scene_frames")
        if not own.use_scene_frames:
            row = layout.row(align=True)
            row.prop(own, "frame_start")
            row.prop(own, "frame_end")
        layout.prop(own, "export_format")
        layout.prop(own, "cache_format")
        if own.bodies:
            names = ", ".join(b.object.name for b in own.bodies if b.object is not None)
            layout.label(text=f"Bodies: {names}", icon="OUTLINER_OB_MESH")
        col = layout.column(align=True)
        col.operator(DRAPE_OT_simulate_garment.bl_idname, icon="MOD_CLOTH")
        col.operator(DRAPE_OT_match_keyframes.bl_idname, icon="SHAPEKEY_DATA")
        col.operator(DRAPE_OT_match_silhouettes.bl_idname, icon="OUTLINER_OB_GREASEPENCIL")
        col.operator(DRAPE_OT_bake_all.bl_idname, icon="RENDER_ANIMATION")
        mod = cache.find_modifier(context.object)
        if mod is not None:
            path = mod.filepath if mod.type == "MESH_CACHE" else getattr(
                mod.cache_file, "filepath", "")
            layout.label(text=f"Cache: {os.path.basename(path)}", icon="FILE_CACHE")


def _menu(self, context):
    self.layout.menu(DRAPE_MT_object.bl_idname)


CLASSES = (DrapePreferences, *operators.CLASSES, DRAPE_MT_object, DRAPE_PT_physics)


def register():
    settings.register()
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.VIEW3D_MT_object.append(_menu)


def unregister():
    bpy.types.VIEW3D_MT_object.remove(_menu)
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
    settings.unregister()
