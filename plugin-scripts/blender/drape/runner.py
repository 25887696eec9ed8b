"""Runs the `drape` binary for a host application, with no host import (no `bpy`, no `hou`).

The one plain-Python runner of both plug-ins: the Blender extension imports it as
`drape.runner`, the Houdini package's `drape_houdini.runner` loads this same file. It

- finds the binary (`find_binary`: the preference, else the packaged one, else PATH),
- builds command lines (`simulate_command`, `control_command` with `--regularization` and
  `--iterations`) and Houdini scene files
  (`scene_file`),
- launches `drape ... --progress json` with `subprocess.Popen` (`Job`), whose reader thread
  parses the JSON lines of stderr (docs/reference.md, "Progress") into a queue that the host
  drains on its own main thread (`Job.poll`),
- cancels (`Job.cancel`: SIGTERM, after which drape stops within a second, drops the frame
  under way, exits with code 130 and keeps `<out>.partial`),
- surfaces errors (`Job.error`: the message of an `{"event":"error"}` line, else the last
  plain stderr lines, else the meaning of the exit code, docs/reference.md, "Exit codes").
"""
import json
import os
import queue
import shutil
import subprocess
import sys
import threading

#: Exit codes of drape (docs/reference.md, "Exit codes").
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_FAILED = 3
EXIT_INTERRUPTED = 130

EXIT_MEANING = {
    EXIT_OK: "success",
    EXIT_INTERNAL: "internal error in drape",
    EXIT_INPUT: "bad input or usage",
    EXIT_FAILED: "the simulation failed (partial cache kept)",
    EXIT_INTERRUPTED: "interrupted (partial cache kept)",
}

#: What the artist can do after a failed bake, by exit code, when drape's own message does
#: not say it (a bad input's message names the input to fix).
ADVICE = {
    EXIT_FAILED: "What to do: play the partial cache to see where it went wrong; a garment "
                 "that starts inside a body, a body moving through it faster than a step "
                 "follows, or a material too stiff for the step fail like this: move the "
                 "garment clear of the body at the first frame, lower Max Step, or choose a "
                 "softer material, then bake again",
    EXIT_INTERNAL: "What to do: this is a fault of drape; bake again, and if it happens again "
                   "report it with the exported scene file",
}


def advice(code):
    """What the artist can do after exit `code` (`ADVICE`), or None (success, a cancel, or a
    bad input, whose message says what to fix)."""
    if code is None or code in (EXIT_OK, EXIT_INPUT, EXIT_INTERRUPTED) or code < 0:
        return None
    return ADVICE.get(code, ADVICE[EXIT_INTERNAL])


def report_particles(report):
    """The garment vertex indices a `--report` names as the place of the trouble, [] when
    it names none: `trouble.vertices` (points of the cache in Blender's vertex order,
    docs/reference.md "Run report"), else a list of integers under `particles` at the top
    level, in its `failure` or `error` object, or in any of its `garments`."""
    if not isinstance(report, dict):
        return []
    trouble = report.get("trouble")
    found = trouble.get("vertices") if isinstance(trouble, dict) else None
    if isinstance(found, list) and found and all(isinstance(i, int) for i in found):
        return sorted(set(found))
    places = [report, report.get("failure"), report.get("error")]
    places += [g for g in report.get("garments") or () if isinstance(g, dict)]
    for place in places:
        found = place.get("particles") if isinstance(place, dict) else None
        if isinstance(found, list) and all(isinstance(i, int) for i in found):
            return sorted(set(found))
    return []


