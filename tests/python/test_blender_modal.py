"""The modal path of the drape operators, driven without a UI (issue 7).

In background mode `invoke` takes the blocking path, so these tests call the operator's
modal machinery (`start_modal`, `modal`, `finish` of `_DrapeJobOperator`) themselves, on a
harness sharing the Simulate Garment operator's `prepare`, with a fake window manager
(timers, modal handler, progress bar) and workspace (status text) and fake TIMER / ESC
events, as Blender's event loop would deliver them on the main thread. Checked: progress
events move the progress bar and the status text; Esc cancels drape and the partial cache
is loaded by the Mesh Cache modifier (a second Esc kills drape; a stale `.partial` of an
earlier bake is never loaded); an error from the binary is reported, with a partial cache
loaded when drape kept one; a garment deleted during the bake is reported; the timer,
progress bar and status text are always cleaned up.
"""
import contextlib
import pathlib
import struct
import sys
import time

import pytest

bpy = pytest.importorskip("bpy")

from test_blender_extension import (  # noqa: E402
    FIRST, build_body, build_garment, evaluated, fresh_scene, read_pc2)

TICK_S = 0.01  # time between fake TIMER events
TIMEOUT_S = 60.0


class FakeWindowManager:
    """Records what the operator asks of Blender's window manager."""

    def __init__(self):
        self.timers = []
        self.handlers = []
        self.progress = []
        self.progress_range = None
        self.progress_ended = False

    def event_timer_add(self, time_step, window=None):
        timer = ("timer", time_step)
        self.timers.append(timer)
        return timer

    def event_timer_remove(self, timer):
        self.timers.remove(timer)

    def modal_handler_add(self, operator):
        self.handlers.append(operator)
        return True

    def progress_begin(self, low, high):
        self.progress_range = (low, high)

    def progress_update(self, value):
        self.progress.append(value)

    def progress_end(self):
        self.progress_ended = True


class FakeWorkspace:
    def __init__(self):
        self.status = []

    def status_text_set(self, text):
        self.status.append(text)


class FakeContext:
    """bpy.context with a fake window manager, workspace and window."""

    def __init__(self):
        self.window_manager = FakeWindowManager()
        self.workspace = FakeWorkspace()
        self.window = None

    def __getattr__(self, name):
        return getattr(bpy.context, name)


class Event:
    def __init__(self, type, value="NOTHING"):
        self.type, self.value = type, value


def harness():
    """An object with the operators' modal machinery and Simulate Garment's prepare, which
    records its reports (a bpy Operator cannot be instantiated outside an operator call)."""
    extension = sys.modules["drape"]

    class Harness(extension._DrapeJobOperator):
        prepare = extension.DRAPE_OT_simulate_garment.prepare
        export_format = "SCENE"

        def __init__(self):
            self.reports = []

        def report(self, kind, message):
            self.reports.append((set(kind), message))

    return Harness()


def run_modal(op, ctx, escape_when=None):
    """start_modal, then TIMER events every TICK_S (and one ESC once `escape_when(job)`)
    until `modal` stops passing events through; returns (result, seconds)."""
    t0 = time.monotonic()
    result = op.start_modal(ctx)
    if result != {"RUNNING_MODAL"}:
        return result, 0.0
    assert ctx.window_manager.handlers == [op] and len(ctx.window_manager.timers) == 1
    escaped = False
    while time.monotonic() - t0 < TIMEOUT_S:
        if escape_when is not None and not escaped and escape_when(op._job):
            escaped = True
            assert op.modal(ctx, Event("ESC", "PRESS")) == {"RUNNING_MODAL"}
        result = op.modal(ctx, Event("TIMER"))
        if result != {"PASS_THROUGH"}:
            return result, time.monotonic() - t0
        time.sleep(TICK_S)
    op._job.kill()
    pytest.fail("the modal operator did not finish")


@pytest.fixture(scope="module")
def scene(drape):
    sc = fresh_scene(drape.binary, FIRST, 48)
    prefs = bpy.context.preferences.addons["drape"].preferences
    body = build_body()
    garment = build_garment()
    return sc, garment, body, prefs


