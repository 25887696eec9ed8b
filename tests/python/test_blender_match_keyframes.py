"""Object ▸ Drape ▸ Match Keyframes in Blender itself (bpy 4.5 and 5.3), blocking (background)
path (issue 7, "[6 of 7]": "the same for Match Keyframes with one shape key").

A sheet hangs from its pinned top row (the float point attribute `pin`, exported by Blender
as `primvars:pin`); its shape key `key_<KEY>` swings the lower half forward along +Y. Match
Keyframes must leave the Drape Mesh Cache modifier like Simulate Garment, and its cache must
be closer to the key at frame KEY than an uncontrolled Simulate Garment bake of the same
scene. The key's value is 1 during both runs: the export must still be the rest shape, and
the played cache must ignore shape key values.
"""
import math
import pathlib
import sys

import pytest

bpy = pytest.importorskip("bpy")
import bmesh  # noqa: E402

from readers import read_mdd, read_pc2  # noqa: E402

FIRST, LAST, KEY = 1, 12, 10
N = 6  # quads across and down
SIZE = 0.6  # m
SWING = 0.15  # m: the hem moves this far forward at the key


def build_sheet(name="Sheet", key=True):
    """An N x N quad grid in the XZ plane, top row pinned, UVs = its flat (x, z) in metres;
    with `key`, shape keys Basis and key_<KEY> (hem swung by SWING along +Y, growing
    quadratically from the top)."""
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    step = SIZE / N
    verts = [[bm.verts.new((-SIZE / 2 + step * i, 0.0, -step * j)) for i in range(N + 1)]
             for j in range(N + 1)]
    for j in range(N):
        for i in range(N):
            bm.faces.new((verts[j][i], verts[j + 1][i], verts[j + 1][i + 1], verts[j][i + 1]))
    uv = bm.loops.layers.uv.new("UVMap")
    for face in bm.faces:
        for loop in face.loops:
            x, _, z = loop.vert.co
            loop[uv].uv = (x, z)
    bm.to_mesh(mesh)
    bm.free()
    pin = mesh.attributes.new("pin", "FLOAT", "POINT")
    pin.data.foreach_set("value", [1.0 if v.co.z > -1e-6 else 0.0 for v in mesh.vertices])
    ob = bpy.data.objects.new(name, mesh)
    ob.location = (0.0, 0.0, 1.5)
    bpy.context.scene.collection.objects.link(ob)
    if key:
        ob.shape_key_add(name="Basis")
        block = ob.shape_key_add(name=f"key_{KEY}")
        for d in block.data:
            depth = -d.co.z / SIZE  # 0 at the pinned top, 1 at the hem
            d.co.y += SWING * depth * depth
    return ob


def make_active(ob):
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    ob.select_set(True)
    bpy.context.view_layer.objects.active = ob


def rms(a, b):
    return math.sqrt(sum((x - y) ** 2 for p, q in zip(a, b) for x, y in zip(p, q)) / len(a))


def evaluated_local(ob, frame):
    bpy.context.scene.frame_set(frame)
    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    m = ev.to_mesh()
    local = [tuple(v.co) for v in m.vertices]
    ev.to_mesh_clear()
    return local


@pytest.fixture(scope="module")
def runs(drape):
    """Simulate Garment, then Match Keyframes, on the same sheet with key_<KEY> at value 1."""
    from test_blender_extension import fresh_scene

    scene = fresh_scene(drape.binary, FIRST, LAST)
    sheet = build_sheet()
    block = sheet.data.shape_keys.key_blocks[f"key_{KEY}"]
    block.value = 1.0  # must not leak into the exported rest shape
    make_active(sheet)
    scene.frame_set(FIRST)
    assert bpy.ops.drape.simulate_garment() == {"FINISHED"}
    plain = read_pc2(sheet.modifiers["Drape"].filepath)
    result = bpy.ops.drape.match_keyframes(iterations=10)
    controlled = read_pc2(sheet.modifiers["Drape"].filepath)
    return {"result": result, "sheet": sheet, "plain": plain, "controlled": controlled}


def test_match_keyframes_returns_finished_and_leaves_the_mesh_cache(runs):
    sheet = runs["sheet"]
    assert runs["result"] == {"FINISHED"}
    assert [m.name for m in sheet.modifiers if m.type == "MESH_CACHE"] == ["Drape"]
    mod = sheet.modifiers["Drape"]
    assert mod.cache_format == "PC2" and mod.frame_start == FIRST
    path = pathlib.Path(mod.filepath)
    assert path.suffix == ".pc2" and path.is_file()
    start, sampling, frames = runs["controlled"]
    assert (start, sampling) == (FIRST, 1.0)
    assert len(frames) == LAST - FIRST + 1 and len(frames[0]) == len(sheet.data.vertices)


def test_keyframes_go_to_drape_as_an_mdd_in_vertex_order_at_frame_over_fps(runs):
    sheet = runs["sheet"]
    mdd = pathlib.Path(sheet.modifiers["Drape"].filepath).with_name("Sheet_keys.mdd")
    times, samples = read_mdd(mdd)
    assert times == [pytest.approx(KEY / 24, rel=1e-6)]
    key = [tuple(d.co) for d in sheet.data.shape_keys.key_blocks[f"key_{KEY}"].data]
    assert rms(samples[0], key) < 1e-6


def test_the_export_is_the_rest_shape_whatever_the_key_value(runs):
    sheet = runs["sheet"]
    basis = [tuple(v.co) for v in sheet.data.vertices]
    for _, _, frames in (runs["plain"], runs["controlled"]):
        assert rms(frames[0], basis) < 1e-6
    block = sheet.data.shape_keys.key_blocks[f"key_{KEY}"]
    assert block.value == 1.0 and not block.mute, "the export restores the shape key"


