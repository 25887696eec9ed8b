"""Object ▸ Drape ▸ Match Silhouettes in Blender itself (bpy 4.5 and 5.x), blocking
(background) path (issue 58, "the same through the Blender operator on a scene built in the
test").

A sheet hangs from its pinned top row; a shot camera sees it obliquely. The hidden target is
the sheet baked by drape in a gust (`--wind`) that the operator does not know: its outline at
frame KEY, as the camera sees it, is drawn as a Grease Pencil stroke on a plane in front of
the camera (what drawing in camera view makes). Match Silhouettes, without the gust, must
bring the intersection over union (IoU) of the garment's silhouette and the drawn region
from below 0.7 (a plain Simulate Garment bake) to at least 0.9. The IoU is measured here,
independently of drape and of the extension: the cache's triangles and the stroke are
projected with Blender's own `world_to_camera_view` and rasterised with numpy.
"""
import json
import math
import pathlib
import sys
import time

import pytest

bpy = pytest.importorskip("bpy")
np = pytest.importorskip("numpy")
from bpy_extras.object_utils import world_to_camera_view  # noqa: E402
from mathutils import Matrix, Vector  # noqa: E402

from readers import read_pc2  # noqa: E402
from test_blender_match_keyframes import N, build_sheet, make_active, rms  # noqa: E402

FIRST, LAST = 1, 24
KEY = LAST
GUST = "0.4,1.6,0"  # m/s, Blender's axes: mostly through the sheet (+Y), a little sideways
EYE, AT = Vector((1.3, -1.6, 1.45)), Vector((0.0, 0.0, 1.2))
DRAWING_DEPTH = 1.0  # m in front of the camera: the plane the stroke is drawn on
RES = 256  # pixels of the IoU grid across [-1, 1]²


def add_camera(scene):
    cam = bpy.data.objects.new("ShotCam", bpy.data.cameras.new("ShotCam"))
    scene.collection.objects.link(cam)
    cam.location = EYE
    cam.rotation_euler = (AT - EYE).to_track_quat("-Z", "Y").to_euler()
    cam.data.lens = 35.0
    scene.render.resolution_x, scene.render.resolution_y = 1280, 720
    scene.camera = cam
    return cam


def boundary_loop():
    """Vertex indices of the sheet's border in order (build_sheet: index = row * (N+1) + col)."""
    idx = lambda j, i: j * (N + 1) + i  # noqa: E731
    return ([idx(0, i) for i in range(N + 1)] + [idx(j, N) for j in range(1, N + 1)]
            + [idx(N, i) for i in range(N - 1, -1, -1)] + [idx(j, 0) for j in range(N - 1, 0, -1)])


def image_xy(scene, cam, world):
    """Normalised image coordinates (x, y in [-1, 1] across the camera frame, y up)."""
    p = world_to_camera_view(scene, cam, Vector(world))
    assert p.z > 0, "in front of the camera"
    return (2.0 * p.x - 1.0, 2.0 * p.y - 1.0)


def pixel_centres():
    c = (np.arange(RES) + 0.5) / RES * 2.0 - 1.0
    return np.meshgrid(c, c)


def raster_triangles(tris):
    """Union of the 2D triangles `tris` (T x 3 x 2) on the RES² grid over [-1, 1]²."""
    gx, gy = pixel_centres()
    mask = np.zeros((RES, RES), dtype=bool)
    for a, b, c in tris:
        def edge(p, q):
            return (q[0] - p[0]) * (gy - p[1]) - (q[1] - p[1]) * (gx - p[0])
        e = np.stack([edge(a, b), edge(b, c), edge(c, a)])
        mask |= np.all(e >= 0, axis=0) | np.all(e <= 0, axis=0)
    return mask


def raster_polygons(polygons):
    """Even-odd interior of the closed polygons on the RES² grid over [-1, 1]²."""
    gx, gy = pixel_centres()
    inside = np.zeros((RES, RES), dtype=bool)
    for poly in polygons:
        pts = np.asarray(poly, dtype=float)
        for (x0, y0), (x1, y1) in zip(pts, np.roll(pts, -1, axis=0)):
            crosses = (y0 > gy) != (y1 > gy)
            with np.errstate(divide="ignore", invalid="ignore"):
                x_at = x0 + (gy - y0) * (x1 - x0) / (y1 - y0)
            inside ^= crosses & (gx < x_at)
    return inside