@pytest.fixture
def selected(scene):
    sc, garment, body, prefs = scene
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    body.select_set(True)
    garment.select_set(True)
    bpy.context.view_layer.objects.active = garment
    sc.frame_set(FIRST)
    return scene


def assert_cleaned_up(ctx):
    wm = ctx.window_manager
    assert wm.timers == [] and wm.progress_ended
    assert ctx.workspace.status[-1] is None, "the status text is cleared"


def test_modal_bake_with_drape_loads_the_cache(selected):
    """The real binary end to end through the modal path."""
    sc, garment, _, _ = selected
    sc.frame_end = 48
    op, ctx = harness(), FakeContext()
    result, seconds = run_modal(op, ctx)
    assert result == {"FINISHED"}, op.reports
    wm = ctx.window_manager
    assert wm.progress_range == (0, 100)
    assert wm.progress == sorted(wm.progress), "the progress bar never goes back"
    assert wm.progress[-1] == 100
    statuses = [s for s in ctx.workspace.status if s]
    assert statuses[0] == "drape: starting (Esc cancels)"
    assert statuses[-1].startswith("drape: done in")
    assert_cleaned_up(ctx)
    assert op.reports and op.reports[-1][0] == {"INFO"}
    mod = garment.modifiers["Drape"]
    assert mod.filepath.endswith(".pc2") and mod.frame_start == FIRST
    _, _, frames = read_pc2(mod.filepath)
    assert len(frames) == 48 - FIRST + 1
    local, _ = evaluated(garment, 30)
    d = max(abs(a - b) for p, q in zip(local, frames[30 - FIRST]) for a, b in zip(p, q))
    assert d < 1e-5
    print(f"modal bake of 48 frames: {seconds:.2f} s, {len(wm.progress)} progress updates")


def test_progress_events_move_the_progress_bar_and_the_status_text(selected, tmp_path):
    """A binary pacing four frame events 0.15 s apart (and the done event): each shows on a
    timer tick as progress 25, 50, 75, 100 and a "drape: frame F (k/4)" status; then the
    cache loads."""
    _, garment, _, prefs = selected
    n = len(garment.data.vertices)
    fake = fake_binary(tmp_path, (
        f"n = {n}\n"
        "emit(event='start', command='simulate', frames=[1, 5])\n"
        "for k in range(1, 5):\n"
        "    time.sleep(0.15)\n"
        "    emit(event='frame', frame=1 + k, done=k, total=4, elapsed_s=0.15 * k)\n"
        "with open(out, 'wb') as f:\n"
        "    f.write(b'POINTCACHE2\\0' + struct.pack('<iiffi', 1, n, 1.0, 1.0, 5))\n"
        "    f.write(struct.pack(f'<{15 * n}f', *([0.25] * (15 * n))))\n"
        "time.sleep(0.15)\n"
        "emit(event='done', outputs=[out], elapsed_s=0.6)\n"))
    op, ctx, result = run_fake(prefs, fake)
    assert result == {"FINISHED"}, op.reports
    wm = ctx.window_manager
    assert sorted(set(wm.progress)) == [0, 25, 50, 75, 100]
    assert wm.progress == sorted(wm.progress)
    statuses = [s for s in ctx.workspace.status if s]
    assert statuses[0] == "drape: starting (Esc cancels)"
    assert "drape simulate: frames 1..5 (Esc cancels)" in statuses
    for k in range(1, 5):
        assert any(s.startswith(f"drape: frame {1 + k} ({k}/4), ") for s in statuses), statuses
    assert statuses[-1] == "drape: done in 0.6 s (Esc cancels)"
    assert_cleaned_up(ctx)
    local, _ = evaluated(garment, FIRST + 2)
    assert max(abs(c - 0.25) for p in local for c in p) < 1e-6, "the new cache plays"


