//! What a local batch tells at the end: a table of its shots (stdout), a JSON summary
//! (docs/reference.md, "Batch manifest") and one exit code for the whole batch.
//!
//! ```text
//! { "manifest": path, "jobs": N, "threads_per_job": T, "elapsed_s": s,
//!   "exit_code": code, "stopped": bool,
//!   "shots": [{ "name", "status": "ok"|"done"|"failed"|"interrupted"|"not run",
//!               "exit_code", "frames", "seconds", "max_strain", "error", "log", "report" }] }
//! ```
//! The batch's exit code: 0 when every shot is `ok` or `done`; 130 when the batch itself
//! was stopped; otherwise the most severe code of a failed shot, in the order 1 (an
//! internal error, or a shot killed by a signal) > 3 (simulation failed or the disk
//! filled) > 2 (bad input) > 130 (a shot stopped by someone else).
use super::local::{ShotResult, Status};
use serde_json::{json, Value};
use std::fmt::Write;

/// The batch's exit code for `results` (`stopped`: the batch was asked to stop).
pub fn exit_code(results: &[ShotResult], stopped: bool) -> i32 {
    if stopped {
        return 130;
    }
    let rank = |code: i32| match code {
        3 => 3,
        2 => 2,
        130 => 1,
        _ => 4,
    };
    (results.iter())
        .filter(|r| !matches!(r.status, Status::Ok | Status::Done))
        .filter_map(|r| r.exit_code)
        .max_by_key(|&c| rank(c))
        .map_or(0, |c| if rank(c) == 4 { 1 } else { c })
}

/// The table of shots: name, status, exit code, frames, seconds, worst stretch (%).
pub fn table(results: &[ShotResult]) -> String {
    let width = (results.iter().map(|r| r.name.len()))
        .chain([4])
        .max()
        .unwrap_or(4);
    let mut t = format!(
        "{:<width$}  {:<11}  {:>4}  {:>6}  {:>8}  {:>13}\n",
        "shot", "status", "exit", "frames", "seconds", "worst stretch"
    );
    let dash = || "-".to_string();
    for r in results {
        let _ = writeln!(
            t,
            "{:<width$}  {:<11}  {:>4}  {:>6}  {:>8}  {:>13}",
            r.name,
            r.status.as_str(),
            r.exit_code.map_or_else(dash, |c| c.to_string()),
            r.frames.map_or_else(dash, |n| n.to_string()),
            if r.status == Status::Done || r.status == Status::NotRun {
                dash()
            } else {
                format!("{:.1}", r.seconds)
            },
            r.max_strain
                .map_or_else(dash, |s| format!("{:.1} %", 100.0 * s)),
        );
    }
    t
}

/// How the batch ran, for [`summary`].
#[derive(Debug, Clone, PartialEq)]
pub struct Totals {
    /// The manifest, as given.
    pub manifest: String,
    /// Shots at once.
    pub jobs: usize,
    /// Threads of each shot.
    pub threads_per_job: usize,
    /// Wall-clock seconds of the whole batch.
    pub elapsed_s: f64,
    /// The batch was asked to stop.
    pub stopped: bool,
}

/// The JSON summary.
pub fn summary(results: &[ShotResult], totals: &Totals) -> Value {
    let shots: Vec<Value> = (results.iter())
        .map(|r| {
            json!({
                "name": r.name, "status": r.status.as_str(), "exit_code": r.exit_code,
                "frames": r.frames, "seconds": r.seconds, "max_strain": r.max_strain,
                "error": r.error, "log": r.log.display().to_string(),
                "report": r.report.display().to_string(),
            })
        })
        .collect();
    json!({
        "manifest": totals.manifest, "jobs": totals.jobs,
        "threads_per_job": totals.threads_per_job, "elapsed_s": totals.elapsed_s,
        "exit_code": exit_code(results, totals.stopped), "stopped": totals.stopped,
        "shots": shots,
    })
}
