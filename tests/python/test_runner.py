"""The plain-Python runner shared by the Blender extension and the Houdini shelf tool
(plugin-scripts/blender/drape/runner.py, loaded by plugin-scripts/houdini/python/
drape_houdini/runner.py): command lines, progress parsing, error surfacing and cancel, with
fake binaries and the real one; no Blender or Houdini needed (issue 7, "[6 of 7]")."""
import importlib.util
import json
import os
import pathlib
import stat
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLENDER_RUNNER = ROOT / "plugin-scripts" / "blender" / "drape" / "runner.py"
HOUDINI = ROOT / "plugin-scripts" / "houdini"


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


runner = load("drape_runner_under_test", BLENDER_RUNNER)


@pytest.fixture(scope="module")
def hrunner():
    sys.path.insert(0, str(HOUDINI / "python"))
    try:
        from drape_houdini import runner as module
    finally:
        sys.path.remove(str(HOUDINI / "python"))
    return module


def fake_binary(tmp_path, body, name="drape", prelude=""):
    """An executable Python script standing in for drape."""
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport json, signal, sys, time\n{prelude}"
                    + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# ---- command lines -------------------------------------------------------------------

def test_simulate_command_line():
    cmd = runner.simulate_command(
        "/opt/drape", "/tmp/scene.usdc", "/tmp/Cloth.pc2", garments=["Cloth"], bodies=["Body"],
        frames=(1, 24), fps=24.0, material="silk", max_step=0.005, rest="shape",
    )
    assert cmd == [
        "/opt/drape", "simulate", "/tmp/scene.usdc", "--garment", "Cloth", "--body", "Body",
        "-o", "/tmp/Cloth.pc2", "--frames", "1..24", "--fps", "24", "--material", "silk",
        "--max-step", "0.005", "--rest", "shape", "--force", "--progress", "json",
    ]
    with pytest.raises(runner.DrapeError, match="rest 'flat'"):
        runner.simulate_command("drape", "s.usda", "o.pc2", rest="flat")
    # Defaults: the file's range and fps, drape's material; always JSON progress.
    assert runner.simulate_command("drape", "s.usda", "o.pc2", force=False) == [
        "drape", "simulate", "s.usda", "-o", "o.pc2", "--progress", "json"]
    ntsc = runner.simulate_command("d", "s", "o", fps=24000 / 1001)
    assert float(ntsc[ntsc.index("--fps") + 1]) == pytest.approx(24000 / 1001, rel=1e-9)


def test_control_command_line_and_bad_range():
    assert runner.control_command("drape", "g.glb", "keys.mdd", "g.pc2", frames=(5, 9)) == [
        "drape", "control", "g.glb", "--keyframes", "keys.mdd", "-o", "g.pc2",
        "--frames", "5..9", "--force", "--progress", "json"]
    with pytest.raises(runner.DrapeError, match="empty"):
        runner.simulate_command("drape", "s", "o", frames=(10, 3))