def test_escape_cancels_drape_and_loads_the_partial_cache(selected):
    sc, garment, _, _ = selected
    sc.frame_end = 5000  # far more than drape can do before the Esc arrives
    try:
        op, ctx = harness(), FakeContext()
        result, seconds = run_modal(op, ctx, escape_when=lambda job: job.progress.frame is not None)
    finally:
        sc.frame_end = 48
    assert op._job.cancelled
    assert op._job.returncode == 130, "drape stopped at a frame boundary (SIGTERM -> 130)"
    assert result == {"FINISHED"}
    kinds, message = op.reports[-1]
    assert kinds == {"WARNING"} and "partial cache" in message and "loaded" in message
    assert any(s and s.startswith("drape: cancelling") for s in ctx.workspace.status)
    assert_cleaned_up(ctx)
    mod = garment.modifiers["Drape"]
    assert mod.filepath.endswith(".pc2.partial")
    start, _, frames = read_pc2(mod.filepath)
    assert start == FIRST and 2 <= len(frames) < 5000 - FIRST + 1
    last = FIRST + len(frames) - 1
    for f in (FIRST, last):
        local, _ = evaluated(garment, f)
        d = max(abs(a - b) for p, q in zip(local, frames[f - FIRST]) for a, b in zip(p, q))
        assert d < 1e-5, f"frame {f}: the partial cache does not play ({d})"
    print(f"cancelled after {seconds:.2f} s with {len(frames)} frames kept")


def fake_binary(tmp_path, body):
    path = tmp_path / "drape"
    path.write_text(f"#!{sys.executable}\nimport json, struct, sys, time\n"
                    "out = sys.argv[sys.argv.index('-o') + 1]\n"
                    "def emit(**e):\n"
                    "    sys.stderr.write(json.dumps(e) + '\\n'); sys.stderr.flush()\n" + body)
    path.chmod(0o755)
    return path


@contextlib.contextmanager
def using_binary(prefs, path):
    """The extension's `binary_path` preference set to `path` for the block."""
    saved, prefs.binary_path = prefs.binary_path, str(path)
    try:
        yield
    finally:
        prefs.binary_path = saved


def run_fake(prefs, fake):
    """Runs the modal operator to its end with `fake` as the drape binary."""
    with using_binary(prefs, fake):
        op, ctx = harness(), FakeContext()
        result, _ = run_modal(op, ctx)
    return op, ctx, result


def tick_until_done(op, ctx, seconds=10):
    """Sends timer events until the operator leaves the modal state (or `seconds` pass)."""
    result, t0 = {"PASS_THROUGH"}, time.monotonic()
    while result == {"PASS_THROUGH"} and time.monotonic() - t0 < seconds:
        time.sleep(TICK_S)
        result = op.modal(ctx, Event("TIMER"))
    return result


def loaded_cache(garment):
    """The path the garment's Drape Mesh Cache modifier reads, or None."""
    return garment.modifiers["Drape"].filepath if "Drape" in garment.modifiers else None


def test_an_error_from_the_binary_is_reported_and_the_modal_state_cleaned_up(selected, tmp_path):
    _, garment, _, prefs = selected
    before = loaded_cache(garment)
    fake = fake_binary(tmp_path, (
        "emit(event='start', command='simulate', frames=[1, 48])\n"
        "time.sleep(0.05)\n"
        "emit(event='error', code=2, message='Cloth: zero-area UV triangle 3')\n"
        "sys.exit(2)\n"))
    op, ctx, result = run_fake(prefs, fake)
    assert result == {"CANCELLED"}
    assert op.reports == [({"ERROR"}, "Cloth: zero-area UV triangle 3")]
    assert any(s and s.startswith("drape simulate: frames 1..48") for s in ctx.workspace.status)
    assert_cleaned_up(ctx)
    after = loaded_cache(garment)
    assert after == before, "no cache was loaded"


