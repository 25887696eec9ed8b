"""Drape for Blender: Object ▸ Drape ▸ Simulate Garment / Match Keyframes (SPEC "Blender
extension").

The active object is the garment, the other selected meshes are bodies, the frame range is
the scene's. The garment (marked by the custom property `drape_role = "garment"`) and the
bodies (armature motion baked to time-sampled points) are exported to a temporary USD, which
keeps Blender's vertex order; `drape simulate --progress json` runs in a subprocess
(`runner.Job`) and its PC2 is loaded by a Mesh Cache modifier (`cache.apply_mesh_cache`).
From the UI the operator is modal (progress bar, status text, Esc cancels and loads the
partial cache); in background mode it blocks until drape ends.
"""
import os
import re

import bpy
from bpy.props import EnumProperty, FloatProperty, PointerProperty, StringProperty

from . import cache, runner

EXTENSION_DIR = os.path.dirname(os.path.abspath(__file__))


def _prefs(context):
    addon = context.preferences.addons.get(__package__)
    return addon.preferences if addon else None


def binary(context):
    """The drape executable from the preference, else PATH, else beside the extension."""
    prefs = _prefs(context)
    return runner.find_binary(prefs.binary_path if prefs else "", EXTENSION_DIR)


class DrapePreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    binary_path: StringProperty(
        name="drape binary",
        description="Path to the drape executable; empty: found on PATH, then beside the extension",
        subtype="FILE_PATH",
        default="",
    )

    def draw(self, context):
        self.layout.prop(self, "binary_path")


class DrapeSettings(bpy.types.PropertyGroup):
    material: EnumProperty(
        name="Material",
        description="Cloth material preset (drape --material)",
        items=[(m, m.capitalize(), f"drape's {m} preset") for m in runner.MATERIALS],
        default="cotton",
    )
    max_step: FloatProperty(
        name="Max Step",
        description="Largest solver time step in seconds (0: drape's default, one frame)",
        default=0.0, min=0.0, soft_max=0.1, precision=4, unit="TIME_ABSOLUTE",
    )


def _work_dir():
    """Beside the .blend (`//drape/`) when it is saved, else Blender's temporary directory."""
    if bpy.data.filepath:
        path = os.path.join(os.path.dirname(bpy.path.abspath(bpy.data.filepath)), "drape")
    else:
        path = os.path.join(bpy.app.tempdir or os.path.join(os.sep, "tmp"), "drape")
    os.makedirs(path, exist_ok=True)
    return path


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "garment"


def _selection(context):
    garment = context.active_object
    if garment is None or garment.type != "MESH":
        raise runner.DrapeError("make the garment mesh the active object")
    bodies = [o for o in context.selected_objects if o is not garment and o.type == "MESH"]
    return garment, bodies


def export_usd(context, garment, bodies, path):
    """Writes the garment (marked `drape_role = "garment"`) and the bodies to `path` with
    Blender's USD exporter over the scene's frame range; restores the selection."""
    view_layer = context.view_layer
    saved_selection = [o for o in context.selected_objects]
    saved_active = view_layer.objects.active
    garment["drape_role"] = "garment"
    for body in bodies:
        if body.get("drape_role") == "garment":
            del body["drape_role"]
    try:
        for o in saved_selection:
            o.select_set(False)
        for o in [garment, *bodies]:
            o.select_set(True)
        view_layer.objects.active = garment
        with cache.modifiers_hidden(garment):
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
    finally:
        for o in context.selected_objects:
            o.select_set(False)
        for o in saved_selection:
            o.select_set(True)
        view_layer.objects.active = saved_active


