"""The extension installed the way an artist installs it, in the Blender of this venv (4.5 LTS
or 5.x): scripts/build-blender-extension.sh makes the platform package with the drape binary
inside; Install from Disk (`bpy.ops.extensions.package_install_files`) puts it in a
repository of the test's own and enables it, with NO binary path set. On a skinned character
built here (a figure of revolution with hips wider than its waist, deformed by an armature
whose root bone walks it forward with a sway and a bob) a flared skirt is baked with Simulate
Garment: the cache is loaded, the garment plays it (frames differ from the first and equal the
PC2), and the deepest penetration of garment vertices into the body over all frames is
measured and small. Then Match Keyframes with a key taken from the bake, the garment's own
frame range, Bake All, and the uninstall (`package_uninstall`)."""
import math
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

bpy = pytest.importorskip("bpy")
import addon_utils  # noqa: E402
import bmesh  # noqa: E402
from mathutils import Vector  # noqa: E402
from mathutils.bvhtree import BVHTree  # noqa: E402

from readers import read_pc2  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
REPO = "drape_install_test"  # the module name of the test's extension repository
MODULE = f"bl_ext.{REPO}.drape"
FIRST, LAST = 1, 24
KEY = 12  # the Match Keyframes key frame; that bake runs frames FIRST..KEY
SEGMENTS = 24  # around the body and the skirt
#: The figure's profile: (height, radius) in m, legs to chest; the hips (0.75 m, 0.20 m) are
#: wider than the skirt's waist, which rests on them.
PROFILE = ((0.0, 0.10), (0.45, 0.13), (0.62, 0.18), (0.75, 0.20), (0.85, 0.17),
           (0.95, 0.14), (1.10, 0.15), (1.30, 0.17), (1.45, 0.08))
#: The skirt: a truncated cone from the waist ring (top) to the hem, SKIRT_ROWS rows of quads.
SKIRT_TOP, SKIRT_TOP_R = 0.93, 0.17
SKIRT_HEM, SKIRT_HEM_R = 0.45, 0.31
SKIRT_ROWS = 8
WALK = 0.4  # m forward over FIRST..LAST (0.4 m/s at 24 fps)
SWAY = math.radians(8.0)  # hip sway about the vertical
BOB = 0.012  # m
#: The deepest a garment vertex may be inside the body at any frame (m): drape collides
#: particles against the body's triangles between exported frames, so a vertex at a crease
#: of this coarse body may be found a few millimetres inside at single frames.
MAX_DEPTH = 0.01


