"""The result of a bake in Blender: a modifier on the garment reading the cache.

As README.md, "Blender extension", describes it: a PC2 is read by a Mesh Cache modifier
(`cache_format = 'PC2'`, the cache's path, and `frame_start` = the first simulated frame,
so that cache sample 0 plays at that frame); an Alembic archive by a Mesh Sequence Cache
modifier (`apply_alembic`: a CacheFile, the archive's mesh as object path; the archive's
times are the frames' own). No `bpy` import at module level: `apply_mesh_cache` works on
any object with a `modifiers` collection."""
import os
import shutil
import struct

MODIFIER_NAME = "Drape"
#: The modifier types that load a drape cache.
TYPES = ("MESH_CACHE", "MESH_SEQUENCE_CACHE")


def find_modifier(ob, name=MODIFIER_NAME):
    """The garment's drape cache modifier (Mesh Cache or Mesh Sequence Cache), or None."""
    for mod in ob.modifiers:
        if mod.type in TYPES and mod.name == name:
            return mod
    return None


def _modifier(ob, kind, name):
    """The drape modifier of type `kind` on `ob`, replacing one of the other type."""
    mod = find_modifier(ob, name)
    if mod is not None and mod.type != kind:
        ob.modifiers.remove(mod)
        mod = None
    return mod if mod is not None else ob.modifiers.new(name, kind)


def _first(ob, mod):
    """Moves `mod` first in the stack: the cache replaces the base mesh, before
    subdivision."""
    index = list(ob.modifiers).index(mod)
    if index != 0 and hasattr(ob.modifiers, "move"):
        ob.modifiers.move(index, 0)
    ob.update_tag()


def apply_cache(ob, filepath, frame_start, name=MODIFIER_NAME):
    """Loads the cache at `filepath` (`.pc2`, `.abc`, or either's `.partial`) on `ob`."""
    if str(filepath).lower().removesuffix(".partial").endswith(".abc"):
        return apply_alembic(ob, filepath, name)
    return apply_mesh_cache(ob, filepath, frame_start, name)


def alembic_mesh_path(filepath):
    """The object path (`/<Xform>/<Mesh>`) of the mesh in a drape `.abc`: the Ogawa root
    group's third child is the top object, whose group ends with its children's headers
    (u32 name length, name, ...) and whose second child is its first child object."""
    with open(filepath, "rb") as f:
        data = f.read()

    def u64(at):
        return struct.unpack_from("<Q", data, at)[0]

    def child(group, i):
        return u64(group + 8 + 8 * i)

    def first_child(obj):
        headers = child(obj, u64(obj) - 1) & ~(1 << 63)
        n = struct.unpack_from("<I", data, headers + 8)[0]
        return data[headers + 12:headers + 12 + n].decode(), child(obj, 1)

    xform, group = first_child(child(u64(8), 2))
    mesh, _ = first_child(group)
    return f"/{xform}/{mesh}"


def apply_alembic(ob, filepath, name=MODIFIER_NAME):
    """Adds (or updates) the Mesh Sequence Cache modifier `name` on `ob`, first in the stack,
    reading the drape `.abc` at `filepath` (a `.partial` archive is copied to
    `<out stem>_partial.abc` first: Blender tells an archive by its extension)."""
    import bpy

    filepath = os.path.abspath(str(filepath))
    if filepath.endswith(".partial"):
        copy = filepath.removesuffix(".partial")[:-len(".abc")] + "_partial.abc"
        shutil.copyfile(filepath, copy)
        filepath = copy
    mod = _modifier(ob, "MESH_SEQUENCE_CACHE", name)
    cache = mod.cache_file
    if cache is None or os.path.abspath(bpy.path.abspath(cache.filepath)) != filepath:
        before = set(bpy.data.cache_files)
        bpy.ops.cachefile.open(filepath=filepath)
        cache = (set(bpy.data.cache_files) - before).pop()
        mod.cache_file = cache
    else:
        cache.filepath = filepath  # reloads the archive
    mod.object_path = alembic_mesh_path(filepath)
    mod.read_data = {"VERT", "POLY", "UV"}
    _first(ob, mod)
    return mod


def apply_mesh_cache(ob, filepath, frame_start, name=MODIFIER_NAME):
    """Adds (or updates) the Mesh Cache modifier `name` on `ob`, first in the stack, reading
    the PC2 at `filepath` from scene frame `frame_start`; returns the modifier."""
    mod = _modifier(ob, "MESH_CACHE", name)
    mod.cache_format = "PC2"
    mod.filepath = str(filepath)
    mod.frame_start = float(frame_start)
    mod.frame_scale = 1.0
    mod.time_mode = "FRAME"
    mod.play_mode = "SCENE"
    mod.deform_mode = "OVERWRITE"
    mod.interpolation = "LINEAR"
    mod.forward_axis = "POS_Y"  # drape writes Blender's own axes (object-local, Z up)
    mod.up_axis = "POS_Z"
    mod.factor = 1.0
    mod.show_viewport = True
    mod.show_render = True
    _first(ob, mod)
    return mod


class modifiers_hidden:
    """Context manager hiding the drape modifier while the garment is exported, so a new
    bake starts from the modelled garment rather than the previous cache."""

    def __init__(self, ob, name=MODIFIER_NAME):
        self.mod = find_modifier(ob, name)
        self.saved = None

    def __enter__(self):
        if self.mod is not None:
            self.saved = (self.mod.show_viewport, self.mod.show_render)
            self.mod.show_viewport = False
            self.mod.show_render = False
        return self

    def __exit__(self, *exc):
        if self.mod is not None and self.saved is not None:
            self.mod.show_viewport, self.mod.show_render = self.saved
        return False
