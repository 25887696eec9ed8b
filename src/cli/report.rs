//! `--report FILE`: the per-frame solver figures of a bake as JSON (docs/reference.md, "Run report").
//!
//! ```text
//! { "command": "simulate", "scene": ..., "frames": [A, B], "fps": F,
//!   "status": "ok" | "interrupted" | "failed" | "error", "error": message (if not ok),
//!   "exit_code": 0 | 2 | 3 | 130 | 1,
//!   "garments": [{"name", "vertices", "triangles", "output_points"}],
//!   "outputs": [final caches, or the partial caches left by a stopped bake],
//!   "frames_written": samples in each cache,
//!   "per_frame": [{ "frame", "seconds", "steps", "rejections", "cg_iterations",
//!                   "max_residual", "min_step", "definite_fallbacks", "contacts",
//!                   "max_strain", "garments": [the same per garment, with "name"] }],
//!   "iterations": [{ "garment", "iteration", "objective", "keyframe_error",
//!                    "force_term", "gradient_norm", "evaluations", "seconds" }]  (control),
//!   "trouble": where a failed frame failed, "tears": [where each garment tore] (both:
//!              { "garment", "frame", "cause", "particles", "vertices", "body",
//!                "body_speed", "strain" }),
//!   "elapsed_s": wall-clock seconds of the command }
//! ```
//! `per_frame` has one entry per simulated frame (B − A of them after a full bake: the
//! first sample is the garment as given). The report is written whatever the outcome, so
//! a failed or interrupted bake still documents the frames it finished.
use crate::error::{Error, Result};
use crate::pipeline::FrameStats;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The report being collected.
#[derive(Debug)]
pub struct Report {
    path: PathBuf,
    head: serde_json::Map<String, Value>,
    per_frame: Vec<Value>,
    iterations: Vec<Value>,
    outputs: Vec<String>,
    frames_written: usize,
}

impl Report {
    /// A report to be written to `path` about `scene`.
    pub fn new(path: &Path, scene: &Path) -> Self {
        let mut head = serde_json::Map::new();
        head.insert("command".into(), json!("simulate"));
        head.insert("scene".into(), json!(scene.display().to_string()));
        Report {
            path: path.to_path_buf(),
            head,
            per_frame: Vec::new(),
            iterations: Vec::new(),
            outputs: Vec::new(),
            frames_written: 0,
        }
    }

    /// Checks before any work that `path` can be written: an existing file is opened for
    /// writing (not emptied), a new one created and removed again. A usage error naming
    /// the path otherwise, so that a bake never finishes only to lose its report.
    pub fn check(path: &Path) -> Result<()> {
        let probe = if path.is_dir() {
            Err(std::io::Error::other("it is a directory"))
        } else if path.exists() {
            std::fs::OpenOptions::new().write(true).open(path).map(drop)
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .and_then(|_| std::fs::remove_file(path))
        };
        probe.map_err(|e| {
            Error::input(
                path,
                None,
                format!("cannot write the report there ({e}); choose another --report path"),
            )
        })
    }

    /// Sets a top-level field (`frames`, `fps`, `garments`).
    pub fn set(&mut self, key: &str, value: Value) {
        self.head.insert(key.to_string(), value);
    }

    /// Appends `value` to the top-level list `key` (`tears`), creating it.
    pub fn append(&mut self, key: &str, value: Value) {
        match self.head.get_mut(key) {
            Some(Value::Array(list)) => list.push(value),
            _ => {
                self.head.insert(key.to_string(), Value::Array(vec![value]));
            }
        }
    }

    /// One simulated frame: the figures summed over garments, and each garment's.
    pub fn frame(&mut self, frame: i32, seconds: f64, garments: &[(&str, FrameStats)]) {
        let total = crate::bake::sum(garments.iter().map(|(_, s)| s));
        let mut entry = stats_json(&total);
        entry.insert("frame".into(), json!(frame));
        entry.insert("seconds".into(), json!(seconds));
        entry.insert(
            "garments".into(),
            garments
                .iter()
                .map(|(name, s)| {
                    let mut g = stats_json(s);
                    g.insert("name".into(), json!(name));
                    Value::Object(g)
                })
                .collect(),
        );
        self.per_frame.push(Value::Object(entry));
    }

    /// One optimisation iteration of `drape control` (its fields as given).
    pub fn iteration(&mut self, entry: Value) {
        self.iterations.push(entry);
    }

    /// The caches the bake produced (or left partial) and their sample count.
    pub fn outputs(&mut self, outputs: Vec<String>, frames_written: usize) {
        self.outputs = outputs;
        self.frames_written = frames_written;
    }

    /// Writes the report with the bake's outcome.
    pub fn write(mut self, outcome: &Result<()>, elapsed_s: f64) -> Result<()> {
        let (status, code) = match outcome {
            Ok(()) => ("ok", 0),
            Err(Error::Interrupted(_)) => ("interrupted", 130),
            Err(Error::Simulation(_)) => ("failed", 3),
            Err(e) => ("error", e.exit_code()),
        };
        self.head.insert("status".into(), json!(status));
        self.head.insert("exit_code".into(), json!(code));
        if let Err(e) = outcome {
            self.head.insert("error".into(), json!(e.to_string()));
        }
        self.head.insert("outputs".into(), json!(self.outputs));
        self.head
            .insert("frames_written".into(), json!(self.frames_written));
        self.head
            .insert("per_frame".into(), Value::Array(self.per_frame));
        if !self.iterations.is_empty() {
            self.head
                .insert("iterations".into(), Value::Array(self.iterations));
        }
        self.head.insert("elapsed_s".into(), json!(elapsed_s));
        let text = serde_json::to_string_pretty(&Value::Object(self.head))
            .map_err(|e| Error::Internal(format!("report: {e}")))?;
        std::fs::write(&self.path, text + "\n").map_err(|source| Error::Output {
            path: self.path.clone(),
            source,
        })
    }
}

fn stats_json(s: &FrameStats) -> serde_json::Map<String, Value> {
    let v = json!({
        "steps": s.steps, "rejections": s.rejections, "cg_iterations": s.cg_iterations,
        "max_residual": s.max_residual, "min_step": s.min_step,
        "definite_fallbacks": s.definite_fallbacks, "contacts": s.contacts,
        "max_strain": s.max_strain,
    });
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}
