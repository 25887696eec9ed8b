//! A request to stop a long run, shared between whoever asks (a signal handler, the Blender
//! operator's Esc through its signal, a time budget, a batch scheduler) and the work that
//! honours it.
//!
//! The work polls the flag where stopping is cheap and safe: the bake's frame loop before
//! each frame ([`crate::bake`]), the step loop of [`Simulator::advance`] before each step
//! attempt and between the stages of a step, and the PCG before each iteration
//! ([`crate::linalg::pcg`]); keyframe control's forward and adjoint passes step through
//! the same simulator code. A run stopped inside a frame abandons that frame (it is never
//! written) and ends with [`Error::Interrupted`](crate::Error::Interrupted): whatever it
//! was doing, the stop takes effect within one stage of one step (on a 60,000-particle
//! garment, well under a second; `docs/benchmarks.md`, "Stop latency").
//!
//! [`Simulator::advance`]: crate::pipeline::Simulator::advance
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A stop flag. Clones share the same flag; a new one is not raised.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// A flag not yet raised.
    pub fn new() -> Self {
        Stop::default()
    }

    /// Asks the work that holds a clone of this flag to stop as soon as it can.
    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// True once a stop was requested.
    pub fn requested(&self) -> bool {
        // Relaxed would do for a flag polled in loops; SeqCst costs nothing measurable at
        // one load per step stage or PCG iteration.
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::Stop;

    #[test]
    fn clones_share_the_flag_and_a_new_one_is_down() {
        let a = Stop::new();
        let b = a.clone();
        assert!(!b.requested());
        a.request();
        assert!(b.requested());
        assert!(!Stop::new().requested());
    }
}