def test_a_failed_bake_reports_the_error_and_loads_its_partial_cache(selected, tmp_path):
    """Exit 3 (the simulation failed) with a `.partial` of two frames: the error is reported
    and the partial cache still plays."""
    _, garment, _, prefs = selected
    n = len(garment.data.vertices)
    samples = [[(0.01 * p, 0.002 * f, 0.5) for p in range(n)] for f in range(2)]
    fake = fake_binary(tmp_path, (
        f"n, samples = {n}, {samples!r}\n"
        "with open(out + '.partial', 'wb') as f:\n"
        "    f.write(b'POINTCACHE2\\0' + struct.pack('<iiffi', 1, n, 1.0, 1.0, 2))\n"
        "    for s in samples:\n"
        "        f.write(struct.pack(f'<{3 * n}f', *(c for p in s for c in p)))\n"
        "emit(event='frame', frame=2, done=1, total=47, elapsed_s=0.1)\n"
        "emit(event='error', code=3, message='the solver diverged at frame 3')\n"
        "sys.exit(3)\n"))
    op, ctx, result = run_fake(prefs, fake)
    assert result == {"CANCELLED"}
    (kinds, message), = op.reports
    assert kinds == {"ERROR"}
    assert message.startswith("the solver diverged at frame 3 (partial cache ")
    assert ".pc2.partial loaded). What to do: " in message, "says what the artist can do"
    assert_cleaned_up(ctx)
    mod = garment.modifiers["Drape"]
    assert pathlib.Path(mod.filepath).name.endswith(".pc2.partial")
    local, _ = evaluated(garment, FIRST + 1)
    d = max(abs(a - b) for p, q in zip(local, samples[1]) for a, b in zip(p, q))
    assert d < 1e-6


def test_a_failed_bake_selects_the_vertices_its_report_names(selected, tmp_path):
    """Exit 3 with a `--report` whose `trouble` names cache vertices (drape's report of a
    failed bake): those vertices, and only they, are selected (not the welded particles it
    also names) and the message says so."""
    _, garment, _, prefs = selected
    garment.data.vertices.foreach_set("select", [True] * len(garment.data.vertices))
    fake = fake_binary(tmp_path, (
        "report = sys.argv[sys.argv.index('--report') + 1]\n"
        "json.dump({'status': 'failed', 'trouble': {'cause': 'contact', 'particles': [7],"
        " 'vertices': [3, 5, 999999], 'body': 'Body'}},"
        " open(report, 'w'))\n"
        "emit(event='error', code=3, message='cloth kept ending up inside a body')\n"
        "sys.exit(3)\n"))
    op, ctx, result = run_fake(prefs, fake)
    assert result == {"CANCELLED"}
    (kinds, message), = op.reports
    assert kinds == {"ERROR"}
    assert "the 2 vertices where it went wrong are selected" in message
    assert [v.index for v in garment.data.vertices if v.select] == [3, 5]


def test_a_second_escape_kills_drape_at_once(selected, tmp_path):
    """A binary that ignores SIGTERM: the first Esc asks, the second kills; no frame was
    finished, so nothing is loaded (not even the stale `.partial` of an earlier bake, which
    the operator removes before starting) and the operator reports the cancel."""
    _, garment, _, prefs = selected
    before = loaded_cache(garment)
    stale = pathlib.Path(sys.modules["drape"]._paths(garment)[1] + ".partial")
    n = len(garment.data.vertices)
    stale.write_bytes(b"POINTCACHE2\0" + struct.pack("<iiffi", 1, n, 1.0, 1.0, 1)
                      + struct.pack(f"<{3 * n}f", *([0.0] * (3 * n))))
    fake = fake_binary(tmp_path, (
        "import signal\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "emit(event='start', command='simulate', frames=[1, 48])\n"
        "time.sleep(60)\n"))
    op, ctx = harness(), FakeContext()
    try:
        with using_binary(prefs, fake):
            assert op.start_modal(ctx) == {"RUNNING_MODAL"}
        deadline = time.monotonic() + 10
        while not op._job.progress.status.startswith("drape simulate") and \
                time.monotonic() < deadline:
            assert op.modal(ctx, Event("TIMER")) == {"PASS_THROUGH"}
            time.sleep(TICK_S)
        assert op.modal(ctx, Event("ESC", "PRESS")) == {"RUNNING_MODAL"}
        time.sleep(0.2)
        assert op.modal(ctx, Event("TIMER")) == {"PASS_THROUGH"}, "SIGTERM was ignored"
        assert op.modal(ctx, Event("ESC", "PRESS")) == {"RUNNING_MODAL"}
        result = tick_until_done(op, ctx)
    finally:
        if op._job is not None:
            op._job.kill()
    assert result == {"CANCELLED"}
    assert op._job.returncode == -9
    assert op.reports == [({"WARNING"}, "drape cancelled; no frame was finished")]
    assert not stale.exists()
    assert_cleaned_up(ctx)
    after = loaded_cache(garment)
    assert after == before


