//! How a simulator chooses its steps and what it keeps of them: a plain simulation, or one
//! of the runs of keyframe control (Stuyck ch. 8).
//!
//! ```text
//! plain       adaptive steps (Baraff §7), nothing kept
//! logging     adaptive steps, their sizes logged frame by frame: the uncontrolled run
//!             that plans the schedule of keyframe control ([`super::schedule`])
//! replaying   the steps of a schedule while it lasts, adaptive after it; each accepted
//!             step recorded for the adjoint pass when a tape is kept
//! recording   adaptive steps, each accepted step recorded for the adjoint pass
//! ```
//! Replayed and recorded runs are *controlled*: their solves are tight and keep a fixed
//! preconditioner, so the keyframe objective is a smooth function of the control forces.
//! No run of keyframe control (logging included) limits the stretch a step adds
//! ([`super::stretch_limit`]): the adjoint pass knows only the solve.
use super::record::StepRecord;
use super::schedule::{Replay, StepSchedule};
use std::sync::Arc;

/// The run mode of a [`super::Simulator`] (module doc).
#[derive(Debug, Clone, Default)]
pub(super) enum RunMode {
    /// Adaptive steps, nothing kept.
    #[default]
    Plain,
    /// Adaptive steps whose sizes are logged.
    Logging(StepSchedule),
    /// Steps replayed from a schedule, recorded into `tape` when it is kept.
    Replaying {
        /// The schedule and where the replay stands in it.
        replay: Replay,
        /// Accepted steps not yet taken by the caller, when recording.
        tape: Option<Vec<StepRecord>>,
    },
    /// Adaptive steps, each accepted one recorded (not yet taken by the caller).
    Recording(Vec<StepRecord>),
}

impl RunMode {
    /// Starts (or stops, dropping what was kept) recording; a replay goes on.
    pub(super) fn record_steps(&mut self, on: bool) {
        *self = match (std::mem::take(self), on) {
            (RunMode::Replaying { replay, .. }, on) => RunMode::Replaying {
                replay,
                tape: on.then(Vec::new),
            },
            (_, true) => RunMode::Recording(Vec::new()),
            (RunMode::Recording(_), false) => RunMode::Plain,
            (mode, false) => mode,
        };
    }

    /// Starts (or stops) logging the step sizes; logging ends any replay or recording.
    pub(super) fn log_steps(&mut self, on: bool) {
        if on {
            *self = RunMode::Logging(StepSchedule::default());
        } else if let RunMode::Logging(_) = self {
            *self = RunMode::Plain;
        }
    }

    /// Replays `schedule` from the next frame on (`None`: adaptive steps again); a
    /// recording goes on.
    pub(super) fn follow_schedule(&mut self, schedule: Option<Arc<StepSchedule>>) {
        let tape = match std::mem::take(self) {
            RunMode::Replaying { tape, .. } => tape,
            RunMode::Recording(tape) => Some(tape),
            RunMode::Plain | RunMode::Logging(_) => None,
        };
        *self = match (schedule, tape) {
            (Some(s), tape) => RunMode::Replaying {
                replay: Replay::new(s),
                tape,
            },
            (None, Some(tape)) => RunMode::Recording(tape),
            (None, None) => RunMode::Plain,
        };
    }

    /// The steps recorded since the last call (empty when not recording).
    pub(super) fn take_records(&mut self) -> Vec<StepRecord> {
        self.tape().map(std::mem::take).unwrap_or_default()
    }

    /// The step sizes logged so far (empty when not logging).
    pub(super) fn take_step_log(&mut self) -> StepSchedule {
        match self {
            RunMode::Logging(log) => std::mem::take(log),
            _ => StepSchedule::default(),
        }
    }

    /// Replayed and recorded runs: tight solves and a fixed preconditioner (module doc).
    pub(super) fn is_controlled(&self) -> bool {
        matches!(self, RunMode::Replaying { .. } | RunMode::Recording(_))
    }

    /// A plain simulation, not a run of keyframe control.
    pub(super) fn is_plain(&self) -> bool {
        matches!(self, RunMode::Plain)
    }

    /// Starts a frame: the replay loads its steps, the log opens a new frame.
    pub(super) fn begin_frame(&mut self) {
        match self {
            RunMode::Logging(log) => log.begin_frame(),
            RunMode::Replaying { replay, .. } => {
                replay.begin_frame();
            }
            RunMode::Plain | RunMode::Recording(_) => {}
        }
    }

    /// The replay, while the current frame replays its steps.
    pub(super) fn replay(&mut self) -> Option<&mut Replay> {
        match self {
            RunMode::Replaying { replay, .. } if replay.is_active() => Some(replay),
            _ => None,
        }
    }

    /// Whether the current frame replays its steps (no stretch-jump rejection, definite
    /// Jacobians from the start; [`super::schedule`]).
    pub(super) fn replaying(&self) -> bool {
        matches!(self, RunMode::Replaying { replay, .. } if replay.is_active())
    }

    /// Logs an accepted step of size `h`, when logging.
    pub(super) fn log(&mut self, h: f64) {
        if let RunMode::Logging(log) = self {
            log.log(h);
        }
    }

    /// Whether accepted steps are recorded.
    pub(super) fn is_recording(&self) -> bool {
        matches!(
            self,
            RunMode::Recording(_) | RunMode::Replaying { tape: Some(_), .. }
        )
    }

    /// The tape of recorded steps, when recording.
    pub(super) fn tape(&mut self) -> Option<&mut Vec<StepRecord>> {
        match self {
            RunMode::Recording(tape)
            | RunMode::Replaying {
                tape: Some(tape), ..
            } => Some(tape),
            _ => None,
        }
    }
}
