//! Open Job Description (the job format of AWS Deadline Cloud, run locally by `openjd
//! run`): a job template, specification `jobtemplate-2023-09`, with one step `Bake` whose
//! task parameter `Shot` ranges over the shots' names.
//!
//! ```text
//! steps: - name: Bake
//!          parameterSpace.taskParameterDefinitions: [{name: Shot, type: STRING, range: [names]}]
//!          script.embeddedFiles: bake.sh — case "$1" in <name>) exec drape simulate ... ;; esac
//!          script.actions.onRun: {{Task.File.Bake}} {{Task.Param.Shot}}
//!                                cancelation NOTIFY_THEN_TERMINATE (SIGTERM: drape stops
//!                                within a second, keeps its partial cache, exit 130)
//! ```
//! Submit with `deadline bundle submit` (after placing the template in a job bundle) or
//! run here with `openjd run <stem>.openjd.json --step Bake`.
use super::{case_table, job_name};
use crate::batch::manifest::Manifest;
use crate::error::{Error, Result};
use serde_json::json;
use std::path::Path;

/// Seconds between the cancel request (SIGTERM) and SIGKILL; drape needs one.
const NOTIFY_SECONDS: u32 = 30;

/// The job template of `manifest`, its tasks running `binary`, as JSON text.
pub fn template(manifest: &Manifest, binary: &Path) -> Result<String> {
    let case = case_table(manifest, binary, "$1", |_, s| s.name.clone(), "")?;
    let script = format!(
        "#!/bin/sh\n# One shot of the drape batch {}, named by the first argument.\n{case}",
        manifest.path.display()
    );
    if script.contains("{{") {
        return Err(Error::input(
            &manifest.path,
            None,
            "a path or option holds '{{', which Open Job Description reads as a format \
             string; rename it",
        ));
    }
    let names: Vec<&str> = manifest.shots.iter().map(|s| s.name.as_str()).collect();
    let t = json!({
        "specificationVersion": "jobtemplate-2023-09",
        "name": format!("drape batch {}", job_name(manifest)),
        "steps": [{
            "name": "Bake",
            "parameterSpace": {
                "taskParameterDefinitions": [{"name": "Shot", "type": "STRING", "range": names}]
            },
            "script": {
                "embeddedFiles": [{
                    "name": "Bake", "type": "TEXT", "filename": "bake.sh", "runnable": true,
                    "data": script,
                }],
                "actions": {"onRun": {
                    "command": "{{Task.File.Bake}}",
                    "args": ["{{Task.Param.Shot}}"],
                    "cancelation": {
                        "mode": "NOTIFY_THEN_TERMINATE",
                        "notifyPeriodInSeconds": NOTIFY_SECONDS,
                    },
                }},
            },
        }],
    });
    serde_json::to_string_pretty(&t)
        .map(|s| s + "\n")
        .map_err(|e| Error::Internal(format!("OpenJD template: {e}")))
}
