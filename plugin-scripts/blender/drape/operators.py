"""The drape operators: Simulate Garment, Match Keyframes, Match Silhouettes and Bake All.

Each bake exports the garment and its bodies (`export`), runs drape in a subprocess
(`runner.Job`) and loads the cache (`cache.apply_cache`: a PC2 with a Mesh Cache modifier, an
Alembic archive with a Mesh Sequence Cache modifier), then
re-evaluates the scene at the current frame so the garment plays the cache at once. The bake
settings are the garment's own (`settings`, `Object.drape`); the bodies of a bake are stored
on the garment, so a re-bake with only the garment selected, and Bake All, repeat it.

From the UI the operators are modal (progress bar, status text, Esc cancels and loads the
partial cache; `start_modal`, `modal`, `finish`); in background mode they block until drape
ends (`execute`). A failed bake reports drape's message, the partial cache it loaded and
what to do (`runner.advice`); when drape's `--report` names the garment particles where the
trouble was (`runner.report_particles`), those vertices are selected.
"""
import os
import re

import bpy
from bpy.props import EnumProperty, FloatProperty, IntProperty

from . import cache, export, keyframes, runner, settings, silhouettes

EXTENSION_DIR = os.path.dirname(os.path.abspath(__file__))


def _prefs(context):
    addon = context.preferences.addons.get(__package__)
    return addon.preferences if addon else None


def binary(context):
    """The drape executable: the preference if set, else the one packaged in the extension
    (bin/drape), else drape on PATH (`runner.find_binary`)."""
    prefs = _prefs(context)
    return runner.find_binary(prefs.binary_path if prefs else "", EXTENSION_DIR)


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
    """(garment, bodies): the active mesh and the other selected meshes; with no other mesh
    selected, the bodies of the garment's last bake."""
    garment = context.active_object
    if garment is None or garment.type != "MESH":
        raise runner.DrapeError("make the garment mesh the active object")
    bodies = [o for o in context.selected_objects if o is not garment and o.type == "MESH"]
    if not bodies:
        bodies = settings.stored_bodies(garment.drape, context.scene)
    return garment, bodies


def _paths(garment, export_format="USD"):
    """(scene file, result cache, keyframe MDD, silhouettes JSON) of `garment` in the work
    directory; the scene's extension is that of `export_format`, the cache's that of the
    garment's Cache Format (`.pc2` or `.abc`)."""
    work, name = _work_dir(), _safe(garment.name)
    out = settings.CACHE_EXTENSION.get(getattr(garment.drape, "cache_format", "PC2"), ".pc2")
    ends = ("_scene" + export.EXTENSION.get(export_format, ".usdc"), out, "_keys.mdd",
            "_silhouettes.json")
    return tuple(os.path.join(work, name + end) for end in ends)


def report_path(out):
    """The JSON report drape writes beside the cache `out` (`--report`)."""
    return os.path.splitext(str(out))[0] + "_report.json"


def _fps(scene):
    return scene.render.fps / scene.render.fps_base


def _options(context, garment, out, export_format="USD"):
    """The options common to drape simulate and control: the garment's frames, material,
    max step and rest state, the scene's fps, the report beside `out`, and what the export
    format needs (`--up z` for glTF)."""
    scene = context.scene
    own = garment.drape
    return dict(
        frames=settings.frames(scene, own),
        fps=_fps(scene),
        material=own.material,
        max_step=own.max_step or None,
        rest=own.rest.lower(),
        report=report_path(out),
        extra=export.UP_ARGS.get(export_format, ()),
    )


def select_vertices(ob, indices):
    """Selects exactly the vertices `indices` of the mesh `ob` (shown in Edit Mode); returns
    how many were selected."""
    vertices = ob.data.vertices
    chosen = [i for i in indices if 0 <= i < len(vertices)]
    flags = [False] * len(vertices)
    for i in chosen:
        flags[i] = True
    vertices.foreach_set("select", flags)
    ob.data.update()
    return len(chosen)


def refresh(context):
    """Re-evaluates the scene at the current frame and redraws, so a newly loaded cache
    plays at once."""
    scene = context.scene
    scene.frame_set(scene.frame_current)
    screen = getattr(context, "screen", None)
    for area in getattr(screen, "areas", ()):
        area.tag_redraw()


#: The operators' `export_format`: the garment's setting, or one format for this call.
OPERATOR_FORMATS = (("SCENE", "Garment Setting", "The Export Format of the garment's Drape "
                                                 "settings"),
                    *export.FORMATS)


