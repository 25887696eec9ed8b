"""PC2 and MDD caches read back by Blender's own Mesh Cache modifier (bpy, Blender as a
Python module), and an interrupted bake's partial cache loading with exactly the frames
that were finished (issue 5, "[4 of 7] Outputs")."""
import json
import signal
import subprocess

import bpy
import pytest

from readers import read_mdd, read_pc2

TOL = 1e-5


def blender_positions(cache, cache_format, points, frame_start, frames):
    """Positions Blender evaluates at each scene frame for a mesh of `points` vertices
    with a Mesh Cache modifier reading `cache` (as the drape extension sets it up)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    mesh = bpy.data.meshes.new("Garment")
    mesh.from_pydata([(0.0, 0.0, 0.0)] * points, [], [])
    ob = bpy.data.objects.new("Garment", mesh)
    bpy.context.scene.collection.objects.link(ob)
    mod = ob.modifiers.new("drape", "MESH_CACHE")
    mod.cache_format = cache_format
    mod.filepath = str(cache)
    mod.frame_start = frame_start
    out = {}
    for f in frames:
        bpy.context.scene.frame_set(f)
        evaluated = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
        m = evaluated.to_mesh()
        out[f] = [tuple(v.co) for v in m.vertices]
        evaluated.to_mesh_clear()
    return out


def max_diff(a, b):
    assert len(a) == len(b)
    return max(abs(x - y) for p, q in zip(a, b) for x, y in zip(p, q))


@pytest.mark.parametrize("fmt", ["PC2", "MDD"])
def test_blender_mesh_cache_gives_the_written_positions_at_every_frame(
    drape, fixture, tmp_path, fmt
):
    out = tmp_path / f"sheet.{fmt.lower()}"
    first, last = 5, 16
    drape("simulate", fixture("sheet_small.gltf"), "--frames", f"{first}..{last}", "-o", out,
          "--progress", "none")
    if fmt == "PC2":
        start, sampling, frames = read_pc2(out)
        assert (start, sampling) == (first, 1.0)
    else:
        times, frames = read_mdd(out)
        assert times == pytest.approx([f / 24.0 for f in range(first, last + 1)], rel=1e-6)
    assert len(frames) == last - first + 1
    # The cache moves (the sheet falls), so matching every frame means something.
    assert max_diff(frames[0], frames[-1]) > 1e-3
    points = len(frames[0])
    got = blender_positions(out, fmt, points, first, range(first, last + 1))
    for f in range(first, last + 1):
        d = max_diff(got[f], frames[f - first])
        assert d < TOL, f"{fmt} frame {f}: Blender differs from the file by {d}"


def test_pc2_and_mdd_of_one_bake_hold_the_same_positions(drape, fixture, tmp_path):
    for ext in ("pc2", "mdd"):
        drape("simulate", fixture("sheet_small.gltf"), "--frames", "1..6",
              "-o", tmp_path / f"s.{ext}", "--progress", "none")
    assert read_pc2(tmp_path / "s.pc2")[2] == read_mdd(tmp_path / "s.mdd")[1]


def bake_and_interrupt(drape, scene, out, after_frames):
    """Starts a long bake with JSON progress, sends SIGINT once `after_frames` frames are
    reported, and returns (exit code, last frame event, all events)."""
    proc = subprocess.Popen(
        [str(drape.binary), "simulate", str(scene), "--frames", "1..2000", "-o", str(out),
         "--force", "--progress", "json"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    events, last_frame, sent = [], None, False
    try:
        for line in proc.stderr:
            event = json.loads(line)
            events.append(event)
            if event["event"] == "frame":
                last_frame = event
                if event["done"] >= after_frames and not sent:
                    proc.send_signal(signal.SIGINT)
                    sent = True
        code = proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert sent, f"the bake ended before {after_frames} frames: {events[-3:]}"
    return code, last_frame, events


@pytest.mark.parametrize("fmt", ["PC2", "MDD"])
def test_sigint_leaves_a_partial_cache_blender_loads_with_exactly_the_finished_frames(
    drape, fixture, tmp_path, fmt
):
    out = tmp_path / f"sheet.{fmt.lower()}"
    out.write_bytes(b"an earlier bake")
    code, last_frame, events = bake_and_interrupt(drape, fixture("sheet_2corner.gltf"), out, 3)
    assert code == 130, events[-3:]
    assert events[-1]["event"] == "error" and events[-1]["code"] == 130
    assert any(e["event"] == "warning" and ".partial" in e["message"] for e in events)
    assert out.read_bytes() == b"an earlier bake", "an existing cache is untouched"
    partial = tmp_path / f"sheet.{fmt.lower()}.partial"
    k = last_frame["done"]
    assert k >= 3
    if fmt == "PC2":
        frames = read_pc2(partial)[2]
    else:
        times, frames = read_mdd(partial)
        assert len(times) == k
    assert len(frames) == k, f"partial holds {len(frames)} frames, progress said {k}"
    points = len(frames[0])
    assert points == 2500
    got = blender_positions(partial, fmt, points, 1, range(1, k + 2))
    for f in range(1, k + 1):
        d = max_diff(got[f], frames[f - 1])
        assert d < TOL, f"partial frame {f}: Blender differs by {d}"
    # Past the finished frames Blender holds the last one: there is no further frame.
    assert max_diff(got[k + 1], frames[k - 1]) < TOL