def iou(a, b):
    return float((a & b).sum()) / float((a | b).sum())


def silhouette(scene, cam, sheet, local_points):
    """The raster of the sheet's projected triangles with vertices at `local_points`."""
    world = [sheet.matrix_world @ Vector(p) for p in local_points]
    xy = [image_xy(scene, cam, w) for w in world]
    sheet.data.calc_loop_triangles()
    tris = np.array([[xy[v] for v in t.vertices] for t in sheet.data.loop_triangles])
    return raster_triangles(tris)


def draw_stroke(scene, cam, outline_world):
    """A Grease Pencil object whose one stroke at frame KEY is `outline_world` moved along
    the camera's rays onto a plane DRAWING_DEPTH in front of it; the object is placed off
    the origin so that its transform matters."""
    data = (bpy.data.grease_pencils_v3 if hasattr(bpy.data, "grease_pencils_v3")
            else bpy.data.grease_pencils)
    gp = data.new("Outline")
    ob = bpy.data.objects.new("Outline", gp)
    scene.collection.objects.link(ob)
    ob.location = (0.2, -0.3, 0.1)
    ob.rotation_euler = (0.0, 0.0, 0.4)
    bpy.context.view_layer.update()
    to_local = ob.matrix_world.inverted()
    eye, forward = cam.matrix_world.translation, cam.matrix_world.to_3x3() @ Vector((0, 0, -1))
    drawing = gp.layers.new("Director").frames.new(KEY).drawing
    drawing.add_strokes([len(outline_world)])
    for point, w in zip(drawing.strokes[0].points, outline_world):
        ray = Vector(w) - eye
        point.position = to_local @ (eye + ray * (DRAWING_DEPTH / ray.dot(forward)))
    return ob


@pytest.fixture(scope="module")
def runs(drape, tmp_path_factory):
    """The gust bake (hidden), Simulate Garment (before) and Match Silhouettes (after)."""
    from test_blender_extension import fresh_scene

    scene = fresh_scene(drape.binary, FIRST, LAST)
    import drape as extension  # installed by fresh_scene
    sheet = build_sheet(key=False)
    cam = add_camera(scene)
    make_active(sheet)
    scene.frame_set(FIRST)
    work = tmp_path_factory.mktemp("gust")
    usda = work / "sheet.usda"
    extension.export_usd(bpy.context, sheet, [], str(usda))
    gust = work / "gust.pc2"
    drape("simulate", usda, "--frames", f"{FIRST}..{LAST}", "--wind", GUST, "-o", gust,
          "--progress", "none")
    hidden = read_pc2(gust)[2][KEY - FIRST]
    outline_world = [sheet.matrix_world @ Vector(hidden[v]) for v in boundary_loop()]
    stroke = draw_stroke(scene, cam, outline_world)

    assert bpy.ops.drape.simulate_garment() == {"FINISHED"}
    plain = read_pc2(sheet.modifiers["Drape"].filepath)[2][KEY - FIRST]
    make_active(sheet)
    stroke.select_set(True)
    started = time.monotonic()
    result = bpy.ops.drape.match_silhouettes(iterations=40)
    seconds = time.monotonic() - started
    path = pathlib.Path(sheet.modifiers["Drape"].filepath)
    controlled = read_pc2(path)[2][KEY - FIRST]
    report = json.loads(path.with_name(path.stem + "_report.json").read_text())
    written = path.with_name("Sheet_silhouettes.json")
    doc = json.loads(written.read_text())
    gltf = bpy.ops.drape.match_silhouettes(iterations=40, export_format="GLTF")
    via_gltf = read_pc2(path)[2][KEY - FIRST]
    doc_gltf = json.loads(written.read_text())
    target_xy = [image_xy(scene, cam, stroke.matrix_world @ p.position)
                 for p in stroke.data.layers[0].frames[0].drawing.strokes[0].points]
    return dict(scene=scene, cam=cam, sheet=sheet, stroke=stroke, result=result,
                hidden=hidden, plain=plain, controlled=controlled, report=report,
                gltf=gltf, via_gltf=via_gltf, doc=doc, doc_gltf=doc_gltf,
                target=raster_polygons([target_xy]), seconds=seconds, path=path)


