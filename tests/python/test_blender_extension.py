"""The Blender extension (plugin-scripts/blender/drape) in Blender itself (bpy 4.5 and 5.3): a
garment with a UV seam over an armature-deformed body, Object ▸ Drape ▸ Simulate Garment in its
blocking (background) path, the Mesh Cache modifier it leaves, the evaluated garment equal to
the PC2 at several frames and resting on the body (issue 7, "[6 of 7]"). Match Keyframes:
test_blender_match_keyframes.py."""
import pathlib
import struct
import subprocess
import sys

import pytest

bpy = pytest.importorskip("bpy")
import addon_utils  # noqa: E402
import bmesh  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "plugin-scripts" / "blender"
FIRST, LAST = 1, 24
HALF = 0.3  # the garment is a 0.6 m square
BOX = 0.4  # the body is a box 0.8 m wide, 0.5 m tall
TOP = 0.5
LIFT = 0.05  # the bone lifts the body by this much between frames 1 and LAST
DROP_FROM = 0.8  # the garment object's height


def read_pc2(path):
    data = pathlib.Path(path).read_bytes()
    assert data[:12] == b"POINTCACHE2\0"
    version, points, start, sampling, samples = struct.unpack_from("<iiffi", data, 12)
    flat = struct.unpack_from(f"<{points * samples * 3}f", data, 32)
    frames = [
        [flat[(f * points + p) * 3:(f * points + p) * 3 + 3] for p in range(points)]
        for f in range(samples)
    ]
    return start, sampling, frames


def install_extension():
    if str(EXTENSION) not in sys.path:
        sys.path.insert(0, str(EXTENSION))
    addon_utils.enable("drape", default_set=True, handle_error=None)
    assert bpy.context.preferences.addons.get("drape") is not None


