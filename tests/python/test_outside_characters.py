"""Garments built in Blender on an outside character, RiggedFigure of ../shared/assets
(Cesium, CC-BY 4.0), by scripts/outside_garments.py, baked by drape from Blender's glTF
export and read back through Blender's Mesh Cache modifier (issue 50, "[1 of 9]" item 6):
an A-line skirt started clear of the body, and a full skirt that the hanging hands pass
through at the first frame. The assets stay outside the repository: without them the tests
are skipped."""
import json
import pathlib
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
ASSETS = ROOT.parent / "shared" / "assets"
pytestmark = pytest.mark.skipif(
    not (ASSETS / "RiggedFigure.glb").is_file(),
    reason=f"{ASSETS}/RiggedFigure.glb is absent (the outside assets of issue 50 are not "
           "part of the repository)")

sys.path.insert(0, str(ROOT / "scripts"))
import outside_garments  # noqa: E402
from readers import read_pc2  # noqa: E402

#: The issue's bounds: no edge stretched more than 20% at any frame; from the tenth frame on
#: no particle deeper than 2 mm inside the body.
MAX_STRETCH = 0.20
MAX_DEPTH_M = 0.002


def bake_and_read_back(drape, name, tmp_path):
    """Builds scene `name`, bakes it over the character's range, and returns (its
    scenes.json entry, the PC2 frames, per frame the garment's positions that Blender's
    Mesh Cache modifier gives, per frame the pinned waist as Blender's skin moves it, the
    pinned vertices)."""
    entry = outside_garments.build_scene(name, ASSETS, tmp_path)
    first, last = entry["frames"]
    out = tmp_path / f"{name}.pc2"
    drape("simulate", tmp_path / entry["glb"], "--frames", f"{first}..{last}", "--up", "z",
          "-o", out, "--progress", "none")
    start, sampling, frames = read_pc2(out)
    assert (start, sampling, len(frames)) == (first, 1.0, last - first + 1)
    skirt = bpy.data.objects[entry["garment"]]
    assert len(frames[0]) == len(skirt.data.vertices) == entry["garment_vertices"]
    pins = [i for i, a in enumerate(skirt.data.attributes["pin"].data) if a.value >= 0.5]
    scene = bpy.context.scene
    skinned = {}
    for f in range(first, last + 1):
        scene.frame_set(f)
        skinned[f] = [tuple(p) for p in outside_garments.world_mesh(skirt)[0]]
    # The cache holds the simulated skirt, the rig's motion of its pinned waist included.
    skirt.modifiers.remove(skirt.modifiers["Armature"])
    outside_garments.drape.cache.apply_mesh_cache(skirt, out, first)
    played = {}
    for f in range(first, last + 1):
        scene.frame_set(f)
        played[f] = [tuple(p) for p in outside_garments.world_mesh(skirt)[0]]
    return entry, frames, played, {f: [skinned[f][i] for i in pins] for f in skinned}, pins


def largest_difference(a, b):
    return max(abs(x - y) for p, q in zip(a, b) for x, y in zip(p, q))


@pytest.mark.parametrize("name", ["figure_skirt", "figure_skirt_hands"])
def test_skirt_on_the_figure_bakes_and_plays_back_in_blender(drape, tmp_path, name):
    entry, frames, played, waist, pins = bake_and_read_back(drape, name, tmp_path)
    # figure_skirt_hands is the case of issue 50: the hands start through the cloth.
    assert (entry["crossing_edges"] > 0) == (name == "figure_skirt_hands")
    first = entry["frames"][0]
    for k, cached in enumerate(frames):
        d = largest_difference(played[first + k], cached)
        assert d < 1e-5, f"frame {first + k}: Blender's Mesh Cache differs from the PC2 by {d}"
        d = largest_difference(waist[first + k], [cached[i] for i in pins])
        assert d < 1e-4, f"frame {first + k}: the pinned waist is {d} m off the hips' skin"
    positions = np.array(frames, dtype=float)
    stretch = outside_garments.metrics.max_stretch(positions, entry["edges"])
    assert stretch < MAX_STRETCH, f"an edge stretched by {100 * stretch:.0f}%"
    _, after_ten = outside_garments.penetration(entry, tmp_path, positions, first)
    assert after_ten < MAX_DEPTH_M, f"{1000 * after_ten:.1f} mm inside the body after frame 10"
    # The flare falls in under gravity: the hem (the last ring) hangs closer to the axis.
    rings, around = outside_garments.SKIRT_GRID
    hem = slice((rings - 1) * around, rings * around)

    def hem_radius(x):
        centre = x[: around].mean(axis=0)  # the waist ring's centre
        return np.linalg.norm((x[hem] - centre)[:, :2], axis=1).mean()

    assert hem_radius(positions[-1]) < hem_radius(positions[0]) - 0.01