def test_the_drawn_stroke_is_the_hidden_silhouette(runs):
    """The target is honest: the region of the drawn stroke is the gust shape's silhouette
    (its border loop projects onto the outline of its triangles: no fold in this view)."""
    hidden = silhouette(runs["scene"], runs["cam"], runs["sheet"], runs["hidden"])
    assert iou(hidden, runs["target"]) > 0.97
    assert runs["target"].sum() > 0.03 * RES * RES, "the sheet fills a fair part of the frame"


def test_match_silhouettes_brings_the_iou_from_below_0_7_to_0_9(runs):
    scene, cam, sheet, target = runs["scene"], runs["cam"], runs["sheet"], runs["target"]
    before = iou(silhouette(scene, cam, sheet, runs["plain"]), target)
    after = iou(silhouette(scene, cam, sheet, runs["controlled"]), target)
    summary = runs["report"]["control"][0]
    print(f"Match Silhouettes ({bpy.app.version_string}): IoU at frame {KEY} {before:.3f} -> "
          f"{after:.3f}, {summary['iterations']} iterations, {runs['seconds']:.1f} s "
          f"(drape's IoU {summary['initial_silhouette_iou']:.3f} -> "
          f"{summary['final_silhouette_iou']:.3f}); RMS 3D distance to the hidden shape "
          f"{1e3 * rms(runs['plain'], runs['hidden']):.1f} -> "
          f"{1e3 * rms(runs['controlled'], runs['hidden']):.1f} mm (not asked for)")
    assert runs["result"] == {"FINISHED"}
    assert before < 0.7, "the gust must change the outline"
    assert after >= 0.9


def test_through_the_gltf_export_the_camera_is_turned_to_its_y_up_axes(runs):
    """The glTF scene is read Y-up: the camera written for it must see the same image."""
    scene, cam, sheet, target = runs["scene"], runs["cam"], runs["sheet"], runs["target"]
    after = iou(silhouette(scene, cam, sheet, runs["via_gltf"]), target)
    print(f"through glTF: IoU at frame {KEY} -> {after:.3f}")
    assert runs["gltf"] == {"FINISHED"}
    assert after >= 0.9


def test_the_silhouettes_file_holds_the_scene_camera_and_the_stroke(runs):
    scene, cam, sheet = runs["scene"], runs["cam"], runs["sheet"]
    doc = runs["doc"]
    y_up = Matrix(((1, 0, 0, 0), (0, 0, 1, 0), (0, -1, 0, 0), (0, 0, 0, 1)))
    for written, expected in ((doc, cam.matrix_world), (runs["doc_gltf"], y_up @ cam.matrix_world)):
        m = Matrix([written["camera"]["world_from_camera"][i::4] for i in range(4)])
        assert max(abs(a - b) for ra, rb in zip(m, expected) for a, b in zip(ra, rb)) < 1e-5
        assert written["keyframes"] == doc["keyframes"]
    assert doc["camera"]["aspect"] == pytest.approx(1280 / 720)
    # Blender's own frame: a horizontal fit of the 36 mm sensor at 35 mm
    assert doc["camera"]["yfov"] == pytest.approx(2 * math.atan(18 / 35 / (1280 / 720)))
    (key,) = doc["keyframes"]
    assert key["frame"] == KEY and len(key["outlines"]) == 1
    stroke = runs["stroke"].data.layers[0].frames[0].drawing.strokes[0]
    expected = [image_xy(scene, cam, runs["stroke"].matrix_world @ p.position)
                for p in stroke.points]
    assert np.abs(np.array(key["outlines"][0]) - np.array(expected)).max() < 1e-5


def _target(name, points, frame=KEY):
    """A Grease Pencil object with one stroke of `points` (world) at `frame`, selected."""
    data = (bpy.data.grease_pencils_v3 if hasattr(bpy.data, "grease_pencils_v3")
            else bpy.data.grease_pencils)
    gp = data.new(name)
    ob = bpy.data.objects.new(name, gp)
    bpy.context.scene.collection.objects.link(ob)
    drawing = gp.layers.new("L").frames.new(frame).drawing
    drawing.add_strokes([len(points)])
    for p, co in zip(drawing.strokes[0].points, points):
        p.position = co
    ob.select_set(True)
    return ob


def _bad_run(runs, targets, match):
    make_active(runs["sheet"])
    for t in targets:
        t.select_set(True)
    before = runs["sheet"].modifiers["Drape"].filepath
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.drape.match_silhouettes(iterations=1)
    assert runs["sheet"].modifiers["Drape"].filepath == before
    for t in targets:
        bpy.data.objects.remove(t)