class _DrapeJobOperator:
    """Shared modal / blocking machinery of the drape operators.

    Blocking (`execute`): prepare (export, command line), run drape to its end, `finish`.
    Modal (`invoke` from the UI -> `start_modal`): prepare, start drape, add a window timer;
    on every TIMER event `modal` drains the job's event queue on the main thread and shows
    its progress (progress bar, status text); Esc asks drape to stop (a second Esc kills
    it); once drape has ended `finish` removes the timer, loads the cache (the `.partial`
    one after a cancel or failure) and reports (`load_result`)."""

    _job = None
    _timer = None

    def export_format_of(self, context, garment=None):
        """'USD' or 'GLTF': the operator's `export_format`, else the garment's."""
        chosen = getattr(self, "export_format", "SCENE")
        if chosen in (None, "", "SCENE"):
            garment = garment if garment is not None else context.active_object
            chosen = garment.drape.export_format
        return chosen

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == "MESH" and context.mode == "OBJECT"

    def prepare(self, context):
        """Returns (command, output path, garment); raises runner.DrapeError."""
        raise NotImplementedError

    def start_job(self, context):
        """Prepares (export, command line), removes a stale `<out>.partial` and report of an
        earlier bake (so that only this bake's frames can be loaded) and starts drape;
        reports and returns False on a runner.DrapeError."""
        try:
            command, self._out, self._garment = self.prepare(context)
            self._first = settings.frames(context.scene, self._garment.drape)[0]
            runner.remove_partial(self._out)
            if os.path.exists(report_path(self._out)):
                os.remove(report_path(self._out))
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
                _status(context, "drape: cancelling (Esc again: stop now)")
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

    def end_modal(self, context):
        """Removes the timer, the progress bar and the status text of the modal path."""
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
            wm.progress_end()
            _status(context, None)

    def finish(self, context):
        self.end_modal(context)
        return self.load_result(context)

    def load_result(self, context):
        """Loads the cache of the ended job on its garment and reports; returns the
        operator result."""
        job = self._job
        code = job.wait()
        loaded = runner.result_path(self._out, code)
        if loaded is not None:
            try:
                cache.apply_cache(self._garment, loaded, self._first)
            except ReferenceError:  # the garment was deleted while drape ran (modal path)
                self.report({"WARNING"}, f"drape: the garment was deleted; cache {loaded} "
                                         "kept on disk, load it with a cache modifier")
                return {"CANCELLED"}
            refresh(context)
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
        msg += self.select_trouble()
        tip = runner.advice(code)
        if tip:
            msg += ". " + tip
        self.report({"ERROR"}, msg)
        return {"CANCELLED"}

    def select_trouble(self):
        """Selects the garment vertices the failed bake's report names; returns the sentence
        saying so ("" when the report names none)."""
        particles = runner.report_particles(runner.read_report(report_path(self._out)))
        try:
            count = select_vertices(self._garment, particles) if particles else 0
        except ReferenceError:
            return ""
        if not count:
            return ""
        return f"; the {count} vertices where it went wrong are selected (Edit Mode)"


def _status(context, text):
    """Shows `text` in the status bar (None clears it), when there is a workspace."""
    workspace = getattr(context, "workspace", None)
    if workspace is not None:
        workspace.status_text_set(text)


def simulate_command(context, garment, bodies, export_format):
    """Exports `garment` and `bodies` and returns (command, output path) of `drape simulate`
    with the garment's settings; remembers the bodies on the garment."""
    exe = binary(context)
    scene_path, out = _paths(garment, export_format)[:2]
    settings.remember(garment, bodies)
    export.export_scene(context, garment, bodies, scene_path, export_format)
    command = runner.simulate_command(
        exe, scene_path, out, **_options(context, garment, out, export_format))
    return command, out


class DRAPE_OT_simulate_garment(_DrapeJobOperator, bpy.types.Operator):
    """Simulate the active mesh as a garment over the other selected meshes (none selected:
    the bodies of its last bake) and load the result as a Mesh Cache"""

    bl_idname = "drape.simulate_garment"
    bl_label = "Simulate Garment"
    bl_options = {"REGISTER"}

    export_format: EnumProperty(
        name="Export Format", description="How the garment and bodies are handed to drape",
        items=OPERATOR_FORMATS, default="SCENE",
    )

    def prepare(self, context):
        garment, bodies = _selection(context)
        fmt = self.export_format_of(context, garment)
        command, out = simulate_command(context, garment, bodies, fmt)
        return command, out, garment


