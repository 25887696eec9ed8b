//! The one error type of drape: what failed, which file and object, and what to do.
//!
//! Every error maps to an exit code of docs/reference.md ("Exit codes") through
//! [`Error::exit_code`]; `main.rs` prints the message once and exits with that code.
use std::path::{Path, PathBuf};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, grouped by the exit code the CLI reports for it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input or usage (exit 2). The message names the file, the object and the fix.
    #[error("{file}{object}: {message}", file = display_file(.file), object = display_object(.object))]
    Input {
        /// The offending file, if any.
        file: Option<PathBuf>,
        /// The offending object (mesh, node, prim), if any.
        object: Option<String>,
        /// What is wrong and what to do about it.
        message: String,
    },
    /// The simulation could not proceed (exit 3); a partial cache is kept.
    #[error("simulation failed: {0}")]
    Simulation(String),
    /// The run was interrupted (exit 130); a partial cache is kept.
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// An I/O failure while writing output (exit 3 when the disk, a quota or the file size
    /// limit is full; exit 2 otherwise: the output location is unusable).
    #[error("{path}: {source}; check that the directory exists, is writable and has free space")]
    Output {
        /// The file being written.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// A bug in drape (exit 1).
    #[error("internal error: {0}")]
    Internal(String),
}

fn display_file(file: &Option<PathBuf>) -> String {
    match file {
        Some(p) => p.display().to_string(),
        None => "drape".to_string(),
    }
}

fn display_object(object: &Option<String>) -> String {
    match object {
        Some(o) => format!(" (object '{o}')"),
        None => String::new(),
    }
}

impl Error {
    /// An input error about `file`, optionally naming the object inside it.
    pub fn input(file: &Path, object: Option<&str>, message: impl Into<String>) -> Self {
        Error::Input {
            file: Some(file.to_path_buf()),
            object: object.map(str::to_string),
            message: message.into(),
        }
    }

    /// A usage error not tied to a file (bad flag values and the like).
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Input {
            file: None,
            object: None,
            message: message.into(),
        }
    }

    /// The process exit code (docs/reference.md, "Exit codes") for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Output { source, .. } if out_of_space(source) => 3,
            Error::Input { .. } | Error::Output { .. } => 2,
            Error::Simulation(_) => 3,
            Error::Interrupted(_) => 130,
            Error::Internal(_) => 1,
        }
    }
}

/// True for a write that failed for lack of room: a full disk (`ENOSPC`), a quota
/// (`EDQUOT`) or the file size limit (`EFBIG`, `ulimit -f`).
fn out_of_space(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
    matches!(e.kind(), StorageFull | QuotaExceeded | FileTooLarge)
}