def test_the_controlled_cache_is_closer_to_the_key_than_a_plain_simulation(runs):
    sheet = runs["sheet"]
    key = [tuple(d.co) for d in sheet.data.shape_keys.key_blocks[f"key_{KEY}"].data]
    plain = rms(runs["plain"][2][KEY - FIRST], key)
    controlled = rms(runs["controlled"][2][KEY - FIRST], key)
    print(f"RMS distance to key_{KEY}: plain {1e3 * plain:.1f} mm, "
          f"controlled {1e3 * controlled:.1f} mm")
    assert plain > 0.03, "without control the sheet keeps hanging, far from the key"
    assert controlled < 0.5 * plain


def test_shape_key_values_do_not_alter_the_played_cache(runs):
    sheet = runs["sheet"]
    _, _, frames = runs["controlled"]
    block = sheet.data.shape_keys.key_blocks[f"key_{KEY}"]
    for value, show_only in ((1.0, False), (0.0, False), (0.0, True)):
        block.value = value
        sheet.show_only_shape_key = show_only
        sheet.active_shape_key_index = list(sheet.data.shape_keys.key_blocks).index(block)
        for f in (FIRST, KEY, LAST):
            d = rms(evaluated_local(sheet, f), frames[f - FIRST])
            assert d < 1e-6, f"value {value}, show only {show_only}, frame {f}: {d}"
    sheet.show_only_shape_key = False
    block.value = 1.0


def test_without_key_shape_keys_match_keyframes_is_cancelled_with_the_reason(runs):
    plain = build_sheet("Plain", key=False)
    plain.shape_key_add(name="Basis")
    plain.shape_key_add(name="Smile")  # not a keyframe
    make_active(plain)
    with pytest.raises(RuntimeError, match=r"Plain has no shape keys named key_<frame>"):
        bpy.ops.drape.match_keyframes()
    assert not [m for m in plain.modifiers if m.type == "MESH_CACHE"]


def test_a_key_outside_the_frame_range_is_cancelled_naming_it(runs):
    late = build_sheet("Late", key=False)
    late.shape_key_add(name="Basis")
    late.shape_key_add(name=f"key_{LAST + 5}")
    make_active(late)
    with pytest.raises(RuntimeError, match=rf"key_{LAST + 5} of Late lie outside frames"):
        bpy.ops.drape.match_keyframes()
    assert not [m for m in late.modifiers if m.type == "MESH_CACHE"]


def test_a_key_weight_vertex_group_reaches_drape_as_a_primvar(runs, tmp_path):
    """drape reads keyframe weights W_n from `primvars:key_weight`; Blender's USD exporter
    writes the vertex group of that name (0 where unassigned)."""
    import drape as extension

    sheet = build_sheet("Weighted")
    group = sheet.vertex_groups.new(name="key_weight")
    hem = [v.index for v in sheet.data.vertices if v.co.z < -SIZE + 1e-6]
    group.add(hem, 0.75, "REPLACE")
    make_active(sheet)
    usda = tmp_path / "weighted.usda"
    extension.export_usd(bpy.context, sheet, [], str(usda))
    text = usda.read_text()
    line = next(s for s in text.splitlines() if "primvars:key_weight" in s)
    values = [float(x) for x in line.split("= [", 1)[1].split("]", 1)[0].split(",")]
    assert values == [0.75 if i in hem else 0.0 for i in range(len(sheet.data.vertices))]


def test_operator_properties_reach_drape_control_and_iterations_show_in_the_status(
        runs, tmp_path):
    """The command line of a fake drape that records it; its iteration line becomes the
    status text the modal path shows (and background mode prints)."""
    import drape as extension

    args = tmp_path / "args.txt"
    fake = tmp_path / "drape"
    fake.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"open({str(args)!r}, 'w').write('\\n'.join(sys.argv[1:]))\n"
        "sys.stderr.write('{\"event\":\"iteration\",\"garment\":\"Sheet\",\"iteration\":3,'\n"
        "                 '\"of\":7,\"objective\":0.0125,\"keyframe_error\":0.0042}\\n')\n"
        "sys.stderr.write('{\"event\":\"error\",\"code\":2,\"message\":\"fake stop\"}\\n')\n"
        "sys.exit(2)\n")
    fake.chmod(0o755)
    prefs = bpy.context.preferences.addons["drape"].preferences
    saved, prefs.binary_path = prefs.binary_path, str(fake)
    make_active(runs["sheet"])
    before = runs["sheet"].modifiers["Drape"].filepath
    try:
        with pytest.raises(RuntimeError, match="fake stop"):
            bpy.ops.drape.match_keyframes("INVOKE_DEFAULT", regularization=1e-3, iterations=7)
    finally:
        prefs.binary_path = saved
    argv = args.read_text().split("\n")
    assert argv[0] == "control" and argv[1].endswith("Sheet_scene.usdc")
    assert argv[argv.index("--keyframes") + 1].endswith("Sheet_keys.mdd")
    assert argv[argv.index("--regularization") + 1] == "0.001"
    assert argv[argv.index("--iterations") + 1] == "7"
    assert argv[argv.index("--frames") + 1] == f"{FIRST}..{LAST}"
    assert argv[argv.index("--progress") + 1] == "json"
    assert runs["sheet"].modifiers["Drape"].filepath == before
    status = extension.runner.iteration_status(
        {"event": "iteration", "iteration": 3, "of": 7, "objective": 0.0125,
         "keyframe_error": 0.0042})
    assert status == "drape: iteration 3/7, objective 0.0125, keyframe error 4.2 mm"