@pytest.mark.parametrize("name", ["figure_skirt", "figure_skirt_unbound"])
def test_pins_that_will_tear_the_skirt_are_named_before_the_bake(drape, tmp_path, name):
    """The A-line skirt not bound to the rig: part of its pinned waist sits nearest a
    hanging hand and follows it, which tears the cloth whatever the solver does. drape says
    so at the first frame, naming two such pins; the bound skirt gets no such warning."""
    entry = outside_garments.build_scene(name, ASSETS, tmp_path)
    first, last = entry["frames"]
    r = drape("simulate", tmp_path / entry["glb"], "--frames", f"{first}..{first + 1}",
              "-o", tmp_path / f"{name}.pc2", "--progress", "none")
    tearing = [line for line in r.stderr.splitlines() if "will tear" in line]
    if name == "figure_skirt":
        assert not tearing, r.stderr
        return
    assert len(tearing) == 1, r.stderr
    assert "pinned particles" in tearing[0] and "armature" in tearing[0], tearing[0]


def test_the_fox_in_centimetres_is_named_and_its_cape_falls_in_centimetres_with_scale(
        drape, tmp_path):
    """The Fox is modelled in centimetre-sized units in a glTF that says metres (issue 51,
    "Units"). drape names its size and advises --scale 0.01; with it, the blanket over its
    back falls as a metre-sized cloth does and bakes the walk, its cache still in the
    file's units (the hem drops about g t^2 / 2 = 13.6 cm by frame 4: 13.6 file units, where
    read as metres it would drop 0.136 units)."""
    entry = outside_garments.build_scene("fox_cape", ASSETS, tmp_path)
    first, last = entry["frames"]
    scene = tmp_path / entry["glb"]
    r = drape("inspect", scene)
    assert "'fox' is 164.659 m across" in r.stderr and "--scale 0.01 " in r.stderr, r.stderr
    drops = {}
    for scale in ("1", "0.01"):
        out = tmp_path / f"cape_{scale}.pc2"
        r = drape("simulate", scene, "--scale", scale, "--frames", f"{first}..{last}",
                  "-o", out, "--progress", "none")
        assert ("implausibly large" in r.stderr) == (scale == "1"), r.stderr
        _, _, frames = read_pc2(out)
        assert len(frames) == last - first + 1
        x = np.array(frames, dtype=float)
        hem = np.argmin(x[0][:, 1])  # the lowest vertex at the first frame (Y up)
        drops[scale] = x[0][hem, 1] - x[4][hem, 1]
    assert drops["0.01"] > 5.0 and drops["1"] < 0.5, drops


def test_skirt_on_the_usdskel_figure(drape, tmp_path):
    """Issue 51: the full skirt whose hands pass through it, draped on the UsdSkel
    RiggedFigure.usdz (the body as Pixar's USD holds it: Skeleton, SkelAnimation, skinned
    Mesh), through a scene file that takes the garment from Blender's glTF export. The bake
    ends with exit 0, no edge stretched over 20%, and from the tenth frame no particle more
    than 2 mm inside the body — measured against the glTF figure, whose skinned points
    agree with the usdz's within 1e-5 m (tests/usd_compose.rs)."""
    usdz = ASSETS / "RiggedFigure.usdz"
    if not usdz.is_file():
        pytest.skip(f"{usdz} is absent")
    entry = outside_garments.build_scene("figure_skirt_hands", ASSETS, tmp_path)
    first, last = entry["frames"]
    scene = tmp_path / "usdskel_scene.json"
    scene.write_text(json.dumps({
        "garments": [{"file": entry["glb"], "name": entry["garment"]}],
        "bodies": [{"file": str(usdz)}]}))
    out = tmp_path / "usdskel.pc2"
    r = drape("simulate", scene, "--frames", f"{first}..{last}", "--up", "z", "-o", out,
              "--progress", "none")
    assert "Proxy_1" in r.stderr, r.stderr  # the usdz body, named in the start warning
    _, _, frames = read_pc2(out)
    assert len(frames) == last - first + 1
    positions = np.array(frames, dtype=float)
    stretch = outside_garments.metrics.max_stretch(positions, entry["edges"])
    assert stretch < MAX_STRETCH, f"an edge stretched by {100 * stretch:.0f}%"
    deepest, after_ten = outside_garments.penetration(entry, tmp_path, positions, first)
    print(f"usdskel figure: stretch {100 * stretch:.1f}%, deepest {1000 * deepest:.2f} mm, "
          f"from frame 10 {1000 * after_ten:.2f} mm")
    assert after_ten < MAX_DEPTH_M, f"{1000 * after_ten:.1f} mm inside the body after frame 10"
