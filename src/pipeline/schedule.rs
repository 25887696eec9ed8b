//! Step schedules: the step sizes a run took, frame by frame, and their replay.
//!
//! The adaptive control of Baraff §7 picks each step from what happened at the previous
//! ones (a stretch jump halves the step). That makes the simulated trajectory a
//! discontinuous function of anything that changes it slightly: under keyframe control
//! (Stuyck ch. 8) a small change of the control forces can flip one rejection, the run
//! then takes a different step sequence, and the keyframe error jumps. A line search cannot
//! work on such an objective. Replaying a fixed schedule makes the trajectory a smooth
//! function of the forces:
//!
//! ```text
//! record   run once uncontrolled; log the accepted step sizes h_{k,1..m_k} of frame k
//! replay   frame k takes the steps h_{k,1}, …, h_{k,m_k−1} and then the rest of the frame,
//!          with no stretch-jump rejection (§7) and with the positive definite
//!          Jacobians from the start (no System → Definite fallback, another switch
//!          that flips under small changes of the forces); a step rejected for a failed solve,
//!          a body penetration or a cloth crossing is split into two halves
//!          (h → h/2, h/2) — rare events that keep the cloth safe
//! after    frames beyond the schedule step adaptively again
//! ```
use std::sync::Arc;

/// Accepted step sizes (s) of consecutive frames, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepSchedule {
    frames: Vec<Vec<f64>>,
}

impl StepSchedule {
    /// Number of frames covered.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// Total number of steps over all frames.
    pub fn steps(&self) -> usize {
        self.frames.iter().map(Vec::len).sum()
    }

    /// Step sizes of frame `k` (0-based, counted from where recording started).
    pub fn frame(&self, k: usize) -> Option<&[f64]> {
        self.frames.get(k).map(Vec::as_slice)
    }

    /// Starts a new frame of the log.
    pub(super) fn begin_frame(&mut self) {
        self.frames.push(Vec::new());
    }

    /// Logs an accepted step of size `h` in the current frame.
    pub(super) fn log(&mut self, h: f64) {
        if let Some(frame) = self.frames.last_mut() {
            frame.push(h);
        }
    }
}

/// Replay state of a [`StepSchedule`]: the frame to take next, the steps still owed in
/// the current frame (last first) and whether the current frame replays at all.
#[derive(Debug, Clone)]
pub(super) struct Replay {
    schedule: Arc<StepSchedule>,
    next_frame: usize,
    pending: Vec<f64>,
    active: bool,
}

impl Replay {
    pub(super) fn new(schedule: Arc<StepSchedule>) -> Self {
        Replay {
            schedule,
            next_frame: 0,
            pending: Vec::new(),
            active: false,
        }
    }

    /// Whether the current frame replays its steps ([`Replay::begin_frame`]).
    pub(super) fn is_active(&self) -> bool {
        self.active
    }

    /// Loads the next frame's steps; false once the schedule is exhausted (the frame then
    /// steps adaptively).
    pub(super) fn begin_frame(&mut self) -> bool {
        self.active = false;
        let Some(steps) = self.schedule.frame(self.next_frame) else {
            return false;
        };
        self.next_frame += 1;
        self.pending = steps.iter().rev().copied().collect();
        self.active = !self.pending.is_empty();
        self.active
    }

    /// The next step size when `remaining` seconds of the frame are left: the planned one,
    /// or the whole remainder for the frame's last planned step.
    pub(super) fn next_step(&self, remaining: f64) -> f64 {
        match self.pending.as_slice() {
            [] | [_] => remaining,
            [.., h] => h.min(remaining),
        }
    }

    /// The step `h` was accepted.
    pub(super) fn accepted(&mut self) {
        self.pending.pop();
    }

    /// The step `h` was rejected: it is owed as two halves. False when a half would be
    /// shorter than `min_step`.
    pub(super) fn rejected(&mut self, h: f64, min_step: f64) -> bool {
        self.pending.pop();
        let half = 0.5 * h;
        self.pending.extend([half, half]);
        half >= min_step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_takes_the_plan_then_the_remainder_and_splits_rejections() {
        let mut s = StepSchedule::default();
        s.begin_frame();
        s.log(0.01);
        s.log(0.02);
        s.log(0.01);
        let mut r = Replay::new(Arc::new(s));
        assert!(r.begin_frame());
        assert_eq!(r.next_step(0.04), 0.01);
        r.accepted();
        assert_eq!(r.next_step(0.03), 0.02);
        assert!(r.rejected(0.02, 1e-5));
        assert_eq!(r.next_step(0.03), 0.01);
        r.accepted();
        assert_eq!(r.next_step(0.02), 0.01);
        r.accepted();
        // The last planned step takes whatever is left of the frame.
        assert_eq!(r.next_step(0.0100000001), 0.0100000001);
        r.accepted();
        assert!(!r.begin_frame(), "one frame only");
        assert!(!r.rejected(1e-5, 1e-5), "halves below the minimum fail");
    }
}
