"""Keyframes of Match Keyframes: the garment's shape keys `key_<frame>` as an MDD keyframe
file for `drape control --keyframes` (docs/reference.md, "Inputs", keyframes (c)). No `bpy` import: works on any
object with Blender's `data.shape_keys` layout.

Why MDD: Blender's USD exporter writes shape keys (`export_shapekeys`) only as UsdSkel
`BlendShape` prims under a new `SkelRoot`, not as the mesh prims `<garment>_key_<frame>`
drape reads, so the extension exports the garment without them and writes every keyframe
itself, one MDD sample per key:

```text
header   i32 F (keyframes), i32 P (garment vertices)              big-endian
times    f32 t_k = frame_k / fps  (s),  k = 0..F-1, frames ascending
points   f32 x, y, z of vertex p of key k (object-local, m), p in Blender's vertex order
```

Blender's vertex order is the USD point order of the exported garment (and, by
`_DRAPE_INDEX`, the cache point order of the glTF export) and the shape key coordinates are
object-local, which is what drape expects of an MDD keyframe source; for the glTF export
they are converted to its Y-up axes (x, z, -y), the axes drape reads the scene in. A key's
target is its own sculpted shape (`key_block.data[p].co`, what "show only shape key"
displays), whatever its value or its relative key.

The exported garment is the rest shape: while it is written, `key_<frame>` shape keys are
muted and "show only shape key" is off (`rest_shape`), so a key's value never leaks into
the start state. Per-vertex keyframe weights (W_n of drape's objective) need nothing here:
Blender's USD exporter (checked with 4.5 and 5.3) writes a `key_weight` vertex group, like a
float point attribute of that name, as `primvars:key_weight`, which drape reads.
"""
import re
import struct

KEY_NAME = re.compile(r"key_(-?\d+)")


def keyframe_of(name):
    """The frame of a shape key named `key_<frame>` (e.g. `key_12` -> 12), else None."""
    match = KEY_NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def keyframe_keys(ob):
    """The shape keys `key_<frame>` of `ob` as [(frame, key_block)], ascending by frame."""
    keys = ob.data.shape_keys if getattr(ob, "data", None) is not None else None
    found = []
    for block in keys.key_blocks if keys else ():
        frame = keyframe_of(block.name)
        if frame is not None:
            found.append((frame, block))
    return sorted(found, key=lambda fb: fb[0])


def write_mdd(path, samples, fps):
    """Writes `samples` = [(frame, [(x, y, z), ...]), ...] as an MDD file at `path`, one
    sample per keyframe at time frame / fps; every sample has the same point count."""
    if not samples:
        raise ValueError("no keyframe to write")
    if not fps > 0:
        raise ValueError(f"frames per second {fps} must be positive")
    points = len(samples[0][1])
    if any(len(p) != points for _, p in samples):
        raise ValueError("keyframes with different vertex counts")
    with open(path, "wb") as f:
        f.write(struct.pack(">ii", len(samples), points))
        f.write(struct.pack(f">{len(samples)}f", *(frame / fps for frame, _ in samples)))
        for _, pts in samples:
            f.write(struct.pack(f">{3 * points}f", *(c for p in pts for c in p)))
    return path


def to_y_up(co):
    """Blender's Z-up (x, y, z) in the Y-up axes of a glTF export: (x, z, -y)."""
    x, y, z = co
    return (x, z, -y)


def write_keyframes(ob, path, fps, y_up=False):
    """Writes the `key_<frame>` shape keys of `ob` as an MDD at `path` (see the module doc);
    returns their frames, [] (and no file) when there is none. `y_up`: in the axes of a
    Y-up scene (the glTF export, `to_y_up`), since drape reads keyframes in the scene's
    axes; else Blender's own."""
    keys = keyframe_keys(ob)
    if not keys:
        return []
    axes = to_y_up if y_up else tuple
    samples = [(frame, [axes(d.co) for d in block.data]) for frame, block in keys]
    write_mdd(path, samples, fps)
    return [frame for frame, _ in keys]


class rest_shape:
    """Context manager for the export of the garment: mutes its `key_<frame>` shape keys and
    turns "show only shape key" off; restores both on exit."""

    def __init__(self, ob):
        self.ob = ob
        self.muted = []
        self.show_only = None

    def __enter__(self):
        ob = self.ob
        for _, block in keyframe_keys(ob):
            if not block.mute:
                block.mute = True
                self.muted.append(block)
        if getattr(ob, "show_only_shape_key", False):
            self.show_only = True
            ob.show_only_shape_key = False
        return self

    def __exit__(self, *exc):
        for block in self.muted:
            block.mute = False
        if self.show_only:
            self.ob.show_only_shape_key = True
        return False
