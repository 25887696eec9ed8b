"""drape plays the glTF animation clip Blender plays after importing the file (issue 51).

Blender's glTF importer turns every glTF animation into an action, makes the file's first
one the active action and puts the others on muted NLA tracks. `drape inspect --json`
names the clip it plays by default (`animation`) and lists every clip with its first and
last frame at 24 fps, Blender's default scene rate; here both are compared with what
`bpy.ops.import_scene.gltf` does with the same files: the shared Fox (three named clips)
and RiggedFigure (one unnamed clip), and each Fox clip chosen with `--animation`.
"""
import json
import pathlib

import pytest

bpy = pytest.importorskip("bpy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
ASSETS = ROOT.parent / "shared" / "assets"
FILES = [ASSETS / "Fox" / "Fox.gltf", ASSETS / "RiggedFigure.glb"]


def blender_import(path):
    """The active actions after a fresh import of `path`, and every action by name."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(path))
    assert bpy.context.scene.render.fps == 24
    active, muted = set(), set()
    for obj in bpy.data.objects:
        data = obj.animation_data
        if data is None:
            continue
        if data.action is not None:
            active.add(data.action.name)
        muted.update(t.name for t in data.nla_tracks if t.mute)
    actions = {a.name: a.frame_range[:] for a in bpy.data.actions}
    return active, muted, actions


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_default_clip_is_the_action_blender_makes_active(drape, path):
    if not path.exists():
        pytest.skip(f"{path} is not there")
    active, muted, actions = blender_import(path)
    assert len(active) == 1, f"Blender made {active} active"
    (action,) = active
    out = json.loads(drape("inspect", "--json", path).stdout)
    playing = next(c for c in out["animations"] if c["name"] == out["animation"])
    assert playing == out["animations"][0]
    if len(out["animations"]) > 1:
        # Named clips: the same name, and every other clip is a muted track in Blender.
        assert out["animation"] == action
        others = {c["name"] for c in out["animations"][1:]}
        assert others <= muted
    first, last = actions[action]
    assert playing["frames"] == [round(first), round(last)]
    # The animated body spans the clip.
    assert any(b["frames"] == playing["frames"] for b in out["bodies"])


def test_each_fox_clip_chosen_spans_its_blender_action(drape):
    fox = FILES[0]
    if not fox.exists():
        pytest.skip(f"{fox} is not there")
    _, _, actions = blender_import(fox)
    for name, (first, last) in actions.items():
        out = json.loads(drape("inspect", "--json", "--animation", name, fox).stdout)
        assert out["animation"] == name
        assert out["bodies"][0]["frames"] == [round(first), round(last)], name
    r = drape("inspect", fox, "--animation", "Trot", code=2)
    assert all(n in r.stderr for n in ("'Trot'", "Survey", "Walk", "Run")), r.stderr
