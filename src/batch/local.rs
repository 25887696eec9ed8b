//! A batch baked on this machine: each shot a child `drape simulate` process, `jobs` at a
//! time, so that a shot that crashes or is killed fails alone.
//!
//! ```text
//! for each shot   finished already (and not forced)?  → Status::Done, not run
//! loop            start shots while fewer than `jobs` run, each with
//!                   --threads max(1, cores / jobs) --progress json --report <logs>/<shot>.report.json
//!                   and its stdout and stderr in <logs>/<shot>.log
//!                 reap the shots that ended: exit code, frames written and worst stretch
//!                   from the report, else from the log's last `frame` event
//!                 stop requested? → SIGTERM to every running shot (each stops within a
//!                   second and keeps its partial cache), start no other
//! ```
//! Each child runs in its own process group (a terminal's Ctrl-C reaches the batch, which
//! passes it on once) and, on Linux, gets SIGTERM if the batch process dies.
use super::manifest::{Manifest, Shot};
use super::plan::{continue_flags, create_output_dirs, finished, simulate_args, Layout};
use crate::error::{Error, Result};
use crate::stop::Stop;
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How often the batch looks at its children and the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// How a shot of the batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Its output was finished before the batch started; not run again.
    Done,
    /// Baked now (exit code 0).
    Ok,
    /// Its bake failed (exit code 1, 2 or 3, or killed by a signal).
    Failed,
    /// Its bake was stopped (exit code 130); its partial cache is kept.
    Interrupted,
    /// Never started: the batch was stopped first.
    NotRun,
}

impl Status {
    /// The word the table and the summary use.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
            Status::NotRun => "not run",
        }
    }
}

/// What one shot of the batch did.
#[derive(Debug, Clone, PartialEq)]
pub struct ShotResult {
    /// The shot's name.
    pub name: String,
    /// How it ended.
    pub status: Status,
    /// The child's exit code (128 + the signal number for one killed by a signal); none
    /// for a shot not run.
    pub exit_code: Option<i32>,
    /// Samples in its cache (finished or partial), if known.
    pub frames: Option<usize>,
    /// Wall-clock seconds of its bake (0 for a shot not run).
    pub seconds: f64,
    /// Worst stretch strain of the bake, max |‖w‖ − 1| over triangles and frames, if known.
    pub max_strain: Option<f64>,
    /// The last error line of its log, for a failed shot.
    pub error: Option<String>,
    /// Its log and report files.
    pub log: PathBuf,
    /// Its `--report` file.
    pub report: PathBuf,
}

/// A local run of a manifest's shots.
#[derive(Debug, Clone)]
pub struct LocalBatch<'a> {
    /// The shots.
    pub manifest: &'a Manifest,
    /// The `drape` binary each shot runs (the batch's own executable).
    pub binary: PathBuf,
    /// Shots baked at once (≥ 1).
    pub jobs: usize,
    /// Worker threads of each shot.
    pub threads: usize,
    /// Bake every shot again from its first frame, finished or not.
    pub force: bool,
    /// Where logs, reports and the summary go.
    pub layout: Layout,
}

struct Running {
    index: usize,
    child: Child,
    started: Instant,
}

