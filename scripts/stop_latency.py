#!/usr/bin/env python3
"""Measures how long `drape simulate` and `drape control` take to stop after SIGTERM sent in
the middle of a frame, on a garment of N x N particles (default 245 x 245 = 60,025).

    python3 scripts/stop_latency.py --drape target/release/drape [--side 245] [--runs 3]

For each run it starts a bake, waits until the first simulated frame is under way (the
JSON progress stream shows frame 1 written, then a random 0.2-1.5 s more), sends SIGTERM
and times the exit. It checks the exit code (130) and that the partial PC2 is valid: its
header's sample count matches its size. Needs only the Python standard library.
"""
import argparse
import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time


def write_sheet(path, side, spacing=0.01):
    """A square sheet of side x side particles, UVs = its flat shape (metres), two corners
    pinned, hanging in the XY plane (Y up): it swings and stretches under gravity."""
    n = side * side
    pos, uv, pin = bytearray(), bytearray(), bytearray()
    for j in range(side):
        for i in range(side):
            x, y = i * spacing, -j * spacing
            pos += struct.pack("<3f", x, y, 0.0)
            uv += struct.pack("<2f", x, -y)
            pinned = j == 0 and i in (0, side - 1)
            pin += struct.pack("<f", 1.0 if pinned else 0.0)
    idx = bytearray()
    for j in range(side - 1):
        for i in range(side - 1):
            a = j * side + i
            idx += struct.pack("<6I", a, a + side, a + 1, a + 1, a + side, a + side + 1)
    blob = bytes(pos + uv + pin + idx)
    bin_path = path[:-5] + ".bin"
    with open(bin_path, "wb") as f:
        f.write(blob)
    o_uv, o_pin, o_idx = len(pos), len(pos) + len(uv), len(pos) + len(uv) + len(pin)
    ext = (side - 1) * spacing
    doc = {
        "asset": {"version": "2.0"},
        "buffers": [{"uri": os.path.basename(bin_path), "byteLength": len(blob)}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": len(pos)},
            {"buffer": 0, "byteOffset": o_uv, "byteLength": len(uv)},
            {"buffer": 0, "byteOffset": o_pin, "byteLength": len(pin)},
            {"buffer": 0, "byteOffset": o_idx, "byteLength": len(idx)},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": n, "type": "VEC3",
             "min": [0, -ext, 0], "max": [ext, 0, 0]},
            {"bufferView": 1, "componentType": 5126, "count": n, "type": "VEC2"},
            {"bufferView": 2, "componentType": 5126, "count": n, "type": "SCALAR"},
            {"bufferView": 3, "componentType": 5125, "count": len(idx) // 4, "type": "SCALAR"},
        ],
        "meshes": [{"name": "Sheet", "primitives": [{"attributes": {
            "POSITION": 0, "TEXCOORD_0": 1, "_PIN": 2}, "indices": 3}]}],
        "nodes": [{"name": "Sheet", "mesh": 0, "extras": {"drape_role": "garment"}}],
        "scenes": [{"nodes": [0]}],
        "scene": 0,
    }
    with open(path, "w") as f:
        json.dump(doc, f)
    return n


def write_key(tmp, scene, side, frame, fps=24.0, spacing=0.01):
    """An MDD keyframe target at `frame`: the sheet lifted 5 cm toward +Z at its free end
    (any reachable shape will do: what is timed is the stop)."""
    path = os.path.join(tmp, "key.mdd")
    with open(path, "wb") as f:
        f.write(struct.pack(">ii", 1, side * side))
        f.write(struct.pack(">f", frame / fps))
        for j in range(side):
            for i in range(side):
                f.write(struct.pack(">3f", i * spacing, -j * spacing, 0.05 * j / side))
    return path


def pc2_valid(path):
    """True when the PC2's header sample count matches its size (a reader can load it)."""
    with open(path, "rb") as f:
        head = f.read(32)
    if len(head) < 32 or head[:12] != b"POINTCACHE2\0":
        return False, 0
    points, _, _, samples = struct.unpack("<iffi", head[16:32])
    return os.path.getsize(path) == 32 + samples * points * 12, samples


def one_run(cmd, out, rng):
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    started = None
    for line in p.stderr:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("event") in ("frame", "start"):
            started = time.monotonic()
            break
    if started is None:
        p.wait()
        raise SystemExit(f"the run ended before its first frame: exit {p.returncode}")
    # simulate: frame 1 (as given) is written at once, so this lands inside frame 2 or a
    # later one; control: inside the first forward pass of the optimisation.
    time.sleep(rng.uniform(0.5, 8.0))
    sent = time.monotonic()
    p.send_signal(signal.SIGTERM)
    p.stderr.read()
    code = p.wait()
    latency = time.monotonic() - sent
    partial = out + ".partial"
    valid, frames = pc2_valid(partial) if os.path.exists(partial) else (None, 0)
    return latency, code, valid, frames


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--drape", default="target/release/drape")
    ap.add_argument("--side", type=int, default=245)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    drape = os.path.abspath(args.drape)
    with tempfile.TemporaryDirectory() as tmp:
        scene = os.path.join(tmp, "sheet.gltf")
        n = write_sheet(scene, args.side)
        print(f"garment: {n} particles")
        for command in ("simulate", "control"):
            for k in range(args.runs):
                out = os.path.join(tmp, f"{command}{k}.pc2")
                cmd = [drape, command, scene, "-o", out, "--frames", "1..100",
                       "--progress", "json"]
                if command == "control":
                    cmd += ["--keyframes", write_key(tmp, scene, args.side, 20)]
                latency, code, valid, frames = one_run(cmd, out, rng)
                print(f"{command:8s} run {k + 1}: stopped {latency * 1000:.0f} ms after "
                      f"SIGTERM, exit {code}, partial cache "
                      f"{'valid' if valid else 'absent' if valid is None else 'INVALID'}"
                      f" with {frames} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main())
