//! Batches of shots (`drape batch MANIFEST.json`): a manifest of shots ([`manifest`]),
//! baked here `--jobs N` at a time as child `drape simulate` processes ([`local`],
//! reported by [`summary`]), or written out as a job for a render-farm scheduler
//! ([`emit`]: Open Job Description, Slurm, OpenCue).
//!
//! A shot cannot be split into frame ranges (each frame needs the one before), so a shot
//! is the unit of work everywhere: one child process, one farm task. Every shot's command
//! line is made in one place ([`plan::simulate_args`]) and ends with the flag that makes
//! a rerun continue an interrupted bake ([`plan::continue_flags`]).
pub mod emit;
pub mod local;
pub mod manifest;
pub mod plan;
pub mod summary;

#[cfg(test)]
mod tests;

pub use emit::Engine;
pub use local::{LocalBatch, ShotResult, Status};
pub use manifest::{Manifest, Shot};
pub use plan::Layout;