class _DrapeJobOperator:
    """Shared modal / blocking machinery of the drape operators."""

    _job = None
    _timer = None

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == "MESH" and context.mode == "OBJECT"

    def prepare(self, context):
        """Returns (command, output path, garment); raises runner.DrapeError."""
        raise NotImplementedError

    def execute(self, context):
        try:
            command, self._out, self._garment = self.prepare(context)
            self._job = runner.Job(command)
            self._job.start()
        except runner.DrapeError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._job.run(on_event=self._log_event)
        return self.finish(context)

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        try:
            command, self._out, self._garment = self.prepare(context)
            self._job = runner.Job(command).start()
        except runner.DrapeError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        wm.progress_begin(0, 100)
        context.workspace.status_text_set("drape: starting (Esc cancels)")
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC" and event.value == "PRESS":
            if self._job.cancelled:
                self._job.kill()  # a second Esc stops at once
            else:
                self._job.cancel()
                context.workspace.status_text_set("drape: cancelling at the next frame")
            return {"RUNNING_MODAL"}
        if event.type == "TIMER":
            for e in self._job.poll():
                self._log_event(e)
            progress = self._job.progress
            context.window_manager.progress_update(int(100 * progress.fraction))
            if not self._job.cancelled:
                context.workspace.status_text_set(progress.status + " (Esc cancels)")
            if self._job.finished:
                return self.finish(context)
        return {"PASS_THROUGH"}

    def _log_event(self, event):
        if event.get("event") == "warning":
            print("drape warning:", event.get("message", ""))

    def finish(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
            wm.progress_end()
            context.workspace.status_text_set(None)
        job = self._job
        code = job.wait()
        loaded = runner.result_path(self._out, code)
        first = context.scene.frame_start
        if loaded is not None:
            cache.apply_mesh_cache(self._garment, loaded, first)
        error = job.error()
        if code == runner.EXIT_OK:
            self.report({"INFO"}, f"drape: cache {loaded} loaded on {self._garment.name}")
            return {"FINISHED"}
        if job.cancelled or code == runner.EXIT_INTERRUPTED:
            msg = "drape cancelled"
            msg += f"; partial cache {loaded} loaded" if loaded else "; no frame was finished"
            self.report({"WARNING"}, msg)
            return {"FINISHED"} if loaded else {"CANCELLED"}
        msg = error or f"drape exited with code {code}"
        if loaded:
            msg += f" (partial cache {loaded} loaded)"
        self.report({"ERROR"}, msg)
        return {"CANCELLED"}


class DRAPE_OT_simulate_garment(_DrapeJobOperator, bpy.types.Operator):
    """Simulate the active mesh as a garment over the other selected meshes and load the
    result as a Mesh Cache"""

    bl_idname = "drape.simulate_garment"
    bl_label = "Simulate Garment"
    bl_options = {"REGISTER"}

    def prepare(self, context):
        garment, bodies = _selection(context)
        scene = context.scene
        settings = scene.drape_settings
        work = _work_dir()
        name = _safe(garment.name)
        usd = os.path.join(work, f"{name}_scene.usdc")
        out = os.path.join(work, f"{name}.pc2")
        export_usd(context, garment, bodies, usd)
        command = runner.simulate_command(
            binary(context), usd, out,
            frames=(scene.frame_start, scene.frame_end),
            fps=scene.render.fps / scene.render.fps_base,
            material=settings.material,
            max_step=settings.max_step or None,
        )
        return command, out, garment


class DRAPE_OT_match_keyframes(bpy.types.Operator):
    """Simulate the active garment so that it matches its shape keys key_<frame> (drape
    control)"""

    bl_idname = "drape.match_keyframes"
    bl_label = "Match Keyframes"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == "MESH"

    def execute(self, context):
        garment = context.active_object
        keys = garment.data.shape_keys
        frames = sorted(
            int(k.name[4:]) for k in (keys.key_blocks if keys else [])
            if re.fullmatch(r"key_-?\d+", k.name)
        )
        if not frames:
            self.report({"ERROR"}, f"{garment.name} has no shape keys named key_<frame>")
            return {"CANCELLED"}
        self.report(
            {"ERROR"},
            "Match Keyframes needs `drape control`, which this drape build does not have yet "
            f"(keyframes found at frames {frames}); use Simulate Garment",
        )
        return {"CANCELLED"}


class DRAPE_MT_object(bpy.types.Menu):
    bl_idname = "DRAPE_MT_object"
    bl_label = "Drape"

    def draw(self, context):
        self.layout.operator(DRAPE_OT_simulate_garment.bl_idname)
        self.layout.operator(DRAPE_OT_match_keyframes.bl_idname)


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
        settings = context.scene.drape_settings
        layout.prop(settings, "material")
        layout.prop(settings, "max_step")
        col = layout.column(align=True)
        col.operator(DRAPE_OT_simulate_garment.bl_idname, icon="MOD_CLOTH")
        col.operator(DRAPE_OT_match_keyframes.bl_idname, icon="SHAPEKEY_DATA")
        mod = cache.find_modifier(context.object)
        if mod is not None:
            layout.label(text=f"Cache: {os.path.basename(mod.filepath)}", icon="FILE_CACHE")


def _menu(self, context):
    self.layout.menu(DRAPE_MT_object.bl_idname)


CLASSES = (
    DrapePreferences,
    DrapeSettings,
    DRAPE_OT_simulate_garment,
    DRAPE_OT_match_keyframes,
    DRAPE_MT_object,
    DRAPE_PT_physics,
)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Scene.drape_settings = PointerProperty(type=DrapeSettings)
    bpy.types.VIEW3D_MT_object.append(_menu)


def unregister():
    bpy.types.VIEW3D_MT_object.remove(_menu)
    del bpy.types.Scene.drape_settings
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
