"""Drape for Blender: Object ▸ Drape ▸ Simulate Garment / Match Keyframes (README.md,
"Blender extension").

The active object is the garment, the other selected meshes are bodies, the frame range is
the scene's. The garment (marked by the custom property `drape_role = "garment"`) and the
bodies are exported (`export`) to a temporary USD, which keeps Blender's vertex order and
bakes armature motion to time-sampled points, or to glTF (the panel's Export Format, or the
operators' `export_format`), where a `_DRAPE_INDEX` attribute maps the vertices the exporter
splits back to Blender's; `drape simulate --progress json` runs in a subprocess
(`runner.Job`) and its PC2 is loaded by a Mesh Cache modifier (`cache.apply_mesh_cache`).
From the UI the operators are modal (progress bar, status text, Esc cancels and loads the
partial cache; `start_modal`, `modal`, `finish`); in background mode they block until drape
ends (`execute`).

Match Keyframes does the same with `drape control`: the garment's shape keys `key_<frame>`
are the shapes it must reach at those frames, written to an MDD keyframe file
(`keyframes.write_keyframes`); the status text shows the objective and the RMS keyframe
error of every L-BFGS iteration, then the frames of the final bake.

Shape keys and the cache: the exported garment is the rest shape (`key_<frame>` keys are
muted during the export, `keyframes.rest_shape`), and the Mesh Cache modifier overwrites
every vertex (`deform_mode = 'OVERWRITE'`, factor 1, first in the stack) after the shape
keys are applied, so shape key values never alter the played cache. Keep `key_<frame>` keys
at value 0 (Blender's default for a new key) so that without the cache the garment shows
its rest shape.
"""
import os
import re

import bpy
from bpy.props import (EnumProperty, FloatProperty, IntProperty, PointerProperty,
                       StringProperty)

