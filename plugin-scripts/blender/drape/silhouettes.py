"""Targets of Match Silhouettes: outlines drawn in the scene camera's view, written as the
silhouettes file of `drape control --silhouettes` (docs/reference.md, "Keyframe
silhouettes"):

```text
{"camera": {"world_from_camera": [16 numbers, column-major], "yfov": rad, "aspect": w/h},
 "keyframes": [{"frame": F, "outlines": [[[x, y], ...], ...]}, ...]}
```

- **Camera.** The scene camera's world matrix without its scale (a camera's scale does not
  change what it sees); Blender's camera, like drape's (glTF's), looks down its local −Z
  with +Y up, so the matrix is used as it is in the USD export (Blender's Z-up axes) and
  as `Y_UP @ matrix` in the glTF export, whose scene drape reads in Y-up axes ((x, y, z) ->
  (x, z, −y), as `keyframes.to_y_up`). The lens follows Blender's sensor fit: with fit
  Auto the sensor width spans the larger side of the frame, with Horizontal the width,
  with Vertical the sensor height spans the height; `tan(yfov/2) = tan(xfov/2) / aspect`,
  `aspect` = render width × pixel aspect x over height × pixel aspect y. Lens shift is
  left out: outlines and garment are projected through the same unshifted camera, so the
  match is the same; only the image coordinates of the frame's border move.
- **Outlines.** Every stroke of a Grease Pencil object (Blender 4.3+ / 5.x Grease Pencil,
  `layer.frames[].drawing.strokes[].points[].position`; the legacy layout of Blender ≤ 4.2,
  `layer.frames[].strokes[].points[].co`, too) is one closed outline
  at its drawing's frame number; hidden layers are skipped. Every spline of a curve object
  is one outline (Bézier control points, or poly/NURBS points) at the frame of the
  object's integer custom property `drape_frame`, else at the scene's current frame. Points
  are placed in the world at their keyframe (object and layer transforms, animated ones
  too) and projected through the camera at that keyframe to normalised image coordinates
  (x, y ∈ [−1, 1] across the camera frame, y up): `c = camera_from_world · p`,
  `x = (c_x / −c_z) / (aspect · tan(yfov/2))`, `y = (c_y / −c_z) / tan(yfov/2)`.

drape takes one fixed camera per file, so a camera that moves between keyframes is an
error, as is a stroke with fewer than 3 points or one behind the camera.
"""
import json
import math

#: The Y-up axes of the glTF export: (x, y, z) -> (x, z, -y), as a row-major 4 × 4.
Y_UP = ((1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), (0.0, -1.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))

#: Camera-space depth below which a point counts as behind the camera (drape's NEAR).
NEAR = 1e-3


class SilhouetteError(ValueError):
    """A target the operator cannot use; the message names the object and the fix."""


def _mul(a, b):
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(4)) for j in range(4))
                 for i in range(4))


def world_from_camera(matrix_world, y_up=False):
    """The camera's placement as a row-major 4 × 4 tuple: `matrix_world` (any 4 × 4 indexable
    as m[row][col], e.g. a mathutils Matrix) with the scale taken out of its columns, in
    drape's scene axes (`Y_UP` applied when `y_up`)."""
    m = [[float(matrix_world[i][j]) for j in range(4)] for i in range(4)]
    for j in range(3):
        length = math.sqrt(sum(m[i][j] ** 2 for i in range(3)))
        if not length > 0:
            raise SilhouetteError("the scene camera's scale is zero; give it a scale of 1")
        for i in range(3):
            m[i][j] /= length
    out = tuple(tuple(r) for r in m)
    return _mul(Y_UP, out) if y_up else out


def column_major(m):
    """The 16 numbers of the row-major 4 × 4 `m` in column-major order (drape's
    `world_from_camera`)."""
    return [m[i][j] for j in range(4) for i in range(4)]


