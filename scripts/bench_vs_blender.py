"""drape against Blender's cloth modifier, side by side, in one run (issue 8, item 1).

Usage (scripts/bench-vs-blender.sh builds drape and picks the project's Python):

    python scripts/bench_vs_blender.py [--quick] [--frames N] [--json PATH] [--work DIR]
                                       [--drape BINARY] [--repeat N]

Scenes, each built once in Blender (`bpy` 4.5) and given to both engines:
  sheet_2500_on_sphere, sheet_10000_on_sphere — a 1 m sheet of 50² / 100² vertices
      falling from 10 cm onto a sphere of radius 0.25 m (Baraff fig. 1); drape reads
      Blender's USD export of the same scene;
  skirt_on_character — fixtures/skirt_on_character.gltf (Blender imports it; drape reads
      the file), the waist pinned, the body's arms swinging.
60 frames each at 24 fps (`--quick`: 10 frames, sheets of 20² and 32²). drape runs at its
defaults (cotton, adaptive implicit steps, self-collision on), Blender at its default
quality (5 steps per frame) with self-collision on and the matched mass, gravity and
collision distance of vsblender/scenes.py. Per scene: ms per frame of each engine (how
each is timed: vsblender/engines.py; with --repeat N the median of N runs of each,
alternating), Blender / drape, the maximum edge stretch and the
deepest penetration into the body of each (vsblender/metrics.py). Prints a markdown table
and writes JSON (default target/bench-vs-blender.json).
"""
import argparse
import json
import os
import pathlib
import platform
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from vsblender import engines, metrics, scenes  # noqa: E402

FULL = {"frames": 60, "sides": (50, 100)}
QUICK = {"frames": 10, "sides": (20, 32)}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="10 frames, small sheets (smoke test)")
    p.add_argument("--frames", type=int, help="simulated frames per scene (default 60)")
    p.add_argument("--json", type=pathlib.Path, default=ROOT / "target" / "bench-vs-blender.json",
                   help="where to write the results (default target/bench-vs-blender.json)")
    p.add_argument("--work", type=pathlib.Path,
                   help="keep scenes and caches here (default: a temporary directory)")
    p.add_argument("--drape", type=pathlib.Path,
                   default=pathlib.Path(os.environ.get("DRAPE_BIN",
                                                       ROOT / "target" / "release" / "drape")),
                   help="drape binary (default $DRAPE_BIN, else target/release/drape)")
    p.add_argument("--blender-mass", choices=scenes.MASS_MODES, default="matched",
                   help="Blender's vertex mass: drape's density (matched, default) or "
                        "Blender's own 0.3 kg (default); see vsblender/scenes.py")
    p.add_argument("--scenes", nargs="*", metavar="NAME",
                   help="only scenes whose name contains one of these words")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run each engine N times per scene, alternating, and report the "
                        "median ms/frame of each (default 1)")
    args = p.parse_args(argv)
    if args.frames is not None and args.frames < 1:
        p.error("--frames must be at least 1")
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if not args.drape.exists():
        p.error(f"{args.drape} is missing: run `cargo build --release` "
                "(scripts/bench-vs-blender.sh does)")
    return args


def scene_builders(config, frames, mass):
    """(name, build(work dir) -> scenes.Scene) of every scene, in run order."""
    out = []
    for side in config["sides"]:
        out.append((f"sheet_{side * side}_on_sphere",
                    lambda work, side=side: scenes.sheet_on_sphere(side, work, frames, mass)))
    gltf = ROOT / "fixtures" / "skirt_on_character.gltf"
    out.append(("skirt_on_character",
                lambda work: scenes.skirt_on_character(gltf, frames, mass)))
    return out


def measure(scene, drape_binary, frames, work, repeat=1):
    """Both engines on one scene, `repeat` times each, alternating: drape first (its cache
    is checked against the scene), then Blender. ms/frame is the median of each engine's
    runs (both vary by up to ±20% between runs on a shared machine); the quality figures
    come from the first run's caches. drape's later runs must reproduce its first cache
    exactly (it is deterministic)."""
    drapes, blenders = [], []
    for _ in range(repeat):
        drapes.append(engines.run_drape(drape_binary, scene, frames, work))
        if not np.array_equal(drapes[-1].frames, drapes[0].frames):
            raise RuntimeError(f"{scene.name}: drape's runs differ (it should be deterministic)")
        blenders.append(engines.run_blender(scene, frames, work))
    drape = drapes[0]
    blender, bodies = blenders[0]

    def figures(run, runs, edges):
        times = [r.ms_per_frame for r in runs]
        return {
            "vertices": int(run.frames.shape[1]),
            "ms_per_frame": float(np.median(times)),
            "ms_per_frame_runs": times,
            "max_stretch": metrics.max_stretch(run.frames, edges),
            "max_penetration_m": metrics.max_penetration(run.frames, bodies),
            "timing": run.timing,
        }

    d = figures(drape, drapes, scene.drape_edges)
    b = figures(blender, [r for r, _ in blenders], scene.blender_edges)
    return {
        "name": scene.name,
        "frames": frames,
        "runs": repeat,
        "drape": d,
        "blender": b,
        "blender_settings": scene.settings,
        "blender_over_drape": b["ms_per_frame"] / d["ms_per_frame"],
    }


def table(results):
    """The markdown table of the results."""
    lines = [
        "| scene | vertices (drape / Blender) | drape ms/frame | Blender ms/frame "
        "| Blender ÷ drape | max stretch drape / Blender | deepest penetration drape / "
        "Blender (mm) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        d, b = r["drape"], r["blender"]
        lines.append(
            f"| {r['name']} | {d['vertices']} / {b['vertices']} | {d['ms_per_frame']:.1f} "
            f"| {b['ms_per_frame']:.1f} | {r['blender_over_drape']:.2f}× "
            f"| {100 * d['max_stretch']:.2f} % / {100 * b['max_stretch']:.2f} % "
            f"| {1000 * d['max_penetration_m']:.2f} / {1000 * b['max_penetration_m']:.2f} |"
        )
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    config = QUICK if args.quick else FULL
    frames = args.frames or config["frames"]
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-vs-blender-") as tmp:
        base = args.work or pathlib.Path(tmp)
        for name, build in scene_builders(config, frames, args.blender_mass):
            if args.scenes and not any(word in name for word in args.scenes):
                continue
            work = base / name
            work.mkdir(parents=True, exist_ok=True)
            print(f"bench-vs-blender: {name}, {frames} frames ...", file=sys.stderr, flush=True)
            results.append(measure(build(work), args.drape, frames, work, args.repeat))
    summary = {
        "benchmark": "drape vs Blender cloth (scripts/bench_vs_blender.py)",
        "quick": args.quick,
        "frames": frames,
        "fps": scenes.FPS,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "drape_binary": str(args.drape),
        "drape_settings": {"material": "cotton (default)", "density_kg_m2": scenes.DENSITY,
                           "thickness_m": scenes.THICKNESS, "self_collision": True,
                           "steps": "adaptive, at most one per frame (default)"},
        "self_collision": {"drape": True, "blender": True},
        "blender_mass": args.blender_mass,
        "runs_per_engine": args.repeat,
        "scenes": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=2) + "\n")
    print(table(results))
    print(f"\n(JSON: {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
