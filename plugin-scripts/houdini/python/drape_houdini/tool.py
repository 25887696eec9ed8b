"""The `hou`-calling lines of the drape shelf tool: select the garment SOP, then the body
SOPs; the tool saves them to `.geo` (`hou.Geometry.saveToFile`), runs `drape simulate` inside
a `hou.InterruptableOperation` with progress from the JSON lines (`runner.Job`), and loads
the result: a `.geo` sequence with a File SOP, or an Alembic archive with an Alembic SOP."""
import os
import time

import hou

from . import runner


def simulate(kwargs=None):
    nodes = [n for n in hou.selectedNodes() if isinstance(n, hou.SopNode)]
    if not nodes:
        raise hou.Error("Select the garment SOP, then the body SOPs")
    garment, bodies = nodes[0], nodes[1:]
    first, last = (int(f) for f in hou.playbar.frameRange())
    work = hou.text.expandString("$HIP/drape")
    choice = hou.ui.displayMessage("drape cache format", buttons=(".geo sequence", "Alembic"))
    cache_format = "abc" if choice == 1 else "geo"
    files = runner.houdini_job_files(work, garment.name(), [b.name() for b in bodies],
                                     cache_format)
    os.makedirs(os.path.dirname(files["out"]), exist_ok=True)
    garment.geometryAtFrame(first).saveToFile(files["garment"])
    for body, pattern in zip(bodies, files["bodies"]):
        for f in range(first, last + 1):
            body.geometryAtFrame(f).saveToFile(runner.frame_file(pattern, f))
    runner.scene_file(files["scene"], {"file": files["garment"], "name": files["name"],
                      "out": files["out"]}, [{"file": p} for p in files["bodies"]],
                      (first, last), hou.fps())
    binary = runner.find_binary(os.environ.get("DRAPE_BIN", ""))
    job = runner.Job(runner.simulate_command(binary, files["scene"], files["out"]))
    job.start()
    with hou.InterruptableOperation("drape", long_operation_name="drape: " + garment.name(),
                                    open_interrupt_dialog=True) as op:
        try:
            while not job.finished:
                job.poll()
                op.updateLongProgress(job.progress.fraction, job.progress.status)
                time.sleep(0.1)
        except hou.OperationInterrupted:
            job.cancel()
    code = job.wait()
    if code != runner.EXIT_OK:
        runner.promote_partial_frames(files["out"])
    if cache_format == "abc":
        reader = garment.parent().createNode("alembic", garment.name() + "_drape")
        reader.parm("fileName").set(files["out"])
    else:
        reader = garment.parent().createNode("file", garment.name() + "_drape")
        reader.parm("file").set(files["out"])
    reader.setPosition(garment.position() + hou.Vector2(0, -1.5))
    reader.setDisplayFlag(True)
    if job.error():
        hou.ui.displayMessage(job.error(), severity=hou.severityType.Warning)
