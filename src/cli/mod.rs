//! The command-line layer: flags, checked settings, progress and the commands. It may use
//! every library module; nothing in the library uses it.
pub mod args;
pub mod bench;
pub mod control;
pub mod inspect;
pub mod interrupt;
pub mod progress;
pub mod report;
pub mod settings;
pub mod simulate;

pub use args::{Cli, Command};

use crate::error::{Error, Result};

/// Runs a parsed command line.
pub fn run(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Simulate(a) => with_threads(a.threads, || simulate::run(a)),
        Command::Control(a) => with_threads(a.sim.threads, || control::run(a)),
        Command::Inspect(a) => inspect::run(a),
        Command::Bench(a) => with_threads(a.threads, || bench::run(a)),
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

/// Runs `f` on a rayon pool of `threads` workers (all cores when `None`).
fn with_threads<T>(threads: Option<usize>, f: impl FnOnce() -> Result<T> + Send) -> Result<T>
where
    T: Send,
{
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            return Err(Error::usage("--threads must be at least 1"));
        }
        builder = builder.num_threads(n);
    }
    let pool = builder
        .build()
        .map_err(|e| Error::Internal(format!("cannot start worker threads: {e}")))?;
    pool.install(f)
}
