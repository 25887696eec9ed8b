//! OpenCue (the Academy Software Foundation's render farm): a Python submission script
//! using pyoutline (PyPI `opencue-pyoutline`) that builds an outline with one one-frame
//! Shell layer per shot, named after the shot, its command the shot's `drape simulate`.
//!
//! `python3 <stem>_opencue.py` submits it to the Cuebot that opencue's configuration names
//! (`OPENCUE_HOSTS` or `opencue.yaml`); `--serialize` prints the job spec (the XML
//! Cuebot receives) without a server; `--show`, `--shot` and `--user` set the job's.
use super::{job_name, sh_line, task_command};
use crate::batch::manifest::Manifest;
use crate::error::{Error, Result};
use std::path::Path;

/// The submission script of `manifest`, its layers running `binary`.
pub fn script(manifest: &Manifest, binary: &Path) -> Result<String> {
    let mut shots = String::new();
    for shot in &manifest.shots {
        let line = sh_line(&task_command(shot, binary)?);
        let entry = serde_json::to_string(&(shot.name.as_str(), line))
            .map_err(|e| Error::Internal(format!("OpenCue script: {e}")))?;
        shots.push_str(&format!("    {entry},\n"));
    }
    let manifest_path = serde_json::to_string(&manifest.path.display().to_string())
        .map_err(|e| Error::Internal(format!("OpenCue script: {e}")))?;
    Ok(format!(
        r#"#!/usr/bin/env python3
"""Submits the drape batch {manifest_path} to OpenCue: one layer per shot, each one frame
running `drape simulate ...` that continues an interrupted bake of its shot.

    python3 {name}_opencue.py [--show SHOW] [--shot SHOT] [--user USER]   submit
    python3 {name}_opencue.py --serialize                                 print the job spec

Exit codes of a layer's frame: 0 done, 2 bad input, 3 simulation failed, 130 interrupted
(retry it). Needs PyPI opencue-pyoutline; submitting needs a Cuebot (OPENCUE_HOSTS).
"""
import argparse
import getpass

import outline
import outline.cuerun
import outline.modules.shell

JOB = "drape-{name}"
# (shot, shell command line)
SHOTS = [
{shots}]


def build(show, shot, user):
    """The outline: one Shell layer per shot, a single frame each."""
    ol = outline.Outline(JOB, show=show, shot=shot, user=user)
    for name, command in SHOTS:
        ol.add_layer(
            outline.modules.shell.Shell(
                name, command=command, range="1", chunk=1, threadable=True
            )
        )
    return ol


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", default="testing")
    parser.add_argument("--shot", default="{name}")
    parser.add_argument("--user", default=getpass.getuser())
    parser.add_argument(
        "--serialize", action="store_true", help="print the job spec, submit nothing"
    )
    args = parser.parse_args()
    ol = build(args.show, args.shot, args.user)
    launcher = outline.cuerun.OutlineLauncher(ol)
    if args.serialize:
        print(launcher.serialize(use_pycuerun=False))
    else:
        for job in launcher.launch(use_pycuerun=False):
            print("submitted", job.name())


if __name__ == "__main__":
    main()
"#,
        name = job_name(manifest),
    ))
}