def test_deleting_the_garment_during_the_bake_is_reported_not_raised(selected, tmp_path):
    """The modal path lets the artist edit the scene while drape runs; if the garment is
    gone when drape ends, the operator reports where the cache is instead of raising."""
    sc, garment, body, prefs = selected
    fake = fake_binary(tmp_path, (
        "open(out, 'wb').write(b'POINTCACHE2\\0' + struct.pack('<iiffi', 1, 1, 1.0, 1.0, 0))\n"
        "emit(event='done', outputs=[out], elapsed_s=0.0)\n"))
    spare = garment.copy()
    spare.data = garment.data.copy()
    sc.collection.objects.link(spare)
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    spare.select_set(True)
    bpy.context.view_layer.objects.active = spare
    with using_binary(prefs, fake):
        op, ctx = harness(), FakeContext()
        assert op.start_modal(ctx) == {"RUNNING_MODAL"}
        bpy.data.objects.remove(spare)
        result = tick_until_done(op, ctx)
    assert result == {"CANCELLED"}
    (kinds, message), = op.reports
    assert kinds == {"WARNING"} and "garment was deleted" in message and ".pc2" in message
    assert_cleaned_up(ctx)


def bake_all_harness():
    """The modal machinery with Bake All's queue (`DRAPE_OT_bake_all`), recording reports."""
    extension = sys.modules["drape"]
    bake_all = extension.DRAPE_OT_bake_all

    class Harness(extension._DrapeJobOperator):
        prepare = bake_all.prepare
        finish = bake_all.finish
        _start_all, _count, _summary = bake_all._start_all, bake_all._count, bake_all._summary
        _queue, _baked, _failed = (), 0, 0

        def __init__(self):
            self.reports = []

        def report(self, kind, message):
            self.reports.append((set(kind), message))

    return Harness()


def test_bake_all_bakes_every_garment_one_after_the_other_in_the_modal_path(selected):
    """Two garments, each with its own bodies and frames: the modal Bake All runs drape for
    one, loads its cache, starts the next with the same timer, and cleans up at the end."""
    sc, garment, body, _ = selected
    extension = sys.modules["drape"]
    second = garment.copy()
    second.data = garment.data.copy()
    second.name = "Second"
    second.location.z += 0.2
    sc.collection.objects.link(second)
    for ob in (garment, second):
        extension.settings.remember(ob, [body])
    second.drape.use_scene_frames = False
    second.drape.frame_start, second.drape.frame_end = FIRST, FIRST + 6
    try:
        op, ctx = bake_all_harness(), FakeContext()
        assert op._start_all(ctx)
        assert [g.name for g in op._queue] == [garment.name, "Second"]
        result, _ = run_modal(op, ctx)
        while result == {"RUNNING_MODAL"}:  # the next garment's bake started
            assert len(ctx.window_manager.timers) == 1
            result = tick_until_done(op, ctx, seconds=TIMEOUT_S)
        assert result == {"FINISHED"}, op.reports
        assert op.reports[-1] == ({"INFO"}, "drape: 2 garments baked")
        assert_cleaned_up(ctx)
        for ob, count in ((garment, sc.frame_end - FIRST + 1), (second, 7)):
            _, _, frames = read_pc2(ob.modifiers["Drape"].filepath)
            assert len(frames) == count, ob.name
    finally:
        bpy.data.objects.remove(second)