def test_bad_targets_are_cancelled_with_the_reason(runs):
    square = [(0.0, 0.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.2), (0.0, 0.0, 1.2)]
    _bad_run(runs, [], r"select the Grease Pencil \(or curve\) objects")
    _bad_run(runs, [_target("Short", square[:2])],
             r"Short, layer 'L', frame 24, stroke 0 has 2 points; an outline needs at least 3")
    _bad_run(runs, [_target("Late", square, frame=LAST + 3)],
             rf"outlines at frames {LAST + 3} lie outside frames {FIRST + 1}\.\.{LAST}")
    behind = [tuple(EYE + (EYE - AT) + Vector(d)) for d in square]
    _bad_run(runs, [_target("Behind", behind)], r"has a point behind the scene camera")
    scene, cam = runs["scene"], runs["scene"].camera
    scene.camera = None
    try:
        _bad_run(runs, [_target("NoCam", square)], r"the scene has no camera")
    finally:
        scene.camera = cam
    cam.keyframe_insert("location", frame=10)
    cam.location.x += 0.5
    cam.keyframe_insert("location", frame=20)
    try:
        _bad_run(runs, [_target("At10", square, frame=10), _target("At20", square, frame=20)],
                 r"the scene camera 'ShotCam' moves \(or changes lens\) between the outlines "
                 r"at frames 10 and 20")
    finally:
        cam.animation_data_clear()
        cam.location = EYE
    scene.frame_set(FIRST)


def test_a_curve_object_is_an_outline_at_its_drape_frame(runs):
    """A poly curve's spline projected through the camera, at its `drape_frame`."""
    import drape as extension

    scene, cam = runs["scene"], runs["cam"]
    data = bpy.data.curves.new("Drawn", "CURVE")
    spline = data.splines.new("POLY")
    spline.points.add(3)
    corners = [(0.0, 0.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.2), (0.0, 0.0, 1.2)]
    for p, co in zip(spline.points, corners):
        p.co = (*co, 1.0)
    ob = bpy.data.objects.new("Drawn", data)
    scene.collection.objects.link(ob)
    ob["drape_frame"] = 12
    try:
        doc = extension.silhouettes.collect(scene, cam, [ob], (FIRST, LAST))
        (key,) = doc["keyframes"]
        assert key["frame"] == 12
        expected = [image_xy(scene, cam, co) for co in corners]
        assert np.abs(np.array(key["outlines"][0]) - np.array(expected)).max() < 1e-5
        gltf = extension.silhouettes.collect(scene, cam, [ob], (FIRST, LAST), y_up=True)
        m = gltf["camera"]["world_from_camera"]
        # the glTF scene's axes: (x, y, z) -> (x, z, -y), the camera's position too
        assert m[12:15] == pytest.approx([EYE.x, EYE.z, -EYE.y])
    finally:
        bpy.data.objects.remove(ob)


def test_the_command_line_asks_for_silhouettes_only_and_the_status_shows_the_iou(
        runs, tmp_path):
    import drape as extension

    args = tmp_path / "args.txt"
    fake = tmp_path / "drape"
    fake.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"open({str(args)!r}, 'w').write('\\n'.join(sys.argv[1:]))\n"
        "sys.stderr.write('{\"event\":\"error\",\"code\":2,\"message\":\"fake stop\"}\\n')\n"
        "sys.exit(2)\n")
    fake.chmod(0o755)
    prefs = bpy.context.preferences.addons["drape"].preferences
    saved, prefs.binary_path = prefs.binary_path, str(fake)
    make_active(runs["sheet"])
    runs["stroke"].select_set(True)
    try:
        with pytest.raises(RuntimeError, match="fake stop"):
            bpy.ops.drape.match_silhouettes(regularization=1e-5, iterations=7)
    finally:
        prefs.binary_path = saved
    argv = args.read_text().split("\n")
    assert argv[0] == "control" and "--keyframes" not in argv
    assert argv[argv.index("--silhouettes") + 1].endswith("Sheet_silhouettes.json")
    assert argv[argv.index("--regularization") + 1] == "1e-05"
    assert argv[argv.index("--iterations") + 1] == "7"
    status = extension.runner.iteration_status(
        {"event": "iteration", "iteration": 3, "of": 7, "objective": 0.0125,
         "keyframe_error": 0.07, "silhouette_error": 0.07, "silhouette_iou": 0.6512})
    assert status == "drape: iteration 3/7, objective 0.0125, silhouette IoU 0.651"


