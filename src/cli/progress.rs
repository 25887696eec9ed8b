//! Progress display: an indicatif bar on a terminal, or JSON lines on stderr (SPEC
//! "Progress protocol"); stdout carries only command output.
use super::args::ProgressMode;
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Where progress events go.
pub struct Progress {
    mode: ProgressMode,
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
}

impl Progress {
    /// Resolves `auto` to a bar on a terminal, nothing otherwise.
    pub fn new(mode: ProgressMode) -> Self {
        let mode = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => ProgressMode::Bar,
            ProgressMode::Auto => ProgressMode::None,
            m => m,
        };
        Progress {
            mode,
            bar: None,
            started: Instant::now(),
        }
    }

    /// Seconds since the command started.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn emit(&self, event: Value) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{event}");
        let _ = err.flush();
    }

    /// `{"event":"start",...}`; starts the bar of `total` frames.
    pub fn start(&mut self, command: &str, frames: (i32, i32), garments: &[(String, usize)]) {
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
            _ => {}
        }
    }

    /// One finished optimisation iteration of `drape control` for `garment`.
    pub fn iteration(
        &self,
        garment: &str,
        iteration: usize,
        of: usize,
        objective: f64,
        error: f64,
    ) {
        match self.mode {
            ProgressMode::Json => self.emit(json!({
                "event": "iteration", "garment": garment, "iteration": iteration, "of": of,
                "objective": objective, "keyframe_error": error,
                "elapsed_s": round3(self.elapsed()),
            })),
            ProgressMode::Bar => eprintln!(
                "{garment}: iteration {iteration}/{of}, objective {objective:.4e}, keyframe error {:.1} mm",
                1e3 * error
            ),
            _ => {}
        }
    }

    /// A line of information for a person watching (bar mode only; JSON consumers get
    /// the same facts from the events).
    pub fn info(&self, message: &str) {
        if self.mode == ProgressMode::Bar {
            match &self.bar {
                Some(bar) => bar.println(message),
                None => eprintln!("{message}"),
            }
        }
    }

    /// A warning the user should see.
    pub fn warning(&self, message: &str) {
        match self.mode {
            ProgressMode::Json => self.emit(json!({"event": "warning", "message": message})),
            ProgressMode::Bar => match &self.bar {
                Some(bar) => bar.println(format!("warning: {message}")),
                None => eprintln!("warning: {message}"),
            },
            _ => eprintln!("warning: {message}"),
        }
    }

    /// `{"event":"done",...}`.
    pub fn done(&self, outputs: &[String]) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        match self.mode {
            ProgressMode::Json => self.emit(json!({
                "event": "done", "outputs": outputs, "elapsed_s": round3(self.elapsed()),
            })),
            ProgressMode::Bar => {
                for o in outputs {
                    eprintln!("wrote {o}");
                }
            }
            _ => {}
        }
    }

    /// Clears the bar before an error is printed (the warnings printed above it stay).
    pub fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Rounds to milliseconds for display.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Prints an error once: a JSON event in JSON mode, else `error: ...` on stderr.
pub fn print_error(json_mode: bool, code: i32, message: &str) {
    if json_mode {
        eprintln!(
            "{}",
            json!({"event": "error", "code": code, "message": message})
        );
    } else {
        eprintln!("error: {message}");
    }
}