def read_report(path):
    """The JSON report drape wrote at `path` (`--report`), or None when there is none."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


#: Material presets of `--material` (docs/reference.md, "Materials").
MATERIALS = ("cotton", "silk", "denim", "jersey", "leather")

#: Rest states of `--rest` (docs/reference.md, "Rest state"): (value, label, description).
RESTS = (("auto", "Auto", "The UV panels where they match the modelled shape, the modelled "
                          "shape elsewhere (drape warns which)"),
         ("uv", "UV Panels", "The UV panels are the sewing pattern: the garment pulls toward "
                             "them"),
         ("shape", "Modelled Shape", "The modelled shape at the first frame is the rest "
                                     "state; UVs give only seams and the weave's directions"))

BINARY_NAME = "drape.exe" if os.name == "nt" else "drape"


class DrapeError(Exception):
    """A problem the artist must fix (binary not found, bad settings)."""


def packaged_binary(beside):
    """The drape executable shipped inside a package: `beside/bin/drape` (the layout of the
    platform extension that scripts/build-blender-extension.sh makes), else `beside/drape`;
    None when there is none. Blender's Install from Disk extracts the zip with Python's
    zipfile, which drops the executable bit, so a packaged binary without it gets it back
    (u+x, g+x, o+x where readable) on first use."""
    if not beside:
        return None
    for candidate in (os.path.join(beside, "bin", BINARY_NAME), os.path.join(beside, BINARY_NAME)):
        if not os.path.isfile(candidate):
            continue
        if not os.access(candidate, os.X_OK) and os.name != "nt":
            try:
                mode = os.stat(candidate).st_mode
                os.chmod(candidate, mode | ((mode & 0o444) >> 2))
            except OSError:
                continue
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def find_binary(preference="", beside=None):
    """The drape executable: `preference` if set (an override), else the one packaged beside
    `beside` (a directory, e.g. the extension's own: `packaged_binary`), else `drape` on
    PATH."""
    if preference:
        path = os.path.abspath(os.path.expanduser(preference))
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        raise DrapeError(f"drape binary '{preference}' is not an executable file; fix the path")
    packaged = packaged_binary(beside)
    if packaged:
        return packaged
    found = shutil.which("drape")
    if found:
        return found
    raise DrapeError("drape binary not found inside the plug-in nor on PATH; install the "
                     "package built for this platform, or set the binary's path in the "
                     "plug-in's preferences")


def _common(frames=None, fps=None, material=None, max_step=None, rest=None, force=True,
            report=None, extra=()):
    args = []
    if frames is not None:
        first, last = frames
        if int(last) < int(first):
            raise DrapeError(f"frame range {first}..{last} is empty")
        args += ["--frames", f"{int(first)}..{int(last)}"]
    if fps is not None:
        args += ["--fps", f"{float(fps):.10g}"]
    if material:
        args += ["--material", str(material)]
    if max_step is not None and max_step > 0:
        args += ["--max-step", f"{float(max_step):g}"]
    if rest:
        if rest not in (r[0] for r in RESTS):
            raise DrapeError(f"rest '{rest}' must be one of {', '.join(r[0] for r in RESTS)}")
        args += ["--rest", str(rest)]
    if report:
        args += ["--report", str(report)]
    if force:
        args.append("--force")
    args += ["--progress", "json"]
    return args + [str(a) for a in extra]


def simulate_command(binary, scene, out, garments=(), bodies=(), **options):
    """`drape simulate SCENE [--garment G]... [--body B]... -o OUT [options] --progress json`.

    options: frames=(first, last), fps, material, max_step, rest ("auto", "uv" or "shape"),
    report (a JSON report file), force (default True), extra."""
    cmd = [str(binary), "simulate", str(scene)]
    for g in garments:
        cmd += ["--garment", str(g)]
    for b in bodies:
        cmd += ["--body", str(b)]
    cmd += ["-o", str(out)]
    return cmd + _common(**options)


def control_command(binary, scene, keyframes, out, regularization=None, iterations=None,
                    silhouettes=None, **options):
    """`drape control SCENE [--keyframes SOURCE] [--silhouettes FILE] -o OUT
    [--regularization A] [--iterations N] [options] --progress json`.

    keyframes: the 3D keyframe source, or None with `silhouettes` (a silhouettes JSON file)
    alone; regularization: price α of the control forces (> 0; drape's default 1e-4);
    iterations: L-BFGS iterations at most (>= 0; drape's default 40); None leaves drape's
    default. options as in `simulate_command`."""
    if keyframes is None and silhouettes is None:
        raise DrapeError("drape control needs keyframes or silhouettes")
    cmd = [str(binary), "control", str(scene)]
    if keyframes is not None:
        cmd += ["--keyframes", str(keyframes)]
    if silhouettes is not None:
        cmd += ["--silhouettes", str(silhouettes)]
    cmd += ["-o", str(out)]
    if regularization is not None:
        if not float(regularization) > 0:
            raise DrapeError(f"regularization {regularization} must be a positive number")
        # 7 significant digits: a Blender float property is single precision
        cmd += ["--regularization", f"{float(regularization):.7g}"]
    if iterations is not None:
        if int(iterations) < 0:
            raise DrapeError(f"iterations {iterations} must not be negative")
        cmd += ["--iterations", str(int(iterations))]
    return cmd + _common(**options)


def scene_file(path, garment, bodies, frames, fps, material="cotton"):
    """Writes a drape scene file (docs/reference.md, "Scene file") naming one garment and its bodies.

    garment: {"file", "name", "out"}; bodies: [{"file"} or {"file", "name"}] (a `$F4`
    sequence file for an animated body; without "name" every mesh of the file is a body).
    Paths are written relative to the scene file when they are inside its directory.
    Returns `path`."""
    base = os.path.dirname(os.path.abspath(path))

    def rel(p):
        p = os.path.abspath(p)
        return os.path.relpath(p, base) if p.startswith(base + os.sep) else p

    doc = {
        "frames": {"start": int(frames[0]), "end": int(frames[1]), "fps": float(fps)},
        "garments": [{"file": rel(garment["file"]), "name": garment["name"],
                      "material": material, "out": rel(garment["out"])}],
        "bodies": [dict({"file": rel(b["file"])}, **({"name": b["name"]} if b.get("name") else {}))
                   for b in bodies],
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
    return path


def parse_line(line):
    """One stderr line as an event dict. JSON objects with an "event" key are returned as
    they are; anything else becomes {"event": "log", "message": line}; blank lines None."""
    line = line.strip()
    if not line:
        return None
    if line.startswith("{"):
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if isinstance(event, dict) and "event" in event:
            return event
    return {"event": "log", "message": line}


def iteration_status(event):
    """The status line of a `drape control` iteration event: "drape: iteration 4/40,
    objective 0.0123, keyframe error 4.0 mm" (keyframe_error is an RMS distance in m), with
    silhouette keyframes ", silhouette IoU 0.912" too."""
    status = f"drape: iteration {int(event.get('iteration', 0) or 0)}/{event.get('of', '?')}"
    objective = event.get("objective")
    if isinstance(objective, (int, float)):
        status += f", objective {objective:.6g}"
    error = event.get("keyframe_error")
    outline = event.get("silhouette_error")
    # keyframe_error is the silhouette error when there are no 3D keyframes
    if isinstance(error, (int, float)) and error != outline:
        status += f", keyframe error {1e3 * error:.1f} mm"
    iou = event.get("silhouette_iou")
    if isinstance(iou, (int, float)):
        status += f", silhouette IoU {iou:.3f}"
    return status


class Progress:
    """What the host shows: fraction done in [0, 1], a status line, optimisation objectives."""

    def __init__(self):
        self.fraction = 0.0
        self.status = "starting drape"
        self.frame = None
        self.objectives = []  # (iteration, objective) of `drape control`
        self.keyframe_errors = []  # (iteration, RMS keyframe error in m) of `drape control`
        self.warnings = []
        self.outputs = []

    def update(self, event):
        """Folds one event into the state; returns True if what the host shows changed."""
        kind = event.get("event")
        if kind == "start":
            frames = event.get("frames") or ["?", "?"]
            self.status = f"drape {event.get('command', '')}: frames {frames[0]}..{frames[-1]}"
        elif kind == "frame":
            total = max(int(event.get("total", 0) or 0), 1)
            done = int(event.get("done", 0) or 0)
            self.fraction = min(max(done / total, 0.0), 1.0)
            self.frame = event.get("frame")
            self.status = (
                f"drape: frame {self.frame} ({done}/{total}), "
                f"{float(event.get('elapsed_s', 0.0)):.1f} s"
            )
        elif kind == "iteration":
            of = max(int(event.get("of", 0) or 0), 1)
            it = int(event.get("iteration", 0) or 0)
            self.fraction = min(max(it / of, 0.0), 1.0)
            self.objectives.append((it, event.get("objective")))
            error = event.get("keyframe_error")
            if isinstance(error, (int, float)):
                self.keyframe_errors.append((it, error))
            self.status = iteration_status(event)
        elif kind == "warning":
            self.warnings.append(event.get("message", ""))
            return False
        elif kind == "done":
            self.fraction = 1.0
            self.outputs = list(event.get("outputs", []))
            self.status = f"drape: done in {float(event.get('elapsed_s', 0.0)):.1f} s"
        else:
            return False
        return True


class Job:
    """One running drape process.

    The reader thread only parses lines and puts events on `events`; the host calls `poll()`
    on its main thread (a modal timer in Blender, the InterruptableOperation loop in Houdini)
    to fold them into `progress`, so no host data is touched off the main thread."""

    def __init__(self, command, cwd=None):
        self.command = [str(c) for c in command]
        self.cwd = cwd
        self.events = queue.Queue()
        self.progress = Progress()
        self.error_event = None
        self.log = []  # plain stderr lines (not JSON events)
        self.cancelled = False
        self._proc = None
        self._thread = None

    def start(self):
        """Launches the process and its stderr reader thread; returns self."""
        kwargs = {}
        if os.name == "nt":
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        try:
            self._proc = subprocess.Popen(
                self.command, cwd=self.cwd, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                text=True, encoding="utf-8", errors="replace", bufsize=1, **kwargs,
            )
        except OSError as e:
            raise DrapeError(f"cannot run {self.command[0]}: {e}") from e
        self._thread = threading.Thread(target=self._read, name="drape-stderr", daemon=True)
        self._thread.start()
        return self

    def _read(self):
        for line in self._proc.stderr:
            event = parse_line(line)
            if event is not None:
                self.events.put(event)
        self._proc.stderr.close()

    def poll(self):
        """Drains the queued events (main thread); returns them in order."""
        out = []
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return out
            kind = event.get("event")
            if kind == "error":
                self.error_event = event
            elif kind == "log":
                self.log.append(event.get("message", ""))
            self.progress.update(event)
            out.append(event)

    @property
    def returncode(self):
        """The exit code once the process ended and its stderr was read, else None."""
        if self._proc is None or self._proc.poll() is None:
            return None
        if self._thread is not None and self._thread.is_alive():
            return None
        return self._proc.returncode

    @property
    def finished(self):
        return self.returncode is not None

    def wait(self, timeout=None, on_event=None):
        """Blocks until the process ends (polling events, passing each to `on_event`);
        returns the exit code."""
        self._proc.wait(timeout=timeout)
        self._thread.join(timeout=timeout)
        for event in self.poll():
            if on_event:
                on_event(event)
        return self._proc.returncode

    def run(self, on_event=None, tick=0.1, should_cancel=None):
        """Starts (if needed) and runs to completion, calling `on_event` for each event and
        `should_cancel()` every `tick` seconds; returns the exit code."""
        if self._proc is None:
            self.start()
        while not self.finished:
            for event in self.poll():
                if on_event:
                    on_event(event)
            if should_cancel and not self.cancelled and should_cancel():
                self.cancel()
            try:
                self._proc.wait(timeout=tick)
            except subprocess.TimeoutExpired:
                pass
        return self.wait(on_event=on_event)

    def cancel(self):
        """Asks drape to stop: SIGTERM (CTRL_BREAK on Windows); drape drops the frame under
        way, keeps `<out>.partial` with the finished frames and exits 130."""
        if self._proc is None or self._proc.poll() is not None:
            return
        self.cancelled = True
        if os.name == "nt":
            import signal
            self._proc.send_signal(signal.CTRL_BREAK_EVENT)
        else:
            self._proc.terminate()

    def kill(self):
        """Stops at once (a second cancel); the partial cache keeps the finished frames."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    def error(self):
        """None on success (exit 0), else a message for the artist."""
        code = self.returncode
        if code is None or code == EXIT_OK:
            return None
        if self.error_event is not None and self.error_event.get("message"):
            return str(self.error_event["message"])
        if code < 0:
            return f"drape was stopped by signal {-code}"
        meaning = EXIT_MEANING.get(code, "unexpected exit code")
        tail = "; ".join(line for line in self.log[-3:] if line)
        return f"drape exited with code {code} ({meaning})" + (f": {tail}" if tail else "")


def partial_path(out):
    """Where drape keeps the finished frames of an interrupted or failed bake."""
    return str(out) + ".partial"


def remove_partial(out):
    """Removes a `<out>.partial` left by an earlier bake, so that a bake stopped before its
    first frame does not load old frames; raises DrapeError if it cannot be removed."""
    partial = partial_path(out)
    try:
        os.remove(partial)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise DrapeError(f"cannot remove the old partial cache {partial}: {e}") from e


def result_path(out, code):
    """The cache to load after exit `code`: `out` on success, its `.partial` when the bake
    stopped early and it exists, else None."""
    if code == EXIT_OK and os.path.exists(out):
        return str(out)
    partial = partial_path(out)
    if code in (EXIT_FAILED, EXIT_INTERRUPTED) or code is not None and code < 0:
        if os.path.exists(partial) and os.path.getsize(partial) > 32:
            return partial
    return None


if __name__ == "__main__":  # pragma: no cover - a command-line smoke use
    job = Job(sys.argv[1:]).start()
    sys.exit(job.run(on_event=lambda e: print(job.progress.status)))
