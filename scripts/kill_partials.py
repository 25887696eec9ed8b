"""SIGKILL drape bakes at random instants and read every partial cache back with the
consuming program's reader: USD with Pixar's `pxr` (usd-core), PC2, MDD and Houdini `.geo`
with the independent readers of tests/python/readers.py. Each partial must open and hold
exactly the reference bake's frames (the first k of them; an MDD holds the whole range, its
unfinished frames zeros, the frame cut by the kill a prefix of its points). Run through
scripts/kill-partials.sh."""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
from readers import read_houdini_geo, read_mdd, read_pc2  # noqa: E402

FORMATS = ["pc2", "mdd", "usda", "$F4.geo"]


def usd_frames(path, work):
    """Points samples of the one Mesh of a .usda file, opened by pxr."""
    from pxr import Usd, UsdGeom
    copy = os.path.join(work, "copy.usda")
    shutil.copy(path, copy)
    stage = Usd.Stage.Open(copy)
    mesh = [p for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)][0]
    attr = UsdGeom.Mesh(mesh).GetPointsAttr()
    times = attr.GetTimeSamples()
    assert times == [float(t) for t in range(1, len(times) + 1)], f"sample times {times}"
    return [[tuple(p) for p in attr.Get(t)] for t in times]


def geo_frames(pattern, suffix):
    """Points of frames 1, 2, ... of a .geo sequence as far as its files run."""
    frames, f = [], 1
    while True:
        path = pattern.replace("$F4", f"{f:04d}") + suffix
        if not os.path.exists(path):
            return frames
        frames.append([tuple(p) for p in read_houdini_geo(path)["points"]])
        f += 1


def read(ext, out, suffix, work):
    path = out + suffix
    if ext == "pc2":
        return read_pc2(path)[2]
    if ext == "mdd":
        return read_mdd(path)[1]
    if ext == "usda":
        return usd_frames(path, work)
    return geo_frames(out, suffix)


def check(ext, frames, reference, published):
    """Raises unless `frames` are the reference's first frames (see the module doc)."""
    ref = reference
    if ext == "mdd" and not published:
        # Laid out for the whole range (or, killed before that, no frame at all).
        assert len(frames) in (len(ref), 0), f"{len(frames)} frames"
        zero = [(0.0, 0.0, 0.0)] * len(ref[0])
        done = 0
        while done < len(frames) and frames[done] == ref[done]:
            done += 1
        if done < len(frames):
            cut = frames[done]
            k = 0
            while k < len(cut) and cut[k] == ref[done][k]:
                k += 1
            assert all(p == (0.0, 0.0, 0.0) for p in cut[k:]), f"frame {done + 1} garbled"
            for f in frames[done + 1:]:
                assert f == zero, "an unfinished frame is not zeros"
        return done
    assert len(frames) <= len(ref), f"{len(frames)} frames > {len(ref)}"
    for k, f in enumerate(frames):
        assert f == ref[k], f"frame {k + 1} differs from the reference"
    if published:
        assert len(frames) == len(ref), "the published cache is short"
    return len(frames)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("drape")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=52)
    ap.add_argument("--scene", default=os.path.join(os.path.dirname(__file__), "..",
                                                     "fixtures", "skirt_on_character.gltf"))
    ap.add_argument("--frames", type=int, default=120)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="drape-kill-")
    bake = [args.drape, "simulate", args.scene, "--frames", f"1..{args.frames}",
            "--progress", "none"]
    reference = {}
    seconds = {}
    for ext in FORMATS:
        out = os.path.join(work, f"ref.{ext}")
        t = time.monotonic()
        subprocess.run(bake + ["-o", out], check=True, stderr=subprocess.DEVNULL)
        seconds[ext] = time.monotonic() - t
        reference[ext] = read(ext, out, "", work)
    ref = reference["pc2"]
    for ext in FORMATS:
        assert reference[ext] == ref, f"{ext}: the finished cache differs from the PC2"
    counts = {ext: [0, 0, 0] for ext in FORMATS}  # kills, partial caches checked, failures
    failures = []
    for run in range(args.runs):
        ext = FORMATS[run % 4]
        out = os.path.join(work, f"k{run}.{ext}")
        delay = rng.uniform(0.0, seconds[ext] * 1.05)
        p = subprocess.Popen(bake + ["-o", out], stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        published = os.path.exists(out.replace("$F4", "0001")) if ext.endswith("geo") \
            else os.path.exists(out)
        published = published and not os.path.exists(out + ".partial")
        claimed = os.path.exists(out + ".partial") or published
        counts[ext][0] += 1
        if not claimed:
            # Killed while the scene was read: no cache opened yet, nothing to check.
            print(f"run {run:3d} {ext:8s} kill at {delay:5.2f} s: before the cache was opened",
                  flush=True)
            continue
        counts[ext][1] += not published
        try:
            frames = read(ext, out, "" if published else ".partial", work)
            kept = check(ext, frames, ref, published)
            status = "published" if published else f"partial, {kept} frames"
        except Exception as e:  # noqa: BLE001 - every failure is counted and shown
            counts[ext][2] += 1
            status = f"FAILED: {type(e).__name__}: {e}"
            failures.append((run, ext, delay, status))
        print(f"run {run:3d} {ext:8s} kill at {delay:5.2f} s: {status}", flush=True)
        for name in os.listdir(work):
            if name.startswith(f"k{run}."):
                os.remove(os.path.join(work, name))
    shutil.rmtree(work)
    total = sum(c[0] for c in counts.values())
    mid = sum(c[1] for c in counts.values())
    bad = sum(c[2] for c in counts.values())
    for ext, (n, k, f) in counts.items():
        print(f"{ext:8s}: {n} kills, {k} partial caches checked, {f} unreadable or wrong")
    print(f"{total} kills, {mid} left a partial cache: {mid - bad} read back exactly, "
          f"{bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
