"""The materials picture of the README (scripts/render_materials.py, issue 56 "[7 of 9]
Fabrics that behave like the real ones"): run small, it writes a PNG of the requested size
with one panel per material, each showing the garment, and the garment's pixels change with
the material and only with it (the same material twice gives the same panel).

One run of the script at 400x120 (four bakes of the skirt fixture, four Workbench renders
of 100x120). Skipped when bpy is not installed (scripts/python-deps.sh installs it).
"""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "render_materials.py"
MATERIALS = ["silk", "cotton", "denim", "silk"]
WIDTH, HEIGHT = 400, 120


def run_script(drape, *args):
    return subprocess.run([sys.executable, str(SCRIPT), "--drape", str(drape.binary), *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=300)


def read_png(path):
    """(H, W, 3) floats in 0..1, top row first, as Blender reads the file."""
    img = bpy.data.images.load(str(path))
    w, h = img.size
    px = np.empty(w * h * 4, dtype=np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    return px.reshape(h, w, 4)[::-1, :, :3]


def garment_mask(panel):
    """The garment's pixels: the script paints it blue, the body, backdrop and label grey."""
    return panel[:, :, 2] - panel[:, :, 0] > 0.15


@pytest.fixture(scope="module")
def picture(drape, tmp_path_factory):
    out = tmp_path_factory.mktemp("materials") / "materials.png"
    r = run_script(drape, "--size", f"{WIDTH}x{HEIGHT}", "--materials", *MATERIALS,
                   "-o", out)
    assert r.returncode == 0, r.stderr
    return out, r.stdout


def test_materials_picture_has_the_requested_size_and_one_garment_per_panel(picture):
    out, stdout = picture
    assert str(out) in stdout
    px = read_png(out)
    assert px.shape == (HEIGHT, WIDTH, 3)
    panel_w = WIDTH // len(MATERIALS)
    for i, material in enumerate(MATERIALS):
        mask = garment_mask(px[:, i * panel_w:(i + 1) * panel_w])
        # The camera frames the garment: it fills a fair part of its panel, and no panel
        # is the garment alone.
        assert 0.05 < mask.mean() < 0.6, f"panel {i} ({material}): garment covers {mask.mean()}"


def test_the_garment_changes_with_the_material_and_only_with_it(picture):
    out, _ = picture
    px = read_png(out)
    panel_w = WIDTH // len(MATERIALS)
    panels = [px[:, i * panel_w:(i + 1) * panel_w] for i in range(len(MATERIALS))]
    masks = [garment_mask(p) for p in panels]
    # The same material twice (first and last panel): the same pixels.
    assert np.abs(panels[0] - panels[3]).max() < 1.0 / 255.0
    # Different materials: the garment's pixels differ visibly, by more than 5 levels of
    # 255 on average over the pixels where either panel shows the garment.
    for i in range(3):
        for j in range(i + 1, 3):
            union = masks[i] | masks[j]
            diff = np.abs(panels[i] - panels[j]).max(axis=2)[union].mean()
            assert diff > 0.02, f"{MATERIALS[i]} and {MATERIALS[j]} differ by {diff}"


def test_printed_hem_figures_follow_the_panels(picture):
    _, stdout = picture
    rows = {}
    for line in stdout.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0] in MATERIALS + ["(modelled)"]:
            rows.setdefault(fields[0], []).append([float(v) for v in fields[1:]])
    assert set(rows) == {"(modelled)", "silk", "cotton", "denim"}
    assert rows["silk"][0] == rows["silk"][1]
    modelled = rows["(modelled)"][0]
    for material in ("silk", "cotton", "denim"):
        height, radius, lowest = rows[material][0]
        # The hem hangs inside the garment's extent as modelled, widened by the pull of
        # the cloth (a hem 10 m off would be a wrong vertex order or axis).
        assert lowest <= height and abs(height - modelled[0]) < 0.5 * modelled[1]
        assert 0.0 < radius < 2.0 * modelled[1]


def test_a_failed_bake_is_reported_with_drape_s_message(drape, tmp_path):
    r = run_script(drape, "--size", "90x30", "--materials", "velvet",
                   "-o", tmp_path / "m.png")
    assert r.returncode == 2
    assert "velvet" in r.stderr and "neither a preset" in r.stderr
    assert not (tmp_path / "m.png").exists()