def fresh_scene(binary, first, last, fps=24):
    """An empty factory-settings scene with the extension installed, pointed at `binary`,
    playing frames `first`..`last` at `fps`."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    install_extension()
    bpy.context.preferences.addons["drape"].preferences.binary_path = str(binary)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = first, last
    scene.render.fps = fps
    return scene


def build_garment(n=6, seam=3, gap=0.25):
    """An n x n grid of quads, 0.6 m square, lying flat, cut by a UV seam down column `seam`."""
    mesh = bpy.data.meshes.new("Cloth")
    bm = bmesh.new()
    step = 2 * HALF / n
    verts = [[bm.verts.new((-HALF + step * i, -HALF + step * j, 0.0)) for i in range(n + 1)]
             for j in range(n + 1)]
    for j in range(n):
        for i in range(n):
            bm.faces.new((verts[j][i], verts[j][i + 1], verts[j + 1][i + 1], verts[j + 1][i]))
    uv = bm.loops.layers.uv.new("UVMap")
    x_seam = -HALF + step * seam
    for face in bm.faces:
        right = face.calc_center_median().x > x_seam + 1e-6
        for loop in face.loops:
            x, y, _ = loop.vert.co
            loop[uv].uv = (x + (gap if right else 0.0), y)
    for edge in bm.edges:
        a, b = edge.verts
        edge.seam = abs(a.co.x - x_seam) < 1e-6 and abs(b.co.x - x_seam) < 1e-6
    bm.to_mesh(mesh)
    bm.free()
    ob = bpy.data.objects.new("Cloth", mesh)
    ob.location = (0.0, 0.0, DROP_FROM)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def build_body():
    """A box deformed by an armature whose bone is keyframed to lift it by LIFT."""
    scene = bpy.context.scene
    mesh = bpy.data.meshes.new("Body")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    for v in bm.verts:
        v.co = (v.co.x * 2 * BOX, v.co.y * 2 * BOX, (v.co.z + 0.5) * TOP)
    bm.to_mesh(mesh)
    bm.free()
    body = bpy.data.objects.new("Body", mesh)
    scene.collection.objects.link(body)

    arm_data = bpy.data.armatures.new("Rig")
    rig = bpy.data.objects.new("Rig", arm_data)
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm_data.edit_bones.new("Root")
    bone.head, bone.tail = (0.0, 0.0, 0.0), (0.0, 0.0, TOP)  # bone Y axis = world Z
    bpy.ops.object.mode_set(mode="OBJECT")

    group = body.vertex_groups.new(name="Root")
    group.add(range(len(mesh.vertices)), 1.0, "REPLACE")
    mod = body.modifiers.new("Armature", "ARMATURE")
    mod.object = rig
    pose = rig.pose.bones["Root"]
    pose.location = (0.0, 0.0, 0.0)
    pose.keyframe_insert("location", frame=FIRST)
    pose.location = (0.0, LIFT, 0.0)
    pose.keyframe_insert("location", frame=LAST)
    return body


def evaluated(ob, frame):
    """Object-local and world vertex positions Blender evaluates at `frame`."""
    bpy.context.scene.frame_set(frame)
    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    m = ev.to_mesh()
    local = [tuple(v.co) for v in m.vertices]
    world = [tuple(ev.matrix_world @ v.co) for v in m.vertices]
    ev.to_mesh_clear()
    return local, world


@pytest.fixture(scope="module")
def baked(drape, tmp_path_factory):
    scene = fresh_scene(drape.binary, FIRST, LAST)
    body = build_body()
    garment = build_garment()
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    body.select_set(True)
    garment.select_set(True)
    bpy.context.view_layer.objects.active = garment
    scene.frame_set(FIRST)
    result = bpy.ops.drape.simulate_garment()
    return result, garment, body


def test_simulate_garment_returns_finished_and_leaves_a_mesh_cache(baked):
    result, garment, _ = baked
    assert result == {"FINISHED"}
    mods = [m for m in garment.modifiers if m.type == "MESH_CACHE"]
    assert len(mods) == 1
    mod = mods[0]
    assert mod.cache_format == "PC2"
    assert mod.frame_start == FIRST
    path = pathlib.Path(mod.filepath)
    assert path.suffix == ".pc2" and path.is_file()
    start, sampling, frames = read_pc2(path)
    assert (start, sampling) == (FIRST, 1.0)
    assert len(frames) == LAST - FIRST + 1
    assert len(frames[0]) == len(garment.data.vertices)


def test_the_body_is_deformed_by_its_armature(baked):
    _, _, body = baked
    top = [max(p[2] for p in evaluated(body, f)[1]) for f in (FIRST, LAST)]
    assert top[0] == pytest.approx(TOP, abs=1e-6)
    assert top[1] == pytest.approx(TOP + LIFT, abs=1e-6)


def test_evaluated_garment_equals_the_cache_at_several_frames(baked):
    _, garment, _ = baked
    _, _, frames = read_pc2(garment.modifiers["Drape"].filepath)
    moved = max(abs(a - b) for p, q in zip(frames[0], frames[-1]) for a, b in zip(p, q))
    assert moved > 0.1, "the garment falls onto the body, so the frames differ"
    for f in (FIRST, 5, 12, LAST):
        local, _ = evaluated(garment, f)
        d = max(abs(a - b) for p, q in zip(local, frames[f - FIRST]) for a, b in zip(p, q))
        assert d < 1e-5, f"frame {f}: evaluated garment differs from the PC2 by {d}"


def assert_rests_on_the_box(garment, body):
    """At the last frame no garment vertex is inside the box body and the garment lies on
    its top face (within 5 cm above it, every vertex over the box's footprint)."""
    _, body_world = evaluated(body, LAST)
    top = max(p[2] for p in body_world)
    _, world = evaluated(garment, LAST)
    thickness = 0.01
    inside = [p for p in world if abs(p[0]) < BOX and abs(p[1]) < BOX and p[2] < top - thickness]
    assert not inside, f"{len(inside)} garment vertices inside the body, e.g. {inside[0]}"
    zs = [p[2] for p in world]
    assert min(zs) > top - thickness
    assert max(zs) < top + 0.05, f"the garment should lie on the top at {top}, max z {max(zs)}"
    assert all(abs(p[0]) < BOX and abs(p[1]) < BOX for p in world)


def test_the_garment_rests_on_the_body_rather_than_passing_through(baked):
    _, garment, body = baked
    assert_rests_on_the_box(garment, body)


def test_a_second_bake_from_invoke_updates_the_modifier_and_starts_from_the_model(baked):
    """In background mode invoke runs blocking too; the previous cache is hidden during the
    export, so the new bake starts from the modelled (flat) garment, not the draped one."""
    _, garment, _ = baked
    bpy.context.scene.frame_set(LAST)
    assert bpy.ops.drape.simulate_garment("INVOKE_DEFAULT") == {"FINISHED"}
    assert [m.name for m in garment.modifiers if m.type == "MESH_CACHE"] == ["Drape"]
    _, _, frames = read_pc2(garment.modifiers["Drape"].filepath)
    modelled = [tuple(v.co) for v in garment.data.vertices]
    d = max(abs(a - b) for p, q in zip(frames[0], modelled) for a, b in zip(p, q))
    assert d < 1e-6
    assert garment.modifiers["Drape"].show_viewport and garment.modifiers["Drape"].show_render


def test_an_error_from_the_binary_is_reported_and_leaves_the_cache_alone(baked, tmp_path):
    _, garment, _ = baked
    prefs = bpy.context.preferences.addons["drape"].preferences
    before = garment.modifiers["Drape"].filepath
    fake = tmp_path / "drape"
    fake.write_text(f"#!{sys.executable}\nimport sys\n"
                    "sys.stderr.write('{\"event\":\"error\",\"code\":2,"
                    "\"message\":\"Cloth: zero-area UV triangle 3\"}\\n')\nsys.exit(2)\n")
    fake.chmod(0o755)
    saved, prefs.binary_path = prefs.binary_path, str(fake)
    try:
        with pytest.raises(RuntimeError, match="zero-area UV triangle 3"):
            bpy.ops.drape.simulate_garment()
    finally:
        prefs.binary_path = saved
    assert garment.modifiers["Drape"].filepath == before


def test_extension_builds_and_its_manifest_validates(tmp_path):
    # bpy/4.5/scripts/modules/bpy/__init__.py -> bpy/4.5/scripts/addons_core/bl_pkg/cli
    scripts = pathlib.Path(bpy.__file__).resolve().parents[2]
    tool = scripts / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    if not tool.exists():
        pytest.skip("bpy has no bl_pkg command-line tool")
    src = EXTENSION / "drape"
    r = subprocess.run([sys.executable, str(tool), "validate", str(src)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, str(tool), "build", "--source-dir", str(src),
                        "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    (zip_file,) = tmp_path.glob("drape-*.zip")
    import zipfile

    names = set(zipfile.ZipFile(zip_file).namelist())
    assert {"blender_manifest.toml", "__init__.py", "runner.py", "cache.py",
            "keyframes.py"} <= names


def test_alembic_cache_format_loads_with_a_mesh_sequence_cache_playing_the_same_frames(baked):
    """Cache Format Alembic (issue 53): the bake writes an `.abc`, the PC2's Mesh Cache
    modifier is replaced by a Mesh Sequence Cache reading it, and the garment plays the same
    points (Alembic's Y-up turned back into Blender's Z-up by Blender's reader)."""
    _, garment, _ = baked
    _, _, frames = read_pc2(garment.modifiers["Drape"].filepath)
    garment.drape.cache_format = "ABC"
    try:
        bpy.context.scene.frame_set(FIRST)
        assert bpy.ops.drape.simulate_garment() == {"FINISHED"}
        mods = [m for m in garment.modifiers if m.name.startswith("Drape")]
        assert [m.type for m in mods] == ["MESH_SEQUENCE_CACHE"]
        mod = mods[0]
        assert pathlib.Path(bpy.path.abspath(mod.cache_file.filepath)).suffix == ".abc"
        assert mod.object_path == "/Cloth/ClothShape"
        for f in (FIRST, 12, LAST):
            local, _ = evaluated(garment, f)
            d = max(abs(a - b) for p, q in zip(local, frames[f - FIRST]) for a, b in zip(p, q))
            assert d < 1e-6, f"frame {f}: the Alembic garment differs from the PC2 by {d}"
    finally:
        garment.drape.cache_format = "PC2"