def test_blenders_usd_camera_named_in_the_file_is_the_camera_the_operator_writes(
        runs, drape, tmp_path):
    """Cross-check of the two ways in: the scene camera exported by Blender's USD exporter
    and named (`"camera": "ShotCam"`, read by drape from the UsdGeomCamera) sees the sheet
    as the matrix and lens the operator writes; with no iteration both runs report the same
    silhouette error and IoU."""
    import drape as extension

    usd = tmp_path / "with_camera.usda"
    extension.export_usd(bpy.context, runs["sheet"], [runs["cam"]], str(usd))
    assert 'def Camera "ShotCam"' in usd.read_text()
    measured = []
    for camera in ("ShotCam", runs["doc"]["camera"]):
        doc = dict(runs["doc"], camera=camera)
        path = tmp_path / "silhouettes.json"
        path.write_text(json.dumps(doc))
        report = tmp_path / "report.json"
        drape("control", usd, "--frames", f"{FIRST}..{LAST}", "--silhouettes", path,
              "--iterations", "0", "-o", tmp_path / "out.pc2", "--force", "--progress", "none",
              "--report", report)
        summary = json.loads(report.read_text())["control"][0]
        measured.append((summary["initial_silhouette_error"], summary["initial_silhouette_iou"]))
    (named_error, named_iou), (error, iou_) = measured
    assert named_error == pytest.approx(error, rel=1e-4)
    assert named_iou == pytest.approx(iou_, abs=2e-3)
    assert iou_ < 0.7


def test_the_legacy_grease_pencil_layout_is_read_like_the_new_one(runs):
    """Blender <= 4.2 kept strokes on the frame (`frame.strokes[].points[].co`, layer name
    `info`); the same outline must come out."""
    from types import SimpleNamespace as NS

    import drape as extension

    corners = [(0.0, 0.0, 1.0), (0.2, 0.0, 1.0), (0.2, 0.0, 1.2)]
    stroke = NS(points=[NS(co=c) for c in corners])
    layer = NS(info="Old", hide=False, frames=[NS(frame_number=9, strokes=[stroke])])
    hidden = NS(info="Hidden", hide=True, frames=[NS(frame_number=9, strokes=[stroke])])
    ob = NS(name="OldGP", data=NS(layers=[layer, hidden]))
    found = extension.silhouettes.grease_pencil_frames(ob)
    assert list(found) == [9] and len(found[9]) == 1
    label, _, points = found[9][0]
    assert label == "OldGP, layer 'Old', frame 9, stroke 0" and points == corners


def test_in_the_modal_path_iterations_show_the_iou_and_escape_stops_drape(runs):
    """The modal machinery Match Keyframes uses (test_blender_modal.py's fake window
    manager and events): the status text shows each iteration's silhouette IoU, Esc cancels
    drape, and the timer, progress bar and status text are cleaned up."""
    from test_blender_modal import FakeContext, run_modal

    extension = sys.modules["drape"]

    class Harness(extension._DrapeJobOperator):
        prepare = extension.DRAPE_OT_match_silhouettes.prepare
        export_format, regularization, iterations = "SCENE", 1e-6, 10000

        def __init__(self):
            self.reports = []

        def report(self, kind, message):
            self.reports.append((set(kind), message))

    make_active(runs["sheet"])
    runs["stroke"].select_set(True)
    op, ctx = Harness(), FakeContext()
    result, _ = run_modal(op, ctx, escape_when=lambda job: len(job.progress.objectives) >= 2)
    assert op._job.cancelled and op._job.returncode == 130
    shown = [s for s in ctx.workspace.status if s and "silhouette IoU" in s]
    assert shown and shown[0].startswith("drape: iteration "), ctx.workspace.status
    assert any(s and s.startswith("drape: cancelling") for s in ctx.workspace.status)
    kinds, message = op.reports[-1]
    assert kinds == {"WARNING"} and "drape cancelled" in message
    assert ctx.window_manager.timers == [] and ctx.window_manager.progress_ended
    assert ctx.workspace.status[-1] is None
    print(result, message)
