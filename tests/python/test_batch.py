"""`drape batch` (issue 54): a manifest of fixture shots baked locally two at a time, run
by Open Job Description's own runner (`openjd run`) and serialised by OpenCue's pyoutline;
every cache must be byte-identical to a solo `drape simulate` of the same shot.
"""
import json
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import FIXTURES

# (name, scene, frames, options): small scenes, a few frames each.
SHOTS = [
    ("sheet_cotton", "sheet_small.gltf", "1..10", []),
    ("sheet_silk", "sheet_small.gltf", "1..7", ["--material", "silk"]),
    ("seam", "sheet_seam.gltf", "1..5", ["--integrator", "bdf2"]),
    ("two_corner", "sheet_2corner.gltf", "1..4", ["--material", "denim"]),
]


def write_manifest(folder, shots=SHOTS, out="cache/{name}.pc2"):
    """Writes folder/shots.json with scenes relative to it; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "shots": [
            {
                "name": name,
                "scene": os.path.relpath(FIXTURES / scene, folder),
                "out": out.format(name=name),
                "frames": frames,
                "options": options,
            }
            for name, scene, frames, options in shots
        ]
    }
    path = folder / "shots.json"
    path.write_text(json.dumps(manifest, indent=1))
    return path


def solo_bakes(drape, folder, shots=SHOTS):
    """Each shot baked alone by `drape simulate` into folder; returns {name: cache}."""
    folder.mkdir(parents=True, exist_ok=True)
    caches = {}
    for name, scene, frames, options in shots:
        caches[name] = folder / f"{name}.pc2"
        drape("simulate", FIXTURES / scene, "-o", caches[name], "--frames", frames,
              "--progress", "none", *options)
    return caches


def assert_identical(caches, solo):
    for name, cache in caches.items():
        assert cache.read_bytes() == solo[name].read_bytes(), f"{name}: {cache} differs"


@pytest.fixture(scope="module")
def solo(drape, tmp_path_factory):
    return solo_bakes(drape, tmp_path_factory.mktemp("solo"))


def test_a_local_batch_of_two_jobs_bakes_what_solo_bakes_do(drape, tmp_path, solo):
    manifest = write_manifest(tmp_path / "batch")
    r = drape("batch", manifest, "--jobs", "2")
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[1:]}
    assert sorted(rows) == sorted(name for name, *_ in SHOTS)
    summary = json.loads((tmp_path / "batch" / "shots.summary.json").read_text())
    assert summary["exit_code"] == 0 and summary["jobs"] == 2
    for shot in summary["shots"]:
        assert shot["status"] == "ok" and shot["exit_code"] == 0, shot
        assert 0 < shot["max_strain"] < 1
        assert rows[shot["name"]][1:4] == ["ok", "0", str(shot["frames"])]
    frames = {s["name"]: s["frames"] for s in summary["shots"]}
    for name, _, span, _ in SHOTS:
        first, last = map(int, span.split(".."))
        assert frames[name] == last - first + 1
    caches = {name: tmp_path / "batch" / "cache" / f"{name}.pc2" for name, *_ in SHOTS}
    assert_identical(caches, solo)

    # Run again: every cache exists, so every shot is done and nothing is baked.
    stamps = {n: c.stat().st_mtime_ns for n, c in caches.items()}
    again = drape("batch", manifest, "--jobs", "2")
    assert all(line.split()[1] == "done" for line in again.stdout.splitlines()[1:])
    assert stamps == {n: c.stat().st_mtime_ns for n, c in caches.items()}


def test_a_failing_shot_fails_alone_and_sets_the_batch_exit_code(drape, tmp_path):
    shots = [SHOTS[0], ("missing", "no_such_scene.gltf", "1..3", [])]
    manifest = write_manifest(tmp_path, shots)
    r = drape("batch", manifest, "--jobs", "2", "--summary", tmp_path / "s.json", code=2)
    assert "missing (exit 2)" in r.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    status = {s["name"]: (s["status"], s["exit_code"]) for s in summary["shots"]}
    assert status == {"sheet_cotton": ("ok", 0), "missing": ("failed", 2)}
    assert "no_such_scene.gltf" in summary["shots"][1]["error"]
    assert (tmp_path / "cache" / "sheet_cotton.pc2").exists()


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m["shots"][0].update(frame="1..2"), "unknown field `frame`"),
        (lambda m: m["shots"].append(dict(m["shots"][0])), "both named"),
        (lambda m: m["shots"][1].update(out=m["shots"][0]["out"]), "both write"),
    ],
)
def test_a_bad_manifest_is_refused_before_any_bake(drape, tmp_path, change, message):
    path = write_manifest(tmp_path)
    m = json.loads(path.read_text())
    change(m)
    path.write_text(json.dumps(m))
    r = drape("batch", path, code=2)
    assert message in r.stderr and str(path) in r.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_a_stopped_batch_stops_its_shots_and_keeps_their_partial_caches(drape, tmp_path):
    shots = [("long", "sheet_2corner.gltf", "1..400", []), ("next", "sheet_small.gltf", "1..5", [])]
    manifest = write_manifest(tmp_path, shots)
    batch = subprocess.Popen(
        [str(drape.binary), "batch", str(manifest), "--jobs", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    partial = tmp_path / "cache" / "long.pc2.partial"
    for _ in range(1200):
        if partial.exists() and partial.stat().st_size > 32:
            break
        time.sleep(0.05)
    else:
        batch.kill()
        pytest.fail("the long shot never wrote a frame")
    batch.send_signal(signal.SIGINT)
    out, err = batch.communicate(timeout=60)
    assert batch.returncode == 130, err
    summary = json.loads((tmp_path / "shots.summary.json").read_text())
    status = {s["name"]: (s["status"], s["exit_code"]) for s in summary["shots"]}
    assert status == {"long": ("interrupted", 130), "next": ("not run", None)}
    assert summary["stopped"] is True
    assert partial.stat().st_size > 32 and not (tmp_path / "cache" / "long.pc2").exists()


def tool(name):
    """A console script of the venv running the tests, else one on PATH."""
    here = pathlib.Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        pytest.fail(f"{name} is missing: run scripts/python-deps.sh")
    return found


def test_openjd_checks_and_runs_the_emitted_template(drape, tmp_path, solo):
    manifest = write_manifest(tmp_path / "batch")
    r = drape("batch", manifest, "--emit", "openjd", tmp_path / "farm")
    template = pathlib.Path(r.stdout.strip())
    assert template == tmp_path / "farm" / "shots.openjd.json"
    spec = json.loads(template.read_text())
    assert [s["name"] for s in spec["steps"]] == ["Bake"]
    check = subprocess.run([tool("openjd"), "check", template], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    run = subprocess.run(
        [tool("openjd"), "run", template, "--step", "Bake"],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    caches = {name: tmp_path / "batch" / "cache" / f"{name}.pc2" for name, *_ in SHOTS}
    assert_identical(caches, solo)


def test_the_opencue_script_serialises_one_layer_per_shot(drape, tmp_path):
    manifest = write_manifest(tmp_path / "batch")
    r = drape("batch", manifest, "--emit", "opencue", tmp_path / "farm")
    script = pathlib.Path(r.stdout.strip())
    spec = subprocess.run(
        [sys.executable, script, "--serialize", "--show", "night", "--user", "artist"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)},
    )
    assert spec.returncode == 0, spec.stderr
    root = ET.fromstring(spec.stdout.strip())
    assert root.findtext("show") == "night" and root.findtext("user") == "artist"
    assert root.find("job").get("name").endswith("drape-shots")
    layers = root.findall("job/layers/layer")
    assert [l.get("name") for l in layers] == [name for name, *_ in SHOTS]
    for layer, (name, scene, frames, options) in zip(layers, SHOTS):
        assert layer.findtext("range") == "1" and layer.findtext("chunk") == "1"
        words = shlex.split(layer.findtext("cmd"))
        assert words[:3] == [str(drape.binary.resolve()), "simulate", str(FIXTURES / scene)]
        assert words[3:7] == ["-o", str(tmp_path / "batch" / "cache" / f"{name}.pc2"),
                              "--frames", frames]
        assert words[7:7 + len(options)] == options
        assert words[-1] in ("--resume", "--force", "plain")
