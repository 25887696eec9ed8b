"""Alembic archives as scenes (issue 53): what Blender's Alembic exporter writes from an
animated character (a tube skinned to three bending bones under a moving parent, and a
sleeve garment marked with the custom property `drape_role`) reads in drape as the same
scene Blender's USD exporter writes: `inspect` agrees, and the sleeve baked on the body
from either file gives the same cache (the .abc one written Z-up with `--up z`, as the
USD one is). HDF5 archives and damaged archives are refused with exit 2."""
import json
import math

import pytest

bpy = pytest.importorskip("bpy")

import abc_scene  # noqa: E402
from abc_scene import FIRST, LAST, SLEEVE_R  # noqa: E402
from readers import read_pc2  # noqa: E402

#: f32 machine epsilon: both exporters store points as 32-bit floats.
F32_EPS = 2.0 ** -23


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The scene exported as .abc and as .usda (skinned points baked per frame)."""
    folder = tmp_path_factory.mktemp("abc")
    abc_scene.build_scene()
    abc, usd = folder / "scene.abc", folder / "scene.usda"
    abc_scene.export_alembic(abc)
    abc_scene.export_usd(usd)
    return abc, usd


def inspect(drape, path):
    return json.loads(drape("inspect", "--json", path).stdout)


def test_inspect_sees_the_same_garment_and_body_in_both_files(drape, exported):
    abc, usd = (inspect(drape, p) for p in exported)
    assert abc["garments"] == usd["garments"], (abc, usd)
    assert abc["garments"][0]["name"] == "Sleeve"
    assert abc["bodies"] == usd["bodies"] == [
        {"name": "Tube", "vertices": len(bpy.data.objects["Tube"].data.vertices),
         "frames": [FIRST, LAST]}]


def bake(drape, path, out, *args):
    drape("simulate", path, "--frames", f"{FIRST}..{LAST}", "-o", out, "--force",
          "--progress", "none", *args)
    return read_pc2(out)


def worst_per_frame(frames_a, frames_b):
    return [max(max(abs(x - y) for x, y in zip(p, q)) for p, q in zip(fa, fb))
            for fa, fb in zip(frames_a, frames_b)]


def test_the_sleeve_baked_on_the_alembic_body_matches_the_usd_bake(drape, exported, tmp_path):
    abc, usd = exported
    start_a, _, frames_a = bake(drape, abc, tmp_path / "abc.pc2", "--up", "z")
    start_u, _, frames_u = bake(drape, usd, tmp_path / "usd.pc2")
    assert start_a == start_u == FIRST
    assert len(frames_a) == len(frames_u) == LAST - FIRST + 1
    sleeve = bpy.data.objects["Sleeve"].data
    assert len(frames_a[0]) == len(sleeve.vertices)
    # The first sample is the sleeve as modelled, in Blender's point order, in both.
    scale = max(abs(c) for v in sleeve.vertices for c in v.co)
    for k, (a, u, v) in enumerate(zip(frames_a[0], frames_u[0], sleeve.vertices)):
        for x, y, z in zip(a, u, v.co):
            assert abs(x - z) <= 2 * F32_EPS * scale and abs(y - z) <= 2 * F32_EPS * scale, k
    worst = worst_per_frame(frames_a, frames_u)
    # The solver's own sensitivity, for scale: the same USD scene exported Y-up (the
    # .abc scene's axes) against the Z-up export. Once the sleeve slides onto the bending
    # tube, rounding differences of the rotated coordinates grow through the contacts.
    yup = tmp_path / "yup.usda"
    bpy.ops.wm.usd_export(filepath=str(yup), export_animation=True, export_armatures=False,
                          export_custom_properties=True, convert_orientation=True,
                          export_global_forward_selection="NEGATIVE_Z",
                          export_global_up_selection="Y")
    # (Blender puts the axis change in the root transform: the cache, object-local, is not
    # converted.)
    _, _, frames_y = bake(drape, yup, tmp_path / "yup.pc2")
    axes = worst_per_frame(frames_y, frames_u)
    print(f"\nsleeve on the .abc body vs on the .usda body: max |d| per frame "
          f"{', '.join(f'{w:.1e}' for w in worst)} m; over frames {max(worst):.3e} m "
          f"(USD exported Y-up vs Z-up: {max(axes):.3e} m)")
    # A body read wrongly (missing, misplaced, inside out) lets the sleeve fall off or
    # through it: 1.2 m of free fall over these frames, far more than its radius.
    assert max(worst) < SLEEVE_R, worst


def test_an_hdf5_archive_is_refused_with_the_fix(drape, tmp_path):
    path = tmp_path / "old.abc"
    path.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(64))
    r = drape("inspect", path, code=2)
    assert "HDF5" in r.stderr and "Ogawa" in r.stderr and "old.abc" in r.stderr, r.stderr


@pytest.mark.parametrize("damage", ["truncated", "offset past the end"])
def test_a_damaged_blender_archive_is_exit_2_never_a_crash(drape, exported, tmp_path, damage):
    data = bytearray(exported[0].read_bytes())
    if damage == "truncated":
        data = data[: len(data) * 2 // 3]
    else:
        data[8:16] = (len(data) + 8).to_bytes(8, "little")  # the root group's offset
    path = tmp_path / "damaged.abc"
    path.write_bytes(bytes(data))
    r = drape("inspect", path, code=2)
    assert "damaged.abc" in r.stderr and "export" in r.stderr, r.stderr
    assert "panicked" not in r.stderr


def test_the_frame_rate_comes_from_the_archive(drape, tmp_path):
    """A scene at 30 fps: the archive's time sampling gives frames FIRST..LAST again."""
    abc_scene.build_scene(fps=30)
    path = tmp_path / "thirty.abc"
    abc_scene.export_alembic(path)
    body = inspect(drape, path)["bodies"][0]
    assert body["frames"] == [FIRST, LAST], body
    assert math.isclose(bpy.context.scene.render.fps, 30)
