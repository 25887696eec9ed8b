//! Progress display: an indicatif bar on a terminal, or JSON lines on stderr (docs/reference.md,
//! "Progress"); stdout carries only command output.
//!
//! | `--progress` | while baking | at the end of a bake |
//! |---|---|---|
//! | `auto` on a terminal, `bar` | a bar, warnings above it | `wrote <cache> (<N> frames, <T> s)` per cache |
//! | `auto` elsewhere | warnings | the same `wrote` lines |
//! | `json` | one JSON event per line | the `done` event |
//! | `plain` | `PROGRESS: N%` per frame on stdout, warnings | `OUTPUT_FILE:/abs/path;` per cache file on stdout |
//! | `none` | warnings | nothing |
//!
//! `plain` is for render farms: Deadline's regex handlers read `PROGRESS: (\d+)%`, Houdini
//! PDG's output parsing reads `OUTPUT_FILE:path;`. Warnings and errors stay plain
//! `warning: ...` / `error: ...` lines on stderr.
//!
//! Every line goes out in one write and a failed write is ignored (stderr is closed or
//! full: nothing can be told there), so progress never stops a bake or panics.
use super::args::ProgressMode;
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Where progress events go.
pub struct Progress {
    mode: ProgressMode,
    /// Print a `wrote` line per cache at the end (`auto` and `bar`).
    success_lines: bool,
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    /// The first frame of the bake (names the frame files of a sequence).
    first: i32,
}

impl Progress {
    /// Resolves `auto` to a bar on a terminal, nothing otherwise.
    pub fn new(mode: ProgressMode) -> Self {
        let success_lines = matches!(mode, ProgressMode::Auto | ProgressMode::Bar);
        let mode = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => ProgressMode::Bar,
            ProgressMode::Auto => ProgressMode::None,
            m => m,
        };
        Progress {
            mode,
            success_lines,
            bar: None,
            started: Instant::now(),
            first: 0,
        }
    }

    /// Seconds since the command started.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn emit(&self, event: Value) {
        line(&event.to_string());
    }

    /// `{"event":"start",...}`; starts the bar of `total` frames.
    pub fn start(&mut self, command: &str, frames: (i32, i32), garments: &[(String, usize)]) {
        self.first = frames.0;
        match self.mode {
            ProgressMode::Json => self.emit(json!({
                "event": "start", "command": command, "frames": [frames.0, frames.1],
                "garments": garments.iter().map(|(n, v)| json!({"name": n, "vertices": v})).collect::<Vec<_>>(),
            })),
            ProgressMode::Bar => {
                let total = (frames.1 - frames.0 + 1).max(0) as u64;
                let bar = indicatif::ProgressBar::new(total);
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{prefix} [{bar:30}] frame {pos}/{len} {msg} ({elapsed}, eta {eta})",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                bar.set_prefix(command.to_string());
                self.bar = Some(bar);
            }
            _ => {}
        }
    }

    /// One finished frame.
    pub fn frame(&self, frame: i32, done: usize, total: usize, steps: usize, cg: usize) {
        match self.mode {
            ProgressMode::Json => self.emit(json!({
                "event": "frame", "frame": frame, "done": done, "total": total,
                "elapsed_s": round3(self.elapsed()), "steps": steps, "cg_iterations": cg,
            })),
            ProgressMode::Bar => {
                if let Some(bar) = &self.bar {
                    bar.set_position(done as u64);
                    bar.set_message(format!("{steps} steps, {cg} CG it."));
                }
            }
            ProgressMode::Plain => out_line(&percent_line(done, total)),
            _ => {}
        }
    }

    /// One finished optimisation iteration of `drape control` for `garment`: the 3D
    /// keyframe error (m) and, with silhouette keyframes, their error (normalised image
    /// units) and mean IoU. `keyframe_error` of the JSON event is the 3D error, or the
    /// silhouette error in a run with silhouettes only.
    pub fn iteration(
        &self,
        garment: &str,
        (iteration, of): (usize, usize),
        objective: f64,
        error: Option<f64>,
        silhouette: Option<(f64, f64)>,
    ) {
        match self.mode {
            ProgressMode::Json => {
                let mut event = json!({
                    "event": "iteration", "garment": garment, "iteration": iteration, "of": of,
                    "objective": objective,
                    "keyframe_error": error.or(silhouette.map(|s| s.0)).unwrap_or(0.0),
                    "elapsed_s": round3(self.elapsed()),
                });
                if let Some((e, iou)) = silhouette {
                    event["silhouette_error"] = json!(e);
                    event["silhouette_iou"] = json!(iou);
                }
                self.emit(event)
            }
            ProgressMode::Bar => {
                let mut text =
                    format!("{garment}: iteration {iteration}/{of}, objective {objective:.4e}");
                if let Some(e) = error {
                    text += &format!(", keyframe error {:.1} mm", 1e3 * e);
                }
                if let Some((e, iou)) = silhouette {
                    text += &format!(", silhouette error {e:.4}, IoU {iou:.3}");
                }
                line(&text)
            }
            _ => {}
        }
    }

    /// A line of information for a person watching (bar mode only; JSON consumers get
    /// the same facts from the events).
    pub fn info(&self, message: &str) {
        if self.mode == ProgressMode::Bar {
            match &self.bar {
                Some(bar) => bar.println(message),
                None => line(message),
            }
        }
    }

    /// A warning the user should see.
    pub fn warning(&self, message: &str) {
        match self.mode {
            ProgressMode::Json => self.emit(json!({"event": "warning", "message": message})),
            ProgressMode::Bar => match &self.bar {
                Some(bar) => bar.println(format!("warning: {message}")),
                None => line(&format!("warning: {message}")),
            },
            _ => line(&format!("warning: {message}")),
        }
    }

    /// The bake wrote `outputs`, `frames` samples each: `{"event":"done",...}` in JSON
    /// mode, a `wrote <cache> (<frames> frames, <seconds> s)` line per cache in `auto` and
    /// `bar` modes (also without a terminal, so that a bake run from a script says what
    /// it wrote), nothing with `none`.
    pub fn done(&self, outputs: &[String], frames: usize) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if self.mode == ProgressMode::Json {
            self.emit(json!({
                "event": "done", "outputs": outputs, "elapsed_s": round3(self.elapsed()),
            }));
        }
        if self.success_lines {
            for o in outputs {
                line(&success_line(o, frames, self.elapsed()));
            }
        }
        if self.mode == ProgressMode::Plain {
            for o in outputs {
                for file in output_files(o, self.first, frames) {
                    out_line(&format!("OUTPUT_FILE:{};", file.display()));
                }
            }
        }
    }

    /// Clears the bar before an error is printed (the warnings printed above it stay).
    pub fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `wrote skirt.pc2 (48 frames, 1.7 s)`.
