//! The frame loop: steps until the end of a frame, choosing each step's size by the
//! adaptive control of Baraff §7 or from a replayed schedule ([`super::schedule`]), and
//! retrying rejected steps smaller.
use super::{workers, FrameStats, Rejection, Simulator};
use crate::error::{Error, Result};

impl Simulator {
    /// Advances by `duration` seconds (one frame), adapting the step (Baraff §7).
    /// Fails with [`Error::Simulation`] when the step would fall below the minimum.
    /// Inside a rayon pool the other workers spin for work meanwhile
    /// ([`workers::with_spinning_workers`]).
    pub fn advance(&mut self, duration: f64) -> Result<FrameStats> {
        workers::with_spinning_workers(|| self.advance_frame(duration))
    }

    /// [`Simulator::advance`] on the calling thread's pool as it is.
    fn advance_frame(&mut self, duration: f64) -> Result<FrameStats> {
        let end = self.state.time + duration;
        let mut stats = FrameStats {
            min_step: f64::INFINITY,
            ..FrameStats::default()
        };
        self.run.begin_frame();
        self.collision.held.clear();
        self.diagnostics.trouble = None;
        // Stop when the remainder is a rounding residue of the frame length.
        while end - self.state.time > 1e-9 * duration.max(1e-12) {
            if self.stop.requested() {
                return Err(self.interrupted());
            }
            let h = self.choose_step(end - self.state.time);
            match self.step(h, &mut stats) {
                Ok(()) => {
                    self.step_accepted(h);
                    stats.steps += 1;
                    stats.min_step = stats.min_step.min(h);
                }
                Err(Rejection::Stopped) => return Err(self.interrupted()),
                Err(why) => {
                    stats.rejections += 1;
                    if !self.step_rejected(h) {
                        if matches!(why, Rejection::Contact) && self.let_stuck_through() {
                            stats.let_through += 1;
                            continue;
                        }
                        return Err(self.failure(why));
                    }
                }
            }
        }
        self.state.time = end;
        stats.max_strain = self.max_strain();
        stats.contacts = self.collision.contacts.contacts.len();
        [stats.cloth_solid_seconds, stats.cloth_cloth_seconds] =
            std::mem::take(&mut self.diagnostics.collision_time);
        Ok(stats)
    }

    /// The size of the next step when `remaining` seconds of the frame are left: the
    /// replayed schedule's, else the adaptive control's, never past the frame's end.
    fn choose_step(&mut self, remaining: f64) -> f64 {
        match self.run.replay() {
            Some(r) => r.next_step(remaining),
            None => self.step_control.step().min(remaining),
        }
    }

    /// Tells the schedule or the step control that a step of `h` was accepted, and logs it.
    fn step_accepted(&mut self, h: f64) {
        match self.run.replay() {
            Some(r) => r.accepted(),
            None => self.step_control.accept(self.diagnostics.last_jump),
        }
        self.run.log(h);
    }

    /// Tells the schedule or the step control that a step of `h` was rejected; false when
    /// the retry would fall below the minimum step.
    fn step_rejected(&mut self, h: f64) -> bool {
        let min_step = self.params.min_step;
        match self.run.replay() {
            Some(r) => r.rejected(h, min_step),
            None => self.step_control.reject(h),
        }
    }

    /// The error of a frame abandoned on a stop request.
    fn interrupted(&self) -> Error {
        Error::Interrupted(format!(
            "stopped by a request at t = {:.4} s, inside a frame (that frame is not kept)",
            self.state.time
        ))
    }

    /// Err([`Rejection::Stopped`]) once a stop was requested: polled between the stages
    /// of a step, so that a stop never waits for a whole step of a large garment.
    pub(super) fn check_stop(&self) -> Result<(), Rejection> {
        if self.stop.requested() {
            Err(Rejection::Stopped)
        } else {
            Ok(())
        }
    }

    /// The error of a step that kept being rejected for `why` down to the minimum step:
    /// the cause measured, where, and what to do ([`super::trouble`]).
    fn failure(&self, why: Rejection) -> Error {
        Error::Simulation(format!(
            "at t = {:.4} s {}",
            self.state.time,
            self.trouble_message(&why)
        ))
    }
}

impl Rejection {
    /// What kept failing, for the error of a step that fell below the minimum.
    pub(super) fn reason(&self) -> &'static str {
        match self {
            Rejection::Solve => "the linear solve did not converge",
            Rejection::Stretch => "the cloth stretch kept jumping",
            Rejection::Contact => "cloth kept ending up inside a body",
            Rejection::SelfCrossing => "the cloth kept passing through itself",
            Rejection::Stopped => "a stop was requested",
        }
    }
}