def lens(camera_data, render):
    """(yfov in radians, aspect = width / height) of the perspective camera data
    `camera_data` (`sensor_fit`, `sensor_width`, `sensor_height`, `lens` in mm) with the
    render settings `render` (resolution and pixel aspect); see the module doc."""
    if camera_data.type != "PERSP":
        raise SilhouetteError(
            f"the scene camera '{camera_data.name}' is {camera_data.type.lower()}; "
            "Match Silhouettes needs a perspective camera (Camera ▸ Lens ▸ Type)")
    width = render.resolution_x * render.pixel_aspect_x
    height = render.resolution_y * render.pixel_aspect_y
    if not (width > 0 and height > 0 and camera_data.lens > 0):
        raise SilhouetteError("the render resolution and the camera's focal length must be "
                              "positive")
    aspect = width / height
    fit = camera_data.sensor_fit
    if fit == "AUTO":
        fit = "HORIZONTAL" if aspect >= 1.0 else "VERTICAL"
        sensor = camera_data.sensor_width
    else:
        sensor = camera_data.sensor_height if fit == "VERTICAL" else camera_data.sensor_width
    half = sensor / (2.0 * camera_data.lens)  # tan of the half angle the sensor spans
    tan_y = half / aspect if fit == "HORIZONTAL" else half
    return 2.0 * math.atan(tan_y), aspect


def project(camera, point):
    """The normalised image coordinates (x, y) of the world point `point` seen by `camera`
    = (row-major world_from_camera, yfov, aspect); None when it is behind the camera."""
    m, yfov, aspect = camera
    d = [point[i] - m[i][3] for i in range(3)]
    # camera_from_world = transpose of the rotation (the matrix has unit, orthogonal columns)
    c = [sum(m[i][j] * d[i] for i in range(3)) for j in range(3)]
    if -c[2] < NEAR:
        return None
    t = math.tan(yfov / 2.0)
    return (c[0] / -c[2] / (aspect * t), c[1] / -c[2] / t)


def _transform(matrix, co):
    x, y, z = co[0], co[1], co[2]
    return tuple(matrix[i][0] * x + matrix[i][1] * y + matrix[i][2] * z + matrix[i][3]
                 for i in range(3))


def _identity():
    return tuple(tuple(float(i == j) for j in range(4)) for i in range(4))


def grease_pencil_frames(ob):
    """{frame: [(label, matrix, [local points])]} of the Grease Pencil object `ob`: one entry
    per stroke of every visible layer, `matrix` its layer's object-local transform."""
    found = {}
    for layer in ob.data.layers:
        if getattr(layer, "hide", False):
            continue
        name = getattr(layer, "name", None) or getattr(layer, "info", "")
        local = getattr(layer, "matrix_local", None)
        local = _identity() if local is None else local
        for frame in layer.frames:
            drawing = getattr(frame, "drawing", None)
            strokes = drawing.strokes if drawing is not None else frame.strokes
            for s, stroke in enumerate(strokes):
                points = [tuple(p.position if hasattr(p, "position") else p.co)
                          for p in stroke.points]
                label = f"{ob.name}, layer '{name}', frame {frame.frame_number}, stroke {s}"
                found.setdefault(int(frame.frame_number), []).append((label, local, points))
    return found


def curve_frames(ob, current_frame):
    """{frame: [(label, identity, [local points])]} of the curve object `ob`: one entry per
    spline, at its custom property `drape_frame`, else `current_frame`."""
    frame = ob.get("drape_frame", current_frame)
    if isinstance(frame, bool) or not isinstance(frame, (int, float)) or frame != int(frame):
        raise SilhouetteError(f"{ob.name}: its custom property drape_frame must be a whole "
                              f"frame number, not {frame!r}")
    frame = int(frame)
    entries = []
    for s, spline in enumerate(ob.data.splines):
        if spline.type == "BEZIER":
            points = [tuple(p.co) for p in spline.bezier_points]
        else:
            points = [tuple(p.co)[:3] for p in spline.points]
        entries.append((f"{ob.name}, spline {s} (frame {frame})", _identity(), points))
    return {frame: entries} if entries else {}


def outline(camera, matrix_world, entry):
    """The outline of one stroke or spline `entry` = (label, layer matrix, local points)
    placed by the object's `matrix_world`, in normalised image coordinates."""
    label, local, points = entry
    if len(points) < 3:
        raise SilhouetteError(f"{label} has {len(points)} points; an outline needs at least "
                              "3: draw it again or delete it")
    placed = _mul(tuple(tuple(float(matrix_world[i][j]) for j in range(4)) for i in range(4)),
                  tuple(tuple(float(local[i][j]) for j in range(4)) for i in range(4)))
    out = []
    for co in points:
        xy = project(camera, _transform(placed, co))
        if xy is None:
            raise SilhouetteError(f"{label} has a point behind the scene camera; draw the "
                                  "outline in camera view (Numpad 0)")
        out.append([round(xy[0], 7), round(xy[1], 7)])
    return out


