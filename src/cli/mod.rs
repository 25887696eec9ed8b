//! The command-line layer: flags, checked settings, progress and the commands. It may use
//! every library module; nothing in the library uses it.
pub mod args;
pub mod batch;
pub mod bench;
pub mod calibrate;
pub mod control;
pub mod inspect;
pub mod interrupt;
pub mod process;
pub mod progress;
pub mod report;
pub mod settings;
pub mod simulate;

pub use args::{Cli, Command};

use crate::error::{Error, Result};

/// Runs a parsed command line.
pub fn run(cli: &Cli) -> Result<()> {
    let json = json_errors(cli);
    match &cli.command {
        Command::Simulate(a) => with_threads(a.threads, json, || simulate::run(a)),
        Command::Control(a) => with_threads(a.sim.threads, json, || control::run(a)),
        Command::Inspect(a) => inspect::run(a),
        Command::Bench(a) => with_threads(a.threads, json, || bench::run(a)),
        Command::Batch(a) => batch::run(a),
        Command::Calibrate(a) => with_threads(None, false, || calibrate::run(a)),
    }
}

/// True if errors should be printed as JSON progress events.
pub fn json_errors(cli: &Cli) -> bool {
    match &cli.command {
        Command::Simulate(a) => a.progress == args::ProgressMode::Json,
        Command::Control(a) => a.sim.progress == args::ProgressMode::Json,
        _ => false,
    }
}

/// True if the raw command line asks for JSON progress (`--progress json` or
/// `--progress=json`): used for errors found before the flags parse.
pub fn json_requested(args: &[String]) -> bool {
    args.windows(2)
        .any(|w| w[0] == "--progress" && w[1] == "json")
        || args.iter().any(|a| a == "--progress=json")
}

/// Runs `f` on a rayon pool of [`worker_threads`] workers.
fn with_threads<T>(
    threads: Option<usize>,
    json: bool,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T>
where
    T: Send,
{
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (n, warning) = worker_threads(threads, available)?;
    if let Some(w) = warning {
        progress::print_warning(json, &w);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| Error::Internal(format!("cannot start worker threads: {e}")))?;
    pool.install(f)
}

/// The worker count for `--threads` when the process may use `available` processors
/// (`std::thread::available_parallelism`: the machine's cores, less what the CPU affinity
/// mask or a cgroup quota withholds): all of them by default; a larger request is capped
/// to them, with a warning, since more threads than processors only make the workers
/// wait for each other (the caches are the same for any count).
fn worker_threads(threads: Option<usize>, available: usize) -> Result<(usize, Option<String>)> {
    match threads {
        None => Ok((available, None)),
        Some(0) => Err(Error::usage("--threads must be at least 1")),
        Some(n) if n > available => Ok((
            available,
            Some(format!(
                "--threads {n} is more than the {available} processors this process may use; \
                 using {available}"
            )),
        )),
        Some(n) => Ok((n, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::worker_threads;

    #[test]
    fn threads_default_to_the_available_processors_and_are_capped_to_them() {
        assert_eq!(worker_threads(None, 2).unwrap(), (2, None));
        assert_eq!(worker_threads(Some(1), 2).unwrap(), (1, None));
        let (n, warning) = worker_threads(Some(100_000), 2).unwrap();
        assert_eq!(n, 2);
        assert!(warning.unwrap().contains("--threads 100000"));
        assert!(worker_threads(Some(0), 2).is_err());
    }
}