def test_find_binary_preference_then_packaged_then_path(tmp_path, monkeypatch):
    exe = fake_binary(tmp_path, "sys.exit(0)\n")
    assert runner.find_binary(str(exe)) == str(exe)
    with pytest.raises(runner.DrapeError, match="not an executable"):
        runner.find_binary(str(tmp_path / "missing"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert runner.find_binary("") == str(exe)
    beside = tmp_path / "ext"
    (beside / "bin").mkdir(parents=True)
    exe2 = fake_binary(beside / "bin", "sys.exit(0)\n")
    # the packaged binary comes before PATH; the preference before both
    assert runner.find_binary("", str(beside)) == str(exe2)
    assert runner.find_binary(str(exe), str(beside)) == str(exe)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(runner.DrapeError, match="not found"):
        runner.find_binary("", str(tmp_path / "empty"))


def test_a_packaged_binary_extracted_without_its_executable_bit_gets_it_back(tmp_path):
    (tmp_path / "bin").mkdir()
    exe = fake_binary(tmp_path / "bin", "sys.exit(0)\n")
    exe.chmod(0o644)
    assert runner.packaged_binary(str(tmp_path)) == str(exe)
    assert exe.stat().st_mode & 0o111 == 0o111


# ---- progress parsing ----------------------------------------------------------------

SPEC_LINES = """\
{"event":"start","command":"simulate","frames":[1,120],"garments":[{"name":"Shirt","vertices":5210}]}
{"event":"frame","frame":12,"done":12,"total":120,"elapsed_s":3.1,"steps":3,"cg_iterations":142}
{"event":"iteration","iteration":4,"of":40,"objective":0.0123,"keyframe_error":0.004}
{"event":"warning","message":"step rejected"}
not json at all
{"event":"done","outputs":["cache/shirt.pc2"],"elapsed_s":41.7}
"""


def test_progress_parses_the_spec_lines():
    events = [runner.parse_line(line) for line in SPEC_LINES.splitlines()]
    assert [e["event"] for e in events] == [
        "start", "frame", "iteration", "warning", "log", "done"]
    assert runner.parse_line("   \n") is None
    assert runner.parse_line('{"no_event": 1}') == {"event": "log", "message": '{"no_event": 1}'}
    p = runner.Progress()
    p.update(events[0])
    assert p.status == "drape simulate: frames 1..120"
    p.update(events[1])
    assert p.fraction == pytest.approx(0.1) and p.frame == 12
    assert "frame 12 (12/120)" in p.status
    p.update(events[2])
    assert p.fraction == pytest.approx(0.1) and p.objectives == [(4, 0.0123)]
    assert "objective 0.0123" in p.status
    assert p.update(events[3]) is False and p.warnings == ["step rejected"]
    p.update(events[5])
    assert p.fraction == 1.0 and p.outputs == ["cache/shirt.pc2"]


def test_job_reads_progress_lines_from_a_fake_binary(tmp_path):
    exe = fake_binary(tmp_path, prelude=f"LINES = {SPEC_LINES!r}\n", body=r'''
        for line in LINES.splitlines():
            sys.stderr.write(line + "\n"); sys.stderr.flush()
        print("stdout is not progress")
    ''')
    job = runner.Job([exe]).start()
    seen = []
    assert job.run(on_event=seen.append) == 0
    assert [e["event"] for e in seen] == ["start", "frame", "iteration", "warning", "log", "done"]
    assert job.error() is None and job.progress.fraction == 1.0
    assert job.log == ["not json at all"]


# ---- error surfacing -----------------------------------------------------------------

def test_error_event_and_exit_code_2_surface_the_message(tmp_path):
    exe = fake_binary(tmp_path, r'''
        sys.stderr.write('{"event":"start","command":"simulate","frames":[1,4],"garments":[]}\n')
        sys.stderr.write('{"event":"error","code":2,"message":"Cloth: no UVs; unwrap it"}\n')
        sys.exit(2)
    ''')
    job = runner.Job([exe])
    assert job.run() == 2
    assert job.error() == "Cloth: no UVs; unwrap it"
    assert runner.result_path(str(tmp_path / "none.pc2"), 2) is None


def test_plain_stderr_and_exit_code_meaning_without_an_error_event(tmp_path):
    exe = fake_binary(tmp_path, r'''
        sys.stderr.write("thread main panicked at something\n")
        sys.exit(1)
    ''')
    job = runner.Job([exe])
    assert job.run() == 1
    msg = job.error()
    assert "code 1" in msg and "internal error" in msg and "panicked" in msg


def test_a_missing_binary_is_a_drape_error(tmp_path):
    with pytest.raises(runner.DrapeError, match="cannot run"):
        runner.Job([tmp_path / "no-such-drape"]).start()


# ---- cancel --------------------------------------------------------------------------

def test_cancel_of_a_fake_long_bake_gives_130_and_its_partial(tmp_path):
    """The fake honours the protocol: SIGTERM -> error event 130, partial kept."""
    out = tmp_path / "c.pc2"
    exe = fake_binary(tmp_path, r'''
        out = sys.argv[-1]
        stop = []
        signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
        with open(out + ".partial", "wb") as f:
            f.write(b"POINTCACHE2\0" + bytes(20))
        for frame in range(1, 100000):
            if stop:
                sys.stderr.write(json.dumps({"event": "error", "code": 130,
                                             "message": "interrupted"}) + "\n")
                sys.exit(130)
            with open(out + ".partial", "ab") as f:
                f.write(bytes(12))
            sys.stderr.write(json.dumps({"event": "frame", "frame": frame, "done": frame,
                                         "total": 100000, "elapsed_s": 0.0}) + "\n")
            sys.stderr.flush()
            time.sleep(0.01)
    ''')
    job = runner.Job([exe, out]).start()
    frames = []

    def on_event(e):
        if e["event"] == "frame":
            frames.append(e["frame"])

    code = job.run(on_event=on_event, tick=0.02, should_cancel=lambda: len(frames) >= 3)
    assert code == runner.EXIT_INTERRUPTED and job.cancelled
    assert job.error() == "interrupted"
    assert 3 <= len(frames) < 1000
    assert runner.result_path(str(out), code) == str(out) + ".partial"


def test_cancel_of_a_process_that_ignores_the_protocol_is_still_reported(tmp_path):
    exe = fake_binary(tmp_path, "time.sleep(60)\n")
    job = runner.Job([exe]).start()
    job.cancel()
    code = job.wait(timeout=10)
    assert code == -15
    assert "signal 15" in job.error()


def test_cancel_of_the_real_binary_keeps_the_partial_cache(drape, fixture, tmp_path):
    out = tmp_path / "sheet.pc2"
    cmd = runner.simulate_command(drape.binary, fixture("sheet_2corner.gltf"), out,
                                  frames=(1, 2000))
    job = runner.Job(cmd)
    done = []

    def on_event(e):
        if e["event"] == "frame":
            done.append(e["done"])

    code = job.run(on_event=on_event, tick=0.02, should_cancel=lambda: len(done) >= 2)
    assert code == 130, job.error()
    assert job.error_event["code"] == 130
    partial = runner.result_path(str(out), code)
    assert partial == str(out) + ".partial" and not out.exists()
    data = pathlib.Path(partial).read_bytes()
    points, frames = int.from_bytes(data[16:20], "little"), int.from_bytes(data[28:32], "little")
    assert frames == done[-1] >= 2
    assert len(data) == 32 + 12 * points * frames


def test_real_binary_success_reports_every_frame_and_the_output(drape, fixture, tmp_path):
    out = tmp_path / "small.pc2"
    job = runner.Job(runner.simulate_command(drape.binary, fixture("sheet_small.gltf"), out,
                                             frames=(3, 7), material="denim"))
    events = []
    assert job.run(on_event=events.append) == 0, job.error()
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert [e["frame"] for e in events if e["event"] == "frame"][-1] == 7
    assert job.progress.fraction == 1.0
    assert runner.result_path(str(out), 0) == str(out)


# ---- Houdini -------------------------------------------------------------------------

def test_houdini_runner_is_the_shared_runner_plus_geo_helpers(hrunner, tmp_path):
    assert pathlib.Path(hrunner.SHARED_PATH).resolve() == BLENDER_RUNNER.resolve()
    assert hrunner.simulate_command("d", "s", "o") == runner.simulate_command("d", "s", "o")
    assert hrunner.frame_file("body.$F4.geo", 7) == "body.0007.geo"
    assert hrunner.frame_file("body.$F.geo", 12) == "body.12.geo"
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("Cloth.0001.geo.partial", "Cloth.0002.geo.partial", "Other.0001.geo.partial"):
        (cache / name).write_text("{}")
    assert hrunner.promote_partial_frames(str(cache / "Cloth.$F4.geo")) == [1, 2]
    assert sorted(p.name for p in cache.iterdir()) == [
        "Cloth.0001.geo", "Cloth.0002.geo", "Other.0001.geo.partial"]


def test_houdini_scene_file_of_geo_files_bakes_with_the_real_binary(
        hrunner, drape, fixture, tmp_path):
    """What the shelf tool does after saveToFile: garment .geo + body $F4 sequence in a scene
    file, drape writes a .geo sequence for the File SOP."""
    files = hrunner.houdini_job_files(str(tmp_path), "sheet_seam", ["body"])
    os.makedirs(os.path.dirname(files["out"]))
    garment = pathlib.Path(files["garment"])
    garment.write_bytes(fixture("houdini/sheet_seam.geo").read_bytes())
    for f in range(1, 5):
        src = fixture(f"houdini/body.{f:04d}.geo")
        pathlib.Path(hrunner.frame_file(files["bodies"][0], f)).write_bytes(src.read_bytes())
    hrunner.scene_file(files["scene"], {"file": files["garment"], "name": files["name"],
                       "out": files["out"]}, [{"file": files["bodies"][0]}],
                       (1, 4), 24)
    doc = json.loads(pathlib.Path(files["scene"]).read_text())
    assert doc["garments"][0]["file"] == "sheet_seam.geo"
    assert doc["bodies"][0]["file"] == "body.$F4.geo"
    job = hrunner.Job(hrunner.simulate_command(drape.binary, files["scene"], files["out"]))
    assert job.run() == 0, job.error()
    written = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert written == [f"sheet_seam.{f:04d}.geo" for f in range(1, 5)]


def test_houdini_package_shelf_and_module_layout():
    package = json.loads((HOUDINI / "drape.json").read_text())
    env = {k: v for entry in package["env"] for k, v in entry.items()}
    assert "$DRAPE_HOUDINI/python" in json.dumps(env["PYTHONPATH"])
    assert any("target/release" in p for p in env["PATH"]["value"])
    shelf = ET.parse(HOUDINI / "toolbar" / "drape.shelf").getroot()
    script = shelf.find("tool/script").text.strip().splitlines()
    assert script == ["from drape_houdini import tool", "tool.simulate(kwargs)"]
    module = HOUDINI / "python" / "drape_houdini"
    assert "import hou" in (module / "tool.py").read_text()
    for plain in (module / "runner.py", BLENDER_RUNNER):
        text = plain.read_text()
        assert "import hou" not in text and "import bpy" not in text, plain


def test_houdini_alembic_result_is_one_archive_its_partial_promoted(hrunner, drape, fixture,
                                                                    tmp_path):
    """Cache format Alembic (issue 53): the result is `<garment>.abc` for the Alembic SOP;
    after a stopped bake its `.partial` archive takes that name."""
    files = hrunner.houdini_job_files(str(tmp_path), "sheet_seam", [], "abc")
    assert files["out"] == str(tmp_path / "cache" / "sheet_seam.abc")
    os.makedirs(os.path.dirname(files["out"]))
    pathlib.Path(files["garment"]).write_bytes(fixture("houdini/sheet_seam.geo").read_bytes())
    hrunner.scene_file(files["scene"], {"file": files["garment"], "name": files["name"],
                       "out": files["out"]}, [], (1, 3), 24)
    job = hrunner.Job(hrunner.simulate_command(drape.binary, files["scene"], files["out"]))
    assert job.run() == 0, job.error()
    archive = pathlib.Path(files["out"])
    assert archive.read_bytes()[:6] == b"Ogawa\xff"
    partial = pathlib.Path(files["out"] + ".partial")
    archive.rename(partial)
    assert hrunner.promote_partial_frames(files["out"]) == []
    assert archive.is_file() and not partial.exists()