impl LocalBatch<'_> {
    /// Bakes the shots; `on_end` sees each shot as it ends (in the order they end). The
    /// results come back in the manifest's order. A stop request ends the running shots
    /// (SIGTERM) and starts no other; their results say so.
    pub fn run(&self, stop: &Stop, mut on_end: impl FnMut(&ShotResult)) -> Result<Vec<ShotResult>> {
        std::fs::create_dir_all(&self.layout.logs).map_err(|source| Error::Output {
            path: self.layout.logs.clone(),
            source,
        })?;
        create_output_dirs(self.manifest)?;
        let shots = &self.manifest.shots;
        let mut results: Vec<Option<ShotResult>> = vec![None; shots.len()];
        let mut pending = VecDeque::new();
        for (i, shot) in shots.iter().enumerate() {
            if !self.force && finished(shot, &self.layout.report(shot)) {
                let r = self.result(shot, Status::Done, None, 0.0);
                on_end(&r);
                results[i] = Some(r);
            } else {
                pending.push_back(i);
            }
        }
        let mut running: Vec<Running> = Vec::new();
        let mut stopping = false;
        loop {
            if stop.requested() && !stopping {
                stopping = true;
                for r in &running {
                    terminate(&r.child);
                }
            }
            while !stopping && running.len() < self.jobs {
                let Some(i) = pending.pop_front() else { break };
                match self.start(&shots[i]) {
                    Ok(child) => running.push(Running {
                        index: i,
                        child,
                        started: Instant::now(),
                    }),
                    Err(e) => {
                        let mut r = self.result(&shots[i], Status::Failed, Some(1), 0.0);
                        r.error = Some(e.to_string());
                        on_end(&r);
                        results[i] = Some(r);
                    }
                }
            }
            let mut k = 0;
            while k < running.len() {
                let status = running[k].child.try_wait().map_err(|e| {
                    Error::Internal(format!("cannot wait for a shot's process: {e}"))
                })?;
                match status {
                    Some(status) => {
                        let done = running.swap_remove(k);
                        let shot = &shots[done.index];
                        let r = self.ended(shot, status, done.started.elapsed().as_secs_f64());
                        on_end(&r);
                        results[done.index] = Some(r);
                    }
                    None => k += 1,
                }
            }
            if running.is_empty() && (stopping || pending.is_empty()) {
                break;
            }
            std::thread::sleep(POLL);
        }
        Ok(shots
            .iter()
            .zip(results)
            .map(|(shot, r)| r.unwrap_or_else(|| self.result(shot, Status::NotRun, None, 0.0)))
            .collect())
    }

    /// Starts `shot`'s bake.
    fn start(&self, shot: &Shot) -> Result<Child> {
        let log_path = self.layout.log(shot);
        let output = |source| Error::Output {
            path: log_path.clone(),
            source,
        };
        let log = std::fs::File::create(&log_path).map_err(output)?;
        let err = log.try_clone().map_err(output)?;
        let report = self.layout.report(shot);
        let _ = std::fs::remove_file(&report);
        let mut cmd = Command::new(&self.binary);
        cmd.args(simulate_args(shot, continue_flags(self.force)))
            .arg("--threads")
            .arg(self.threads.to_string())
            .args(["--progress", "json", "--report"])
            .arg(&report)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        stop_with_parent(&mut cmd);
        cmd.spawn().map_err(|e| {
            Error::Internal(format!(
                "cannot start {} for shot '{}': {e}",
                self.binary.display(),
                shot.name
            ))
        })
    }

    /// The result of `shot`, whose process ended with `status` after `seconds`.
    fn ended(&self, shot: &Shot, status: ExitStatus, seconds: f64) -> ShotResult {
        let code = exit_code(status);
        let s = match code {
            0 => Status::Ok,
            130 => Status::Interrupted,
            _ => Status::Failed,
        };
        let mut r = self.result(shot, s, Some(code), seconds);
        let report = read_json(&r.report);
        let events = log_events(&r.log);
        r.frames = (report.as_ref())
            .and_then(|v| v["frames_written"].as_u64())
            .or_else(|| {
                (events.iter().rev())
                    .find(|e| e["event"] == "frame")
                    .and_then(|e| e["done"].as_u64())
            })
            .map(|n| n as usize);
        r.max_strain = report.as_ref().and_then(|v| {
            (v["per_frame"].as_array()?.iter())
                .filter_map(|f| f["max_strain"].as_f64())
                .reduce(f64::max)
        });
        if s != Status::Ok {
            r.error = (events.iter().rev())
                .find(|e| e["event"] == "error")
                .and_then(|e| e["message"].as_str().map(str::to_string))
                .or_else(|| {
                    status
                        .code()
                        .is_none()
                        .then(|| format!("killed by signal {}", code - 128))
                });
        }
        r
    }

    fn result(&self, shot: &Shot, status: Status, code: Option<i32>, seconds: f64) -> ShotResult {
        ShotResult {
            name: shot.name.clone(),
            status,
            exit_code: code,
            frames: None,
            seconds,
            max_strain: None,
            error: None,
            log: self.layout.log(shot),
            report: self.layout.report(shot),
        }
    }
}

/// The exit code of a process, 128 + N for one killed by signal N (as shells report it).
fn exit_code(status: ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return 128 + sig;
        }
    }
    status.code().unwrap_or(1)
}

/// Asks `child` to stop (SIGTERM: it stops within a second and keeps its partial cache).
fn terminate(child: &Child) {
    #[cfg(unix)]
    {
        // SAFETY: kill(2) on the id of a child not yet reaped (so not reused).
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
}

/// Puts the child in its own process group, so that a Ctrl-C on the terminal reaches the
/// batch alone, which passes one SIGTERM on (two signals would stop a bake at once rather
/// than at its next frame), and, on Linux, makes it receive SIGTERM when the batch process
/// dies (a second Ctrl-C, a SIGKILL), so that no bake runs on unwatched.
fn stop_with_parent(cmd: &mut Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl(2) is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The JSON events of a shot's log (other lines skipped).
fn log_events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