def same_camera(a, b, tolerance=1e-6):
    """Whether the cameras `a` and `b` ((matrix, yfov, aspect)) are the same within
    `tolerance`."""
    close = all(abs(x - y) <= tolerance for ra, rb in zip(a[0], b[0]) for x, y in zip(ra, rb))
    return close and abs(a[1] - b[1]) <= tolerance and abs(a[2] - b[2]) <= tolerance


def document(camera, keyframes):
    """The silhouettes file's content: `camera` = (row-major world_from_camera, yfov,
    aspect) and `keyframes` = {frame: [outline, ...]}, ascending by frame."""
    m, yfov, aspect = camera
    return {
        "camera": {"world_from_camera": column_major(m), "yfov": yfov, "aspect": aspect},
        "keyframes": [{"frame": f, "outlines": keyframes[f]} for f in sorted(keyframes)],
    }


def write(path, doc):
    """Writes the silhouettes file `doc` (`document`) to `path`; returns `path`."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def _targets_frames(targets, current_frame):
    """{frame: [(object, entry)]} of the Grease Pencil and curve objects `targets`."""
    merged = {}
    for ob in targets:
        if ob.type == "CURVE":
            frames = curve_frames(ob, current_frame)
        elif hasattr(ob.data, "layers"):
            frames = grease_pencil_frames(ob)
        else:
            raise SilhouetteError(f"{ob.name} is a {ob.type.lower()}; the outlines are Grease "
                                  "Pencil strokes or curve objects")
        for frame, entries in frames.items():
            merged.setdefault(frame, []).extend((ob, e) for e in entries)
    return merged


def collect(scene, camera, targets, frame_range, y_up=False):
    """The silhouettes file's content (`document`) for the scene camera object `camera`
    and the Grease Pencil / curve objects `targets`, every keyframe in
    `frame_range` = (first, last) exclusive of `first` (the start state); `y_up`: the
    camera in the glTF export's axes. Sets the scene's frame to each keyframe (to place the
    camera and the strokes there) and back."""
    if camera is None or camera.type != "CAMERA":
        raise SilhouetteError("the scene has no camera; set Scene ▸ Camera to the shot "
                              "camera the outlines were drawn in")
    if not targets:
        raise SilhouetteError("select the Grease Pencil (or curve) objects holding the "
                              "outlines, drawn in camera view, with the garment active")
    merged = _targets_frames(targets, scene.frame_current)
    if not merged:
        names = ", ".join(ob.name for ob in targets)
        raise SilhouetteError(f"{names} hold no strokes; draw the garment's outline in camera "
                              "view at the frame it must reach")
    first, last = frame_range
    outside = sorted(f for f in merged if not first < f <= last)
    if outside:
        raise SilhouetteError(
            f"outlines at frames {', '.join(map(str, outside))} lie outside frames "
            f"{first + 1}..{last} (frame {first} is the start state); move those Grease "
            "Pencil keyframes (or drape_frame) or change the frame range")
    saved = scene.frame_current
    cameras, outlines = {}, {}  # cameras in Blender's axes, where the strokes are
    try:
        for frame in sorted(merged):
            scene.frame_set(frame)
            cameras[frame] = (world_from_camera(camera.matrix_world),
                              *lens(camera.data, scene.render))
            outlines[frame] = [outline(cameras[frame], ob.matrix_world, entry)
                               for ob, entry in merged[frame]]
    finally:
        scene.frame_set(saved)
    frames = sorted(cameras)
    for a, b in zip(frames, frames[1:]):
        if not same_camera(cameras[a], cameras[b]):
            raise SilhouetteError(
                f"the scene camera '{camera.name}' moves (or changes lens) between the "
                f"outlines at frames {a} and {b}; drape matches silhouettes seen by one fixed "
                "camera: keep it still over the keyframes")
    m, yfov, aspect = cameras[frames[0]]
    return document((_mul(Y_UP, m) if y_up else m, yfov, aspect), outlines)