def build_package(binary, out_dir):
    """Runs scripts/build-blender-extension.sh with `binary` and this venv's bpy; returns
    the zip's path."""
    env = dict(os.environ, DRAPE_BIN=str(binary), BLENDER_PYTHON=sys.executable)
    r = subprocess.run(["bash", str(ROOT / "scripts" / "build-blender-extension.sh"),
                        str(out_dir)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    path = pathlib.Path(r.stdout.strip().splitlines()[-1])
    assert path.is_file(), r.stdout + r.stderr
    return path


def build_figure():
    """The body: a closed surface of revolution of PROFILE, outward normals, every vertex
    weighted 1 to the bone Root of the armature Rig; Root walks it forward along -Y with a
    sway and a bob (keyframes every 4 frames)."""
    scene = bpy.context.scene
    mesh = bpy.data.meshes.new("Figure")
    bm = bmesh.new()
    rings = []
    for z, r in PROFILE:
        rings.append([bm.verts.new((r * math.cos(2 * math.pi * i / SEGMENTS),
                                    r * math.sin(2 * math.pi * i / SEGMENTS), z))
                      for i in range(SEGMENTS)])
    for lower, upper in zip(rings, rings[1:]):
        for i in range(SEGMENTS):
            j = (i + 1) % SEGMENTS
            bm.faces.new((lower[i], lower[j], upper[j], upper[i]))
    bm.faces.new(list(reversed(rings[0])))
    bm.faces.new(rings[-1])
    bmesh.ops.recalc_face_normals(bm, faces=bm.faces)
    bmesh.ops.triangulate(bm, faces=bm.faces)
    bm.to_mesh(mesh)
    bm.free()
    body = bpy.data.objects.new("Figure", mesh)
    scene.collection.objects.link(body)

    rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bone = rig.data.edit_bones.new("Root")
    bone.head, bone.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 0.5)  # bone Y = world Z
    bpy.ops.object.mode_set(mode="OBJECT")
    body.vertex_groups.new(name="Root").add(range(len(mesh.vertices)), 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = rig
    pose = rig.pose.bones["Root"]
    pose.rotation_mode = "XYZ"
    for frame in range(FIRST, LAST + 1, 4):
        t = (frame - FIRST) / (LAST - FIRST)
        phase = 2 * math.pi * 2 * t  # two strides
        # bone axes: X = world X, Y = world Z, Z = world -Y
        pose.location = (0.0, BOB * (1 - math.cos(phase)), WALK * t)
        pose.rotation_euler = (0.0, SWAY * math.sin(phase), 0.0)
        pose.keyframe_insert("location", frame=frame)
        pose.keyframe_insert("rotation_euler", frame=frame)
    return body


def build_skirt():
    """The garment: an open truncated cone around the hips, one seam; its UVs are the cone's
    flat pattern (an annulus sector), so the UV panel is the modelled shape."""
    mesh = bpy.data.meshes.new("Skirt")
    bm = bmesh.new()
    rows = []
    for k in range(SKIRT_ROWS + 1):
        s = k / SKIRT_ROWS
        z = SKIRT_TOP + (SKIRT_HEM - SKIRT_TOP) * s
        r = SKIRT_TOP_R + (SKIRT_HEM_R - SKIRT_TOP_R) * s
        rows.append([bm.verts.new((r * math.cos(2 * math.pi * i / SEGMENTS),
                                   r * math.sin(2 * math.pi * i / SEGMENTS), z))
                     for i in range(SEGMENTS)])
    slant = math.hypot(SKIRT_TOP - SKIRT_HEM, SKIRT_HEM_R - SKIRT_TOP_R)
    apex = SKIRT_TOP_R * slant / (SKIRT_HEM_R - SKIRT_TOP_R)  # unrolled radius of the waist
    uv = bm.loops.layers.uv.new("UVMap")
    for k in range(SKIRT_ROWS):
        for i in range(SEGMENTS):
            corners = ((k, i), (k + 1, i), (k + 1, i + 1), (k, i + 1))
            face = bm.faces.new([rows[a][b % SEGMENTS] for a, b in corners])
            for loop, (a, b) in zip(face.loops, corners):
                rho = apex + slant * a / SKIRT_ROWS
                phi = 2 * math.pi * b / SEGMENTS * SKIRT_TOP_R / apex
                loop[uv].uv = (rho * math.sin(phi), -rho * math.cos(phi))
    for edge in bm.edges:
        edge.seam = all(abs(v.co.y) < 1e-9 and v.co.x > 0 for v in edge.verts)
    bm.to_mesh(mesh)
    bm.free()
    ob = bpy.data.objects.new("Skirt", mesh)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def select(garment, *bodies):
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    for o in (garment, *bodies):
        o.select_set(True)
    bpy.context.view_layer.objects.active = garment


def evaluated_points(ob, frame):
    """Object-local and world vertex positions Blender evaluates at `frame`."""
    bpy.context.scene.frame_set(frame)
    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    m = ev.to_mesh()
    local = [Vector(v.co) for v in m.vertices]
    world = [ev.matrix_world @ v.co for v in m.vertices]
    ev.to_mesh_clear()
    return local, world


def deepest_penetration(garment, body, frame):
    """(depth in m, vertex index): the deepest garment vertex inside the evaluated body at
    `frame` (0 when none is inside), by the nearest body triangle and its outward normal."""
    _, world = evaluated_points(garment, frame)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    tree = BVHTree.FromObject(body, depsgraph)  # the body object's transform is identity
    deepest = (0.0, -1)
    for index, p in enumerate(world):
        location, normal, _, distance = tree.find_nearest(p)
        if location is not None and (p - location).dot(normal) < 0 and distance > deepest[0]:
            deepest = (distance, index)
    return deepest


def find_repo_index():
    for i, repo in enumerate(bpy.context.preferences.extensions.repos):
        if repo.module == REPO:
            return i
    return -1


@pytest.fixture(scope="module")
def installed(drape, tmp_path_factory):
    """The package built from drape's binary, installed and enabled from the zip into a
    repository in a temporary directory, on a factory-settings scene; uninstalled after."""
    package = build_package(drape.binary, tmp_path_factory.mktemp("package"))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if "drape" in bpy.context.preferences.addons:  # the folder add-on of other test modules
        addon_utils.disable("drape", default_set=True)
    repo_dir = tmp_path_factory.mktemp("extensions")
    bpy.context.preferences.extensions.repos.new(
        name="drape install test", module=REPO, custom_directory=str(repo_dir))
    result = bpy.ops.extensions.package_install_files(
        filepath=str(package), repo=REPO, enable_on_install=True)
    yield result, package, repo_dir
    if MODULE in bpy.context.preferences.addons:
        addon_utils.disable(MODULE, default_set=True)
    index = find_repo_index()
    if index >= 0:
        bpy.context.preferences.extensions.repos.remove(
            bpy.context.preferences.extensions.repos[index])


@pytest.fixture(scope="module")
def baked(installed):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FIRST, LAST
    scene.render.fps = 24
    body = build_figure()
    skirt = build_skirt()
    select(skirt, body)
    scene.frame_set(FIRST)
    result = bpy.ops.drape.simulate_garment()
    return result, skirt, body


def test_the_package_holds_the_add_on_the_binary_and_its_platform(installed):
    _, package, _ = installed
    with zipfile.ZipFile(package) as z:
        names = set(z.namelist())
        manifest = z.read("blender_manifest.toml").decode()
        mode = z.getinfo("bin/drape").external_attr >> 16
    assert {"blender_manifest.toml", "__init__.py", "operators.py", "settings.py", "runner.py",
            "cache.py", "export.py", "keyframes.py", "silhouettes.py", "bin/drape"} <= names
    assert 'platforms = ["linux-x64"]' in manifest
    assert mode & 0o111, "the binary is stored executable"
    assert package.name == "drape-0.1.0-linux_x64.zip"
    print(f"\npackage {package.name}: {package.stat().st_size} bytes, {sorted(names)}")


def test_install_from_disk_enables_the_extension_with_no_binary_path(installed):
    result, _, repo_dir = installed
    assert result == {"FINISHED"}
    addon = bpy.context.preferences.addons.get(MODULE)
    assert addon is not None, sorted(bpy.context.preferences.addons.keys())
    assert addon.preferences.binary_path == ""
    packaged = repo_dir / "drape" / "bin" / "drape"
    assert packaged.is_file()
    print(f"\nbpy {bpy.app.version_string}: installed bin/drape mode "
          f"{oct(packaged.stat().st_mode & 0o777)}")
    extension = sys.modules[MODULE]
    found = extension.binary(bpy.context)
    assert pathlib.Path(found) == repo_dir / "drape" / "bin" / "drape"
    assert os.access(found, os.X_OK)


def test_simulate_garment_loads_the_cache_and_the_garment_plays_it(baked):
    result, skirt, _ = baked
    assert result == {"FINISHED"}
    mod = skirt.modifiers["Drape"]
    assert mod.type == "MESH_CACHE" and mod.frame_start == FIRST
    start, _, frames = read_pc2(mod.filepath)
    assert start == FIRST and len(frames) == LAST - FIRST + 1
    local, _ = evaluated_points(skirt, FIRST)
    moved = max((a - Vector(b)).length for a, b in zip(local, frames[-1]))
    assert moved > 0.05, "the skirt moves with the walking figure"
    for f in (FIRST, 8, LAST):
        local, _ = evaluated_points(skirt, f)
        d = max((a - Vector(b)).length for a, b in zip(local, frames[f - FIRST]))
        assert d < 1e-5, f"frame {f}: the evaluated skirt differs from the PC2 by {d} m"
    print(f"\nbpy {bpy.app.version_string}: {len(frames)} frames of {len(local)} vertices "
          f"loaded from {pathlib.Path(mod.filepath).name}; hem moved {moved:.3f} m")


def test_the_bake_settings_and_bodies_live_on_the_garment(baked):
    _, skirt, body = baked
    assert skirt.drape.is_garment
    assert [b.object for b in skirt.drape.bodies] == [body]
    assert skirt.drape.material == "cotton"


def test_the_skirt_stays_on_the_body_deepest_penetration_is_small(baked):
    _, skirt, body = baked
    worst = max((deepest_penetration(skirt, body, f) + (f,) for f in range(FIRST, LAST + 1)),
                key=lambda d: d[0])
    depth, vertex, frame = worst
    print(f"\nbpy {bpy.app.version_string}: deepest penetration {1e3 * depth:.2f} mm "
          f"(vertex {vertex}, frame {frame}) over frames {FIRST}..{LAST}")
    assert depth < MAX_DEPTH, \
        f"vertex {vertex} is {depth * 1e3:.1f} mm inside the body at frame {frame}"
    _, world = evaluated_points(skirt, LAST)
    lowest = min(p.z for p in world)
    assert lowest > 0.3, "the skirt hangs from the hips rather than falling off"


def test_match_keyframes_with_the_garments_own_frames(baked):
    _, skirt, _ = baked
    _, _, frames = read_pc2(skirt.modifiers["Drape"].filepath)
    if skirt.data.shape_keys is None:
        skirt.shape_key_add(name="Basis")
    key = skirt.shape_key_add(name=f"key_{KEY}")
    for d, p in zip(key.data, frames[KEY - FIRST]):
        d.co = p
    key.value = 0.0
    skirt.drape.use_scene_frames = False
    skirt.drape.frame_start, skirt.drape.frame_end = FIRST, KEY
    try:
        select(skirt)  # no body selected: the bodies of the last bake
        assert bpy.ops.drape.match_keyframes(iterations=2) == {"FINISHED"}
        mod = skirt.modifiers["Drape"]
        start, _, controlled = read_pc2(mod.filepath)
        assert start == FIRST and len(controlled) == KEY - FIRST + 1
    finally:
        skirt.drape.use_scene_frames = True
        skirt.shape_key_remove(key)


def test_bake_all_rebakes_every_garment_with_its_settings(baked):
    _, skirt, _ = baked
    select(skirt)
    skirt.modifiers["Drape"].filepath = ""
    assert bpy.ops.drape.bake_all() == {"FINISHED"}
    start, _, frames = read_pc2(skirt.modifiers["Drape"].filepath)
    assert start == FIRST and len(frames) == LAST - FIRST + 1


def test_uninstall_removes_the_extension(installed, baked):
    _, _, repo_dir = installed
    index = find_repo_index()
    assert index >= 0
    result = bpy.ops.extensions.package_uninstall(repo_index=index, pkg_id="drape")
    assert result == {"FINISHED"}
    assert MODULE not in bpy.context.preferences.addons
    assert not (repo_dir / "drape").exists()
