"""Alembic caches read by Blender's own Alembic importer (`bpy.ops.wm.alembic_import`,
the Alembic library Blender ships): the points at every frame equal the PC2 of the same
bake, the garment's UVs and topology, the frame range; and the partial archive of a bake
killed with SIGKILL imports with its finished frames (issue 53)."""
import json
import shutil
import signal
import subprocess

import bpy

from readers import read_gltf_mesh, read_pc2

# f32 values go through unchanged (Blender's Y-up → Z-up turn only permutes and negates
# them): anything above rounding-free equality is a wrong point.
TOL = 1e-6


def import_abc(path):
    """Imports `path` into an empty scene; returns (mesh object, its cache file)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    result = bpy.ops.wm.alembic_import(filepath=str(path), set_frame_range=True)
    assert result == {"FINISHED"}, f"Blender did not import {path}"
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    assert len(meshes) == 1, [o.name for o in bpy.data.objects]
    assert len(bpy.data.cache_files) == 1
    return meshes[0], bpy.data.cache_files[0]


def evaluated(ob, frame):
    """(vertex positions, polygons' vertices, loop UVs) Blender evaluates at `frame`."""
    bpy.context.scene.frame_set(frame)
    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    m = ev.to_mesh()
    points = [tuple(v.co) for v in m.vertices]
    polygons = [tuple(p.vertices) for p in m.polygons]
    uvs = [tuple(d.uv) for d in m.uv_layers.active.data] if m.uv_layers else []
    ev.to_mesh_clear()
    return points, polygons, uvs


def blender_axes(p):
    """Where Blender puts Y-up cache point p: its Alembic importer turns Y up into Z up."""
    return (p[0], -p[2], p[1])


def max_diff(a, b):
    assert len(a) == len(b), (len(a), len(b))
    return max(abs(x - y) for p, q in zip(a, b) for x, y in zip(p, q))


def test_blender_reads_the_pc2_points_uvs_topology_and_frame_range(drape, fixture, tmp_path):
    scene = fixture("skirt_on_character.gltf")
    first, last = 1, 12
    for ext in ("abc", "pc2"):
        drape("simulate", scene, "--frames", f"{first}..{last}", "-o", tmp_path / f"s.{ext}",
              "--progress", "none")
    _, _, pc2 = read_pc2(tmp_path / "s.pc2")
    assert max_diff(pc2[0], pc2[-1]) > 1e-3, "the skirt moves"
    ob, cache = import_abc(tmp_path / "s.abc")
    assert ob.name == "Skirt"
    assert [p.path for p in cache.object_paths] == ["/Skirt/SkirtShape"]
    assert ob.modifiers[0].type == "MESH_SEQUENCE_CACHE"
    scene_ = bpy.context.scene
    assert (scene_.frame_start, scene_.frame_end) == (first, last)
    src = read_gltf_mesh(scene, mesh=1)
    corners = src["indices"]
    worst = 0.0
    for f in range(first, last + 1):
        points, polygons, uvs = evaluated(ob, f)
        assert len(points) == len(pc2[0]) == len(src["positions"])
        d = max_diff(points, [blender_axes(p) for p in pc2[f - first]])
        assert d <= TOL, f"frame {f}: Blender's points differ from the PC2 by {d}"
        worst = max(worst, d)
    # Source winding back after Blender's importer reverses Alembic's clockwise order.
    assert polygons == [tuple(corners[k:k + 3]) for k in range(0, len(corners), 3)]
    uv_diff = max_diff(uvs, [src["uvs"][v] for v in corners])
    assert uv_diff <= TOL, f"UVs differ by {uv_diff}"
    # Past the last sample Blender holds it.
    assert max_diff(evaluated(ob, last + 3)[0], [blender_axes(p) for p in pc2[-1]]) <= TOL
    print(f"\nbpy {bpy.app.version_string}: {len(points)} vertices, {last - first + 1} frames, "
          f"max |Δ| against PC2 {worst:.3g} m, UV max |Δ| {uv_diff:.3g}")


def test_z_up_caches_are_written_y_up(drape, fixture, tmp_path):
    scene = fixture("sheet_small.gltf")
    for up in ("y", "z"):
        drape("simulate", scene, "--frames", "1..3", "-o", tmp_path / f"{up}.abc", "--up", up,
              "--progress", "none")
    assert (tmp_path / "y.abc").read_bytes() == (tmp_path / "z.abc").read_bytes()


def test_a_bake_killed_mid_frame_leaves_an_archive_blender_imports(drape, fixture, tmp_path):
    scene = fixture("sheet_2corner.gltf")
    out = tmp_path / "sheet.abc"
    proc = subprocess.Popen(
        [str(drape.binary), "simulate", str(scene), "--frames", "1..2000", "-o", str(out),
         "--progress", "json"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    done = 0
    try:
        for line in proc.stderr:
            event = json.loads(line)
            if event["event"] == "frame":
                done = event["done"]
                if done >= 4:
                    proc.send_signal(signal.SIGKILL)
                    break
    finally:
        proc.kill()
        proc.wait(timeout=60)
    assert done >= 4 and not out.exists()
    partial = tmp_path / "partial.abc"
    shutil.copy(tmp_path / "sheet.abc.partial", partial)
    ob, _ = import_abc(partial)
    k = bpy.context.scene.frame_end
    assert bpy.context.scene.frame_start == 1
    assert done <= k < 2000, f"progress reported {done} frames, the archive holds {k}"
    drape("simulate", scene, "--frames", f"1..{k}", "-o", tmp_path / "ref.pc2",
          "--progress", "none")
    _, _, pc2 = read_pc2(tmp_path / "ref.pc2")
    for f in range(1, k + 1):
        d = max_diff(evaluated(ob, f)[0], [blender_axes(p) for p in pc2[f - 1]])
        assert d <= TOL, f"partial frame {f}: Blender differs from the PC2 by {d}"


def test_a_full_disk_leaves_the_partial_archive_of_the_finished_frames(drape, fixture, tmp_path):
    """`ulimit -f` (with SIGXFSZ ignored) makes a write fail mid-bake as a full disk does:
    exit 3, and the partial archive, cut back to its last finished frame, imports."""
    out = tmp_path / "full.abc"
    script = (f"trap '' XFSZ; ulimit -f 100; exec '{drape.binary}' simulate "
              f"'{fixture('sheet_small.gltf')}' --frames 1..60 -o '{out}' --progress none")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr
    assert "keeps frames 1.." in r.stderr
    partial = tmp_path / "copy.abc"
    shutil.copy(tmp_path / "full.abc.partial", partial)
    assert partial.stat().st_size <= 100 * 1024
    import_abc(partial)
    k = bpy.context.scene.frame_end
    assert 1 <= k < 60
    assert f"keeps frames 1..{k}" in r.stderr
