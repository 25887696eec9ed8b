#!/usr/bin/env python3
"""Run `drape inspect --json` over every scene file under some folders and tabulate.

    scripts/inspect_corpus.py [--drape BIN] [--timeout S] [--memory GB] [--markdown] DIR...

Prints one row per file (file, exit code, garments, bodies, first line of the message) and
then the totals: files, how many exited 0 (and how many of those found nothing to simulate,
with or without a warning saying why), and for exit 2 the causes, each the first line
of the message with the file's path, quoted names, numbers and parenthesised details taken
out. Anything other than exit 0 or 2 (a panic, a signal, a timeout) is a bug, listed as such.
The exit code is 1 when there is one. Every run is limited to --timeout seconds and --memory
GiB of address space. Standard library only.
"""
import argparse
import collections
import json
import os
import re
import resource
import subprocess
import sys

EXTENSIONS = (".gltf", ".glb", ".usd", ".usda", ".usdc", ".usdz", ".geo")


def scene_files(folders):
    """Every file with a scene extension under the folders, sorted."""
    out = []
    for folder in folders:
        if os.path.isfile(folder):
            out.append(folder)
            continue
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            out.extend(os.path.join(root, f) for f in sorted(files) if f.lower().endswith(EXTENSIONS))
    return out


def cause(message, path):
    """The first line of an error with what is particular to one file taken out."""
    line = message.strip().splitlines()[0] if message.strip() else "(no message)"
    line = line.replace(path, "FILE")
    line = re.sub(r"^error:\s*", "", line)
    line = re.sub(r" ?\(object '[^']*'\)", "", line)
    line = re.sub(r"prim /\S*", "prim …", line)
    line = re.sub(r"/\S+", "…", line)
    line = re.sub(r"'[^']*'", "'…'", line)
    line = re.sub(r"\"[^\"]*\"", '"…"', line)
    line = re.sub(r"\d+(\.\d+)?", "N", line)
    # A list of the same complaint about several items ("a[N]: x; a[N]: x;") once.
    line = re.sub(r"\(([^()]*)\)", lambda m: "(" + "; ".join(dict.fromkeys(
        p.strip() for p in m.group(1).split(";") if p.strip())) + ")", line)
    return re.sub(r"\s+", " ", line).strip()


def run(drape, path, timeout, memory_gb):
    """(exit code or a word, stdout, stderr) of one `inspect --json`."""

    def limit():
        size = int(memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    try:
        p = subprocess.run(
            [drape, "inspect", "--json", path],
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=limit,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return "timeout", "", f"did not finish in {timeout} s"
    code = p.returncode if p.returncode >= 0 else f"signal {-p.returncode}"
    return code, p.stdout, p.stderr


def counts(stdout):
    """Garment and body counts of an `inspect --json` answer, or ('', '')."""
    try:
        doc = json.loads(stdout)
        return len(doc.get("garments", [])), len(doc.get("bodies", []))
    except (ValueError, AttributeError):
        return "", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--drape", default=os.environ.get("DRAPE_BIN", "target/release/drape"))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--memory", type=float, default=4.0, help="GiB of address space per run")
    ap.add_argument("--markdown", action="store_true", help="rows as a Markdown table")
    args = ap.parse_args()

    files = scene_files(args.folders)
    if not files:
        sys.exit(f"no scene files ({', '.join(EXTENSIONS)}) under {' '.join(args.folders)}")
    exits = collections.Counter()
    causes = collections.Counter()
    bugs = []
    empty = silent = 0
    sep = " | " if args.markdown else "\t"
    if args.markdown:
        print("| file | exit | garments | bodies | message |\n|---|---|---|---|---|")
    for path in files:
        code, out, err = run(args.drape, path, args.timeout, args.memory)
        garments, bodies = counts(out) if code == 0 else ("", "")
        first = err.strip().splitlines()[0] if err.strip() else ""
        if code == 0 and first and not first.startswith("warning"):
            first = ""
        row = [os.path.relpath(path), str(code), str(garments), str(bodies), first[:200]]
        print(("| " if args.markdown else "") + sep.join(row) + (" |" if args.markdown else ""))
        sys.stdout.flush()
        exits[code] += 1
        if code == 0 and garments == 0 and bodies == 0:
            empty += 1
            silent += not first
        if code == 2:
            causes[cause(err, path)] += 1
        elif code != 0:
            bugs.append((path, code, first))

    print(f"\nfiles: {len(files)}")
    for code, n in sorted(exits.items(), key=lambda kv: str(kv[0])):
        print(f"exit {code}: {n}")
    print(f"exit 0 with no garment and no body: {empty} ({silent} of them without a warning)")
    if causes:
        print("\nexit 2 by cause:")
        for text, n in causes.most_common():
            print(f"{n:5d}  {text}")
    if bugs:
        print("\nnot exit 0 or 2 (bugs):")
        for path, code, first in bugs:
            print(f"  {path}: {code}: {first}")
    sys.exit(1 if bugs else 0)


if __name__ == "__main__":
    main()