from . import cache, export, keyframes, runner
from .export import export_gltf, export_usd  # noqa: F401 (used by scripts and tests)

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
    export_format: EnumProperty(
        name="Export Format",
        description="How the garment and bodies are handed to drape",
        items=export.FORMATS,
        default="USD",
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


def _paths(garment, export_format="USD"):
    """(scene file, result PC2, keyframe MDD) of `garment` in the work directory; the scene's
    extension is that of `export_format`."""
    work, name = _work_dir(), _safe(garment.name)
    ends = ("_scene" + export.EXTENSION.get(export_format, ".usdc"), ".pc2", "_keys.mdd")
    return tuple(os.path.join(work, name + end) for end in ends)


def _fps(scene):
    return scene.render.fps / scene.render.fps_base


def _options(context, export_format="USD"):
    """The options common to drape simulate and control: scene frames and fps, the panel's
    material and max step, and what the export format needs (`--up z` for glTF)."""
    scene = context.scene
    settings = scene.drape_settings
    return dict(
        frames=(scene.frame_start, scene.frame_end),
        fps=_fps(scene),
        material=settings.material,
        max_step=settings.max_step or None,
        extra=export.UP_ARGS.get(export_format, ()),
    )


#: The operators' `export_format`: the panel's setting, or one format for this call.
OPERATOR_FORMATS = (("SCENE", "Panel Setting", "The Export Format of the Drape panel"),
                    *export.FORMATS)


class _DrapeJobOperator:
    """Shared modal / blocking machinery of the drape operators.

    Blocking (`execute`): prepare (export, command line), run drape to its end, `finish`.
    Modal (`invoke` from the UI -> `start_modal`): prepare, start drape, add a window timer;
    on every TIMER event `modal` drains the job's event queue on the main thread and shows
    its progress (progress bar, status text); Esc asks drape to stop at the next frame (a
    second Esc kills it); once drape has ended `finish` removes the timer and loads the
    cache (the `.partial` one after a cancel or failure) and reports."""

    _job = None
    _timer = None

    def export_format_of(self, context):
        """'USD' or 'GLTF': the operator's `export_format`, else the panel's."""
        chosen = getattr(self, "export_format", "SCENE")
        if chosen in (None, "", "SCENE"):
            chosen = context.scene.drape_settings.export_format
        return chosen

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == "MESH" and context.mode == "OBJECT"

    def prepare(self, context):
        """Returns (command, output path, garment); raises runner.DrapeError."""
        raise NotImplementedError

    def start_job(self, context):
        """Prepares (export, command line), removes a stale `<out>.partial` of an earlier
        bake (so that only this bake's frames can be loaded) and starts drape; reports and
        returns False on a runner.DrapeError."""
        try:
            command, self._out, self._garment = self.prepare(context)
            runner.remove_partial(self._out)
            self._job = runner.Job(command).start()
        except runner.DrapeError as e:
            self.report({"ERROR"}, str(e))
            return False
        return True

    def execute(self, context):
        if not self.start_job(context):
            return {"CANCELLED"}
        self._job.run(on_event=self._log_event)
        return self.finish(context)

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        return self.start_modal(context)

    def start_modal(self, context):
        """Prepares, starts drape and registers the modal handler with a 0.1 s timer."""
        if not self.start_job(context):
            return {"CANCELLED"}
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        wm.progress_begin(0, 100)
        _status(context, "drape: starting (Esc cancels)")
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC" and event.value == "PRESS":
            if self._job.cancelled:
                self._job.kill()  # a second Esc stops at once
            else:
                self._job.cancel()
                _status(context, "drape: cancelling at the next frame (Esc again: stop now)")
            return {"RUNNING_MODAL"}
        if event.type == "TIMER":
            for e in self._job.poll():
                self._log_event(e)
            progress = self._job.progress
            context.window_manager.progress_update(int(100 * progress.fraction))
            if not self._job.cancelled:
                _status(context, progress.status + " (Esc cancels)")
            if self._job.finished:
                return self.finish(context)
        return {"PASS_THROUGH"}

    def _log_event(self, event):
        kind = event.get("event")
        if kind == "warning":
            print("drape warning:", event.get("message", ""))
        elif kind == "iteration" and bpy.app.background:
            print(runner.iteration_status(event))  # the modal path shows it as status text

    def finish(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
            wm.progress_end()
            _status(context, None)
        job = self._job
        code = job.wait()
        loaded = runner.result_path(self._out, code)
        first = context.scene.frame_start
        if loaded is not None:
            try:
                cache.apply_mesh_cache(self._garment, loaded, first)
            except ReferenceError:  # the garment was deleted while drape ran (modal path)
                self.report({"WARNING"}, f"drape: the garment was deleted; cache {loaded} "
                                         "kept on disk, load it with a Mesh Cache modifier")
                return {"CANCELLED"}
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


def _status(context, text):
    """Shows `text` in the status bar (None clears it), when there is a workspace."""
    workspace = getattr(context, "workspace", None)
    if workspace is not None:
        workspace.status_text_set(text)


class DRAPE_OT_simulate_garment(_DrapeJobOperator, bpy.types.Operator):
    """Simulate the active mesh as a garment over the other selected meshes and load the
    result as a Mesh Cache"""

    bl_idname = "drape.simulate_garment"
    bl_label = "Simulate Garment"
    bl_options = {"REGISTER"}

    export_format: EnumProperty(
        name="Export Format", description="How the garment and bodies are handed to drape",
        items=OPERATOR_FORMATS, default="SCENE",
    )

    def prepare(self, context):
        garment, bodies = _selection(context)
        exe = binary(context)
        fmt = self.export_format_of(context)
        scene_path, out, _ = _paths(garment, fmt)
        export.export_scene(context, garment, bodies, scene_path, fmt)
        command = runner.simulate_command(exe, scene_path, out, **_options(context, fmt))
        return command, out, garment


class DRAPE_OT_match_keyframes(_DrapeJobOperator, bpy.types.Operator):
    """Simulate the active garment over the other selected meshes with gentle control forces
    so that it matches its shape keys key_<frame> at those frames (drape control), and load
    the result as a Mesh Cache"""

    bl_idname = "drape.match_keyframes"
    bl_label = "Match Keyframes"
    bl_options = {"REGISTER"}

    regularization: FloatProperty(
        name="Regularization",
        description="Price of the control forces against keyframe error (drape "
                    "--regularization): lower hits the keyframes more exactly with stronger "
                    "forces",
        default=1e-4, min=1e-12, soft_min=1e-8, soft_max=1.0, precision=6,
    )
    iterations: IntProperty(
        name="Iterations",
        description="L-BFGS iterations at most (drape --iterations); each simulates the "
                    "frames up to the last keyframe forward and backward",
        default=40, min=0, soft_max=200,
    )
    export_format: EnumProperty(
        name="Export Format", description="How the garment and bodies are handed to drape",
        items=OPERATOR_FORMATS, default="SCENE",
    )

    def prepare(self, context):
        garment, bodies = _selection(context)
        keys = keyframes.keyframe_keys(garment)
        if not keys:
            raise runner.DrapeError(
                f"{garment.name} has no shape keys named key_<frame>; add one per keyframe "
                "(e.g. key_24), shaped as the garment must be at that frame, value 0"
            )
        scene = context.scene
        first, last = scene.frame_start, scene.frame_end
        outside = [block.name for frame, block in keys if not first < frame <= last]
        if outside:
            raise runner.DrapeError(
                f"shape keys {', '.join(outside)} of {garment.name} lie outside frames "
                f"{first + 1}..{last} (frame {first} is the start state); rename them or "
                "change the scene's frame range"
            )
        exe = binary(context)
        fmt = self.export_format_of(context)
        scene_path, out, mdd = _paths(garment, fmt)
        export.export_scene(context, garment, bodies, scene_path, fmt)
        keyframes.write_keyframes(garment, mdd, _fps(scene), y_up=fmt == "GLTF")
        command = runner.control_command(
            exe, scene_path, mdd, out,
            regularization=self.regularization, iterations=self.iterations,
            **_options(context, fmt),
        )
        return command, out, garment


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
        layout.prop(settings, "export_format")
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
