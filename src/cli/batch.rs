//! `drape batch`: the manifest read, then either the scheduler's job written
//! ([`crate::batch::emit`]) or the shots baked here ([`crate::batch::local`]) with a line
//! per finished shot on stderr, the table on stdout, the JSON summary written and the
//! batch's exit code ([`crate::batch::summary::exit_code`]) returned as the matching error.
use super::args::BatchArgs;
use super::{interrupt, process};
use crate::batch::{emit, plan, summary, Engine, Layout, LocalBatch, Manifest, ShotResult};
use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Runs `drape batch`.
pub fn run(args: &BatchArgs) -> Result<()> {
    let manifest = Manifest::read(&args.manifest)?;
    let binary = std::env::current_exe()
        .map_err(|e| Error::Internal(format!("cannot find drape's own executable: {e}")))?;
    if let Some(e) = &args.emit {
        let (engine, dir) = (engine(&e[0])?, Path::new(&e[1]));
        for file in emit::write(engine, &manifest, &binary, dir)? {
            process::print(&format!("{}\n", file.display()))?;
        }
        return Ok(());
    }
    if args.jobs == 0 {
        return Err(Error::usage("--jobs must be at least 1"));
    }
    let layout = Layout::new(&manifest, args.summary.as_deref());
    check_writable(&layout.summary)?;
    interrupt::install(false);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let batch = LocalBatch {
        manifest: &manifest,
        binary,
        jobs: args.jobs,
        threads: plan::threads_per_job(cores, args.jobs),
        force: args.force,
        layout,
    };
    let started = Instant::now();
    let results = batch.run(&interrupt::stop(), tell)?;
    let totals = summary::Totals {
        manifest: args.manifest.display().to_string(),
        jobs: batch.jobs,
        threads_per_job: batch.threads,
        elapsed_s: started.elapsed().as_secs_f64(),
        stopped: interrupt::requested(),
    };
    process::print(&summary::table(&results))?;
    let json = summary::summary(&results, &totals);
    let text = serde_json::to_string_pretty(&json)
        .map_err(|e| Error::Internal(format!("batch summary: {e}")))?;
    std::fs::write(&batch.layout.summary, text + "\n").map_err(|source| Error::Output {
        path: batch.layout.summary.clone(),
        source,
    })?;
    outcome(&results, &totals, &batch.layout)
}

/// `openjd`, `slurm` or `opencue`.
fn engine(name: &str) -> Result<Engine> {
    match name.to_ascii_lowercase().as_str() {
        "openjd" => Ok(Engine::OpenJd),
        "slurm" => Ok(Engine::Slurm),
        "opencue" => Ok(Engine::OpenCue),
        _ => Err(Error::usage(format!(
            "--emit '{name}' is not a scheduler drape writes jobs for; use openjd, slurm or \
             opencue, then the folder: --emit slurm farm/"
        ))),
    }
}

/// One line on stderr per shot as it ends (a failed write is ignored: nobody reads it).
fn tell(r: &ShotResult) {
    let mut line = format!("{}: {}", r.name, r.status.as_str());
    if let Some(c) = r.exit_code {
        line.push_str(&format!(" (exit {c}, {:.1} s)", r.seconds));
    }
    if let Some(e) = &r.error {
        line.push_str(&format!(": {e}"));
    }
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Checks before any bake that the summary can be written.
fn check_writable(path: &Path) -> Result<()> {
    let probe = if path.is_dir() {
        Err(std::io::Error::other("it is a directory"))
    } else {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map(drop)
    };
    probe.map_err(|e| {
        Error::input(
            path,
            None,
            format!("cannot write the batch summary there ({e}); choose another --summary"),
        )
    })
}

/// The batch's exit code as the error that carries it, naming the shots that failed.
fn outcome(results: &[ShotResult], totals: &summary::Totals, layout: &Layout) -> Result<()> {
    let code = summary::exit_code(results, totals.stopped);
    let failed: Vec<String> = (results.iter())
        .filter(|r| r.exit_code.is_some_and(|c| c != 0))
        .map(|r| format!("{} (exit {})", r.name, r.exit_code.unwrap_or(0)))
        .collect();
    let message = format!(
        "{} of {} shots did not finish: {}; their logs are in {}, the summary is {}",
        failed.len(),
        results.len(),
        failed.join(", "),
        layout.logs.display(),
        layout.summary.display()
    );
    match code {
        0 => Ok(()),
        130 if totals.stopped => Err(Error::Interrupted(format!(
            "stopped by a signal; the stopped shots keep their partial caches and a new \
             `drape batch` continues them ({message})"
        ))),
        130 => Err(Error::Interrupted(message)),
        2 => Err(Error::Input {
            file: None,
            object: None,
            message,
        }),
        3 => Err(Error::Simulation(message)),
        _ => Err(Error::Internal(message)),
    }
}
