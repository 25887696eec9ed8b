"""Running one scene through each engine and timing it.

```text
drape:   ms/frame = 1000 · mean over simulated frames of the `--report` JSON's
         per_frame[k].seconds  (simulating each frame and appending it to the cache;
         loading the scene and setting up excluded)
Blender: ms/frame = 1000 · mean over f = 2 … last of the wall time of
         scene.frame_set(f), stepped in order from frame 1 (simulating the frame and
         storing it in the cloth's point cache; import, setup and reading the evaluated
         meshes back excluded)
```
Both results come back as frames[samples, points, 3] in world space (m, Z up), sample 0
being frame 1 (the garment as given), and are kept as PC2 files in the work directory
(`drape.pc2`, `blender.pc2`) for inspection in Blender's Mesh Cache modifier.
"""
import json
import subprocess
import time

import bpy
import numpy as np

from . import metrics


class Run:
    """One engine's result on one scene: timing and positions."""

    def __init__(self, ms_per_frame, frames, timing):
        self.ms_per_frame = ms_per_frame
        self.frames = frames
        self.timing = timing


def run_drape(binary, scene, frames, work):
    """`drape simulate` of `scene.drape_input` over frames 1 … 1 + frames at drape's
    defaults; checks that the cache's first sample is the scene's garment (same point
    order and axes as `scene.drape_rest`)."""
    out = work / "drape.pc2"
    report = work / "drape-report.json"
    cmd = [str(binary), "simulate", str(scene.drape_input), "-o", str(out),
           "--frames", f"1..{1 + frames}", "--fps", "24", "--report", str(report),
           "--progress", "none", "--force", *scene.drape_args]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr}")
    per_frame = json.loads(report.read_text())["per_frame"]
    if len(per_frame) != frames:
        raise RuntimeError(f"drape reported {len(per_frame)} frames, expected {frames}")
    seconds = [float(p["seconds"]) for p in per_frame]
    _, positions = metrics.read_pc2(out)
    if positions.shape != (frames + 1, *scene.drape_rest.shape):
        raise RuntimeError(f"{out}: shape {positions.shape}, expected "
                           f"{(frames + 1, *scene.drape_rest.shape)}")
    offset = float(np.max(np.abs(positions[0] - scene.drape_rest)))
    if offset > 1e-4:
        raise RuntimeError(f"{out}: first sample is {offset} m off the scene's garment "
                           "(point order or axes differ)")
    timing = {"source": "drape --report per_frame seconds (mean)",
              "wall_s_whole_command": wall, "solver_s": sum(seconds)}
    return Run(1000.0 * sum(seconds) / frames, positions, timing)


def _world_points(ob, depsgraph):
    ev = ob.evaluated_get(depsgraph)
    mesh = ev.data
    co = np.empty(3 * len(mesh.vertices), dtype=np.float64)
    mesh.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    m = np.array(ev.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]


def body_at(ob, depsgraph):
    """The evaluated body (armature, modifiers) in world space as a metrics.Body."""
    ev = ob.evaluated_get(depsgraph)
    faces = [tuple(p.vertices) for p in ev.data.polygons]
    return metrics.Body(_world_points(ob, depsgraph), faces)


def run_blender(scene, frames, work):
    """Blender's cloth modifier stepped frame by frame from frame 1; returns the Run and
    the body at each frame (one Body if static) for the penetration figure."""
    bscene = bpy.context.scene
    bscene.frame_set(1)
    # Any change of the cloth settings frees the modifier's point cache: without it a second
    # run of the same scene would read the frames back (0.1 ms each) instead of simulating.
    settings = scene.garment.modifiers["Cloth"].settings
    settings.quality = settings.quality
    depsgraph = bpy.context.evaluated_depsgraph_get()
    positions = [_world_points(scene.garment, depsgraph)]
    bodies = [body_at(scene.body, depsgraph)]
    spent = 0.0
    for f in range(2, 2 + frames):
        started = time.perf_counter()
        bscene.frame_set(f)
        spent += time.perf_counter() - started
        depsgraph = bpy.context.evaluated_depsgraph_get()
        positions.append(_world_points(scene.garment, depsgraph))
        if scene.body_animated:
            bodies.append(body_at(scene.body, depsgraph))
    positions = np.array(positions)
    metrics.write_pc2(work / "blender.pc2", positions)
    timing = {"source": "wall time of scene.frame_set(f), f = 2 … last, in order",
              "solver_s": spent}
    run = Run(1000.0 * spent / frames, positions, timing)
    return run, (bodies if scene.body_animated else bodies[0])
