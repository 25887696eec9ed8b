"""Bake settings that live on the garment object (`Object.drape`), so that a re-bake, a saved
.blend reopened later and Bake All repeat them: the material, the frames, the quality (largest
solver step), the rest state, the export format and the bodies of the last bake."""
import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty,
                       IntProperty, PointerProperty)

from . import export, runner


def _mesh_poll(self, ob):
    return ob.type == "MESH"


class DrapeBody(bpy.types.PropertyGroup):
    """One body the garment was baked over (an entry of `DrapeSettings.bodies`)."""

    object: PointerProperty(name="Body", type=bpy.types.Object, poll=_mesh_poll)


class DrapeSettings(bpy.types.PropertyGroup):
    """The bake settings of one garment (`Object.drape`)."""

    is_garment: BoolProperty(
        name="Garment",
        description="Baked by Bake All (set by the first Simulate Garment on this object)",
        default=False,
    )
    material: EnumProperty(
        name="Material",
        description="Cloth material preset (drape --material)",
        items=[(m, m.capitalize(), f"drape's {m} preset") for m in runner.MATERIALS],
        default="cotton",
    )
    rest: EnumProperty(
        name="Rest State",
        description="What the cloth relaxes toward (drape --rest): Auto takes the UV panels "
                    "where they match the modelled shape and the modelled shape where the UVs "
                    "are not a sewing pattern (a primitive's or a texture's UVs)",
        items=[(value.upper(), label, text) for value, label, text in runner.RESTS],
        default="AUTO",
    )
    max_step: FloatProperty(
        name="Max Step",
        description="Quality: the largest solver time step in seconds (drape --max-step); "
                    "0 is drape's default, one frame. Lower it when a fast body passes "
                    "through the cloth or a bake fails",
        default=0.0, min=0.0, soft_max=0.1, precision=4, unit="TIME_ABSOLUTE",
    )
    use_scene_frames: BoolProperty(
        name="Scene Frames",
        description="Bake the scene's frame range; off: this garment's First and Last",
        default=True,
    )
    frame_start: IntProperty(
        name="First", description="First frame baked (the garment's modelled shape)",
        default=1,
    )
    frame_end: IntProperty(name="Last", description="Last frame baked", default=250)
    export_format: EnumProperty(
        name="Export Format",
        description="How the garment and bodies are handed to drape",
        items=export.FORMATS,
        default="USD",
    )
    cache_format: EnumProperty(
        name="Cache Format",
        description="What drape writes and how it is loaded",
        items=[("PC2", "PC2", "Point cache, loaded by a Mesh Cache modifier"),
               ("ABC", "Alembic", "Alembic archive (mesh, UVs, velocities), loaded by a Mesh "
                                  "Sequence Cache modifier")],
        default="PC2",
    )
    bodies: CollectionProperty(
        type=DrapeBody, name="Bodies",
        description="The bodies of the last bake; a re-bake with no other mesh selected, "
                    "and Bake All, use them",
    )


#: File extension of each Cache Format.
CACHE_EXTENSION = {"PC2": ".pc2", "ABC": ".abc"}


def frames(scene, settings):
    """(first, last) frame of a bake of the garment with `settings`."""
    if settings.use_scene_frames:
        return scene.frame_start, scene.frame_end
    return settings.frame_start, settings.frame_end


def stored_bodies(settings, scene):
    """The bodies of the last bake that are still meshes in `scene`."""
    return [b.object for b in settings.bodies
            if b.object is not None and b.object.type == "MESH"
            and scene.objects.get(b.object.name) is b.object]


def remember(garment, bodies):
    """Marks `garment` as a garment and stores `bodies` as the bodies of its bake."""
    settings = garment.drape
    settings.is_garment = True
    settings.bodies.clear()
    for body in bodies:
        settings.bodies.add().object = body


def garments(scene):
    """The scene's garments (meshes whose `drape.is_garment` is set), by name."""
    return sorted((ob for ob in scene.objects if ob.type == "MESH" and ob.drape.is_garment),
                  key=lambda ob: ob.name)


CLASSES = (DrapeBody, DrapeSettings)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.drape = PointerProperty(type=DrapeSettings)


def unregister():
    del bpy.types.Object.drape
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