class DRAPE_OT_bake_all(_DrapeJobOperator, bpy.types.Operator):
    """Bake every garment of the scene (every mesh baked before with Simulate Garment), one
    after the other, each with its own settings and bodies"""

    bl_idname = "drape.bake_all"
    bl_label = "Bake All Garments"
    bl_options = {"REGISTER"}

    _queue = ()
    _baked = 0
    _failed = 0

    @classmethod
    def poll(cls, context):
        return context.mode == "OBJECT" and bool(settings.garments(context.scene))

    def prepare(self, context):
        garment = self._queue.pop(0)
        bodies = settings.stored_bodies(garment.drape, context.scene)
        command, out = simulate_command(context, garment, bodies,
                                        self.export_format_of(context, garment))
        return command, out, garment

    def _start_all(self, context):
        self._queue = list(settings.garments(context.scene))
        self._baked = self._failed = 0
        if not self._queue:
            self.report({"ERROR"}, "no garment in the scene: bake one with Simulate Garment")
            return False
        return True

    def execute(self, context):
        if not self._start_all(context):
            return {"CANCELLED"}
        while self._queue:
            if not self.start_job(context):
                self._failed += 1
                continue
            self._job.run(on_event=self._log_event)
            self._count(self.load_result(context))
        return self._summary()

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        if not self._start_all(context):
            return {"CANCELLED"}
        return self.start_modal(context)

    def finish(self, context):
        """Loads the ended bake, then starts the next garment's (modal path); Esc drops the
        garments not yet started."""
        self._count(self.load_result(context))
        if self._job.cancelled:
            self._queue = []
        while self._queue:
            if self.start_job(context):
                return {"RUNNING_MODAL"}
            self._failed += 1
        self.end_modal(context)
        return self._summary()

    def _count(self, result):
        if "FINISHED" in result:
            self._baked += 1
        else:
            self._failed += 1

    def _summary(self):
        failed = f", {self._failed} failed or cancelled" if self._failed else ""
        self.report({"WARNING"} if failed else {"INFO"},
                    f"drape: {self._baked} garments baked{failed}")
        return {"FINISHED"} if self._baked else {"CANCELLED"}


def control_command(operator, context, garment, bodies, write_targets):
    """Exports `garment` and `bodies` and returns the `drape control` command line and the
    output path, with the operator's `regularization` and `iterations`; `write_targets`
    (export format, MDD path, silhouettes path) writes the targets and returns the
    keyword arguments `keyframes` / `silhouettes` of `runner.control_command`."""
    exe = binary(context)
    fmt = operator.export_format_of(context, garment)
    scene_path, out, mdd, outlines = _paths(garment, fmt)
    settings.remember(garment, bodies)
    export.export_scene(context, garment, bodies, scene_path, fmt)
    targets = dict(keyframes=None, silhouettes=None)
    targets.update(write_targets(fmt, mdd, outlines))
    command = runner.control_command(
        exe, scene_path, out=out,
        regularization=operator.regularization, iterations=operator.iterations,
        **targets, **_options(context, garment, out, fmt),
    )
    return command, out


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
        first, last = settings.frames(scene, garment.drape)
        outside = [block.name for frame, block in keys if not first < frame <= last]
        if outside:
            raise runner.DrapeError(
                f"shape keys {', '.join(outside)} of {garment.name} lie outside frames "
                f"{first + 1}..{last} (frame {first} is the start state); rename them or "
                "change the frame range"
            )

        def write_targets(fmt, mdd, _):
            keyframes.write_keyframes(garment, mdd, _fps(scene), y_up=fmt == "GLTF")
            return dict(keyframes=mdd)

        command, out = control_command(self, context, garment, bodies, write_targets)
        return command, out, garment


class DRAPE_OT_match_silhouettes(_DrapeJobOperator, bpy.types.Operator):
    """Simulate the active garment over the other selected meshes with gentle control forces
    so that, seen from the scene camera, its outline matches the selected Grease Pencil
    strokes (or curves) drawn in camera view at their frames (drape control --silhouettes),
    and load the result as a Mesh Cache"""

    bl_idname = "drape.match_silhouettes"
    bl_label = "Match Silhouettes"
    bl_options = {"REGISTER"}

    regularization: FloatProperty(
        name="Regularization",
        description="Price of the control forces against silhouette error (drape "
                    "--regularization): lower matches the outlines more exactly with "
                    "stronger forces",
        default=1e-6, min=1e-12, soft_min=1e-9, soft_max=1.0, precision=8,
    )
    iterations: IntProperty(
        name="Iterations",
        description="L-BFGS iterations at most (drape --iterations); each simulates the "
                    "frames up to the last outline forward and backward",
        default=40, min=0, soft_max=200,
    )
    export_format: EnumProperty(
        name="Export Format", description="How the garment and bodies are handed to drape",
        items=OPERATOR_FORMATS, default="SCENE",
    )

    def prepare(self, context):
        garment, bodies = _selection(context)
        scene = context.scene
        targets = [o for o in context.selected_objects
                   if o.type in ("GREASEPENCIL", "GPENCIL", "CURVE")]
        frames = settings.frames(scene, garment.drape)
        y_up = self.export_format_of(context, garment) == "GLTF"
        try:  # before the export: a bad outline costs no export
            doc = silhouettes.collect(scene, scene.camera, targets, frames, y_up=y_up)
        except silhouettes.SilhouetteError as e:
            raise runner.DrapeError(str(e)) from e

        def write_targets(_, __, path):
            return dict(silhouettes=silhouettes.write(path, doc))

        command, out = control_command(self, context, garment, bodies, write_targets)
        return command, out, garment


CLASSES = (DRAPE_OT_simulate_garment, DRAPE_OT_match_keyframes, DRAPE_OT_match_silhouettes,
           DRAPE_OT_bake_all)