fn success_line(output: &str, frames: usize, seconds: f64) -> String {
    let unit = if frames == 1 { "frame" } else { "frames" };
    format!("wrote {output} ({frames} {unit}, {seconds:.1} s)")
}

/// `PROGRESS: N%`, N the whole per cent of `done` frames of `total` (rounded down, so
/// 100% means finished).
fn percent_line(done: usize, total: usize) -> String {
    let pct = (100 * done).checked_div(total).unwrap_or(100);
    format!("PROGRESS: {pct}%")
}

/// The files of the cache `output`, absolute: the file itself, or for a `.geo` sequence
/// (`$F` in the name) each of its `frames` frame files from `first` on.
fn output_files(output: &str, first: i32, frames: usize) -> Vec<std::path::PathBuf> {
    let path = std::path::Path::new(output);
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match crate::format::FramePattern::parse(&path) {
        Ok(p) if output.contains('$') => (0..frames).map(|k| p.path(first + k as i32)).collect(),
        _ => vec![path],
    }
}

/// Writes `text` and a newline to stdout in one write (failures ignored, as [`line`]).
fn out_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(format!("{text}\n").as_bytes());
    let _ = out.flush();
}

/// Rounds to milliseconds for display.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Prints a warning found before a progress display exists (a flag's value adjusted): a
/// JSON event in JSON mode, else `warning: ...` on stderr.
pub fn print_warning(json_mode: bool, message: &str) {
    if json_mode {
        line(&json!({"event": "warning", "message": message}).to_string());
    } else {
        line(&format!("warning: {message}"));
    }
}

/// Prints an error once: a JSON event in JSON mode, else `error: ...` on stderr.
pub fn print_error(json_mode: bool, code: i32, message: &str) {
    if json_mode {
        line(&json!({"event": "error", "code": code, "message": message}).to_string());
    } else {
        line(&format!("error: {message}"));
    }
}

/// Writes `text` and a newline to stderr in one write. A failure (a closed pipe, a full
/// disk behind a redirection) is ignored: stderr is where it would be reported, and a
/// bake is not stopped because nobody reads its progress.
fn line(text: &str) {
    let mut buf = String::with_capacity(text.len() + 1);
    buf.push_str(text);
    buf.push('\n');
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(buf.as_bytes());
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn success_line_names_the_cache_its_frames_and_the_time() {
        assert_eq!(
            success_line("skirt.pc2", 48, 1.74),
            "wrote skirt.pc2 (48 frames, 1.7 s)"
        );
        assert_eq!(
            success_line("a.mdd", 1, 0.04),
            "wrote a.mdd (1 frame, 0.0 s)"
        );
    }

    #[test]
    fn plain_progress_counts_whole_per_cent_and_names_every_frame_file() {
        assert_eq!(percent_line(37, 100), "PROGRESS: 37%");
        assert_eq!(percent_line(1, 3), "PROGRESS: 33%");
        assert_eq!(percent_line(3, 3), "PROGRESS: 100%");
        assert_eq!(percent_line(0, 0), "PROGRESS: 100%");
        let files = output_files("/c/s.$F4.geo", 9, 2);
        assert_eq!(
            files,
            [Path::new("/c/s.0009.geo"), Path::new("/c/s.0010.geo")]
        );
        assert_eq!(output_files("/c/s.pc2", 1, 5), [Path::new("/c/s.pc2")]);
        assert!(output_files("s.pc2", 1, 5)[0].is_absolute());
    }

    #[test]
    fn success_lines_are_printed_unless_progress_is_none_or_json() {
        assert!(Progress::new(ProgressMode::Auto).success_lines);
        assert!(Progress::new(ProgressMode::Bar).success_lines);
        assert!(!Progress::new(ProgressMode::None).success_lines);
        assert!(!Progress::new(ProgressMode::Json).success_lines);
    }
}
