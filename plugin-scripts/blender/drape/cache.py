"""The result of a bake in Blender: a Mesh Cache modifier on the garment reading the PC2.

As README.md, "Blender extension", describes it: `cache_format = 'PC2'`, the cache's
path, and `frame_start` = the first simulated frame, so that cache sample 0 plays at that
frame. No `bpy` import: works on any object with a `modifiers` collection."""

MODIFIER_NAME = "Drape"


def find_modifier(ob, name=MODIFIER_NAME):
    """The garment's drape Mesh Cache modifier, or None."""
    for mod in ob.modifiers:
        if mod.type == "MESH_CACHE" and mod.name == name:
            return mod
    return None


def apply_mesh_cache(ob, filepath, frame_start, name=MODIFIER_NAME):
    """Adds (or updates) the Mesh Cache modifier `name` on `ob`, first in the stack, reading
    the PC2 at `filepath` from scene frame `frame_start`; returns the modifier."""
    mod = find_modifier(ob, name)
    if mod is None:
        mod = ob.modifiers.new(name, "MESH_CACHE")
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
    index = list(ob.modifiers).index(mod)
    if index != 0 and hasattr(ob.modifiers, "move"):
        ob.modifiers.move(index, 0)  # the cache replaces the base mesh, before subdivision
    ob.update_tag()
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
