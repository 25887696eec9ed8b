//! Adaptive step size of Baraff §7.
//!
//! ```text
//! reject (stretch jump, failed solve) → h ← h/2, or h_tried/2 if h/2 ≥ h_tried; if the
//!                                         rejected step had just grown,
//!                                         wait ← min(2·wait, max_wait)
//! accept → successes += 1; if h < h_max and successes ≥ wait and the step was calm
//!          (largest stretch jump ≤ GROW_BELOW × max_stretch_change) → h ← min(2h, h_max)
//! ```
//! A step whose stretch already changed by more than half the limit would, doubled, most
//! likely break it (the change grows at least linearly with h): growing then only buys a
//! rejection, the halving back and a doubled wait. The successes still count, and the
//! step grows after the first calm one.
//! A grown step that is then accepted resets the wait to its initial value. `h_tried` is
//! the step actually taken, which the end of a frame can cut below `h`: halving `h` alone
//! could then leave it at or above `h_tried`, and the very step that failed would be tried
//! again, identically. Halving `min(h, h_tried)` always would also shrink the retry of a
//! step cut to, say, 3/4 of `h` to 3/8 rather than 1/2 of `h` and take more steps, so only
//! the repeat is avoided.

/// Largest stretch jump, as a fraction of the limit, of a step after which the step grows.
pub const GROW_BELOW: f64 = 0.5;

/// State of the step-size controller.
#[derive(Debug, Clone)]
pub struct StepControl {
    h: f64,
    h_max: f64,
    h_min: f64,
    successes: u32,
    wait: u32,
    initial_wait: u32,
    max_wait: u32,
    just_grew: bool,
}

impl StepControl {
    /// Starts at `h_max`.
    pub fn new(h_max: f64, h_min: f64, initial_wait: u32, max_wait: u32) -> Self {
        StepControl {
            h: h_max,
            h_max,
            h_min,
            successes: 0,
            wait: initial_wait.max(1),
            initial_wait: initial_wait.max(1),
            max_wait: max_wait.max(initial_wait.max(1)),
            just_grew: false,
        }
    }

    /// The step size to try next (s).
    pub fn step(&self) -> f64 {
        self.h
    }

    /// Records an accepted step whose largest stretch jump was `jump` times the limit
    /// (0 where stretch is not checked).
    pub fn accept(&mut self, jump: f64) {
        if self.just_grew {
            self.wait = self.initial_wait;
            self.just_grew = false;
        }
        self.successes += 1;
        if self.h < self.h_max && self.successes >= self.wait && jump <= GROW_BELOW {
            self.h = (2.0 * self.h).min(self.h_max);
            self.successes = 0;
            self.just_grew = true;
        }
    }

    /// Starts again from the largest step, as at the first step.
    pub fn restart(&mut self) {
        self.h = self.h_max;
        self.successes = 0;
        self.just_grew = false;
    }

    /// Records that a step of `tried` seconds (at most [`StepControl::step`], less where the
    /// frame ended first) was rejected: the next try is half the step, or half of `tried`
    /// where half the step would not be shorter than `tried` (module doc). Returns false
    /// if the step would fall below the minimum.
    pub fn reject(&mut self, tried: f64) -> bool {
        if self.just_grew {
            self.wait = (2 * self.wait).min(self.max_wait);
            self.just_grew = false;
        }
        self.successes = 0;
        self.h *= 0.5;
        if self.h >= tried {
            self.h = 0.5 * tried;
        }
        self.h >= self.h_min
    }
}

// A checkpoint keeps the whole step control: the step size, the calm steps counted and
// the wait before the next growth.
crate::persist_fields!(StepControl {
    h,
    h_max,
    h_min,
    successes,
    wait,
    initial_wait,
    max_wait,
    just_grew
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_on_rejection_and_grows_back_after_two_successes() {
        let mut c = StepControl::new(0.04, 1e-5, 2, 40);
        assert!(c.reject(c.step()));
        assert_eq!(c.step(), 0.02);
        c.accept(0.0);
        assert_eq!(c.step(), 0.02);
        c.accept(0.0);
        assert_eq!(c.step(), 0.04);
    }

    #[test]
    fn a_step_near_the_stretch_limit_does_not_grow_until_a_calm_one() {
        let mut c = StepControl::new(0.04, 1e-5, 2, 40);
        assert!(c.reject(c.step()));
        c.accept(0.0);
        c.accept(0.9);
        c.accept(GROW_BELOW + 1e-9);
        assert_eq!(c.step(), 0.02);
        c.accept(GROW_BELOW);
        assert_eq!(c.step(), 0.04);
    }

    #[test]
    fn failed_growth_doubles_the_wait_up_to_forty() {
        let mut c = StepControl::new(1.0, 1e-9, 2, 40);
        c.reject(c.step());
        let mut waits = vec![];
        for _ in 0..8 {
            // succeed until it grows, then fail the grown step
            let mut n = 0;
            while c.step() < 1.0 {
                c.accept(0.0);
                n += 1;
            }
            waits.push(n);
            c.reject(c.step());
        }
        assert_eq!(waits, vec![2, 4, 8, 16, 32, 40, 40, 40]);
    }

    #[test]
    fn reports_failure_below_minimum_step() {
        let mut c = StepControl::new(1.0, 0.2, 2, 40);
        assert!(c.reject(c.step())); // 0.5
        assert!(c.reject(c.step())); // 0.25
        assert!(!c.reject(c.step())); // 0.125 < 0.2
    }

    #[test]
    fn a_step_cut_short_by_the_frame_end_is_retried_at_half_its_own_size() {
        // The controller is at 0.04 but only 0.02 of the frame was left: the failed step
        // was 0.02, and trying min(0.04 / 2, 0.02) = 0.02 again would repeat it exactly.
        let mut c = StepControl::new(0.04, 1e-5, 2, 40);
        assert!(c.reject(0.02));
        assert_eq!(c.step(), 0.01);
        // A step that was not cut short, or cut to more than half, halves the step.
        for tried in [0.04, 0.03] {
            let mut c = StepControl::new(0.04, 1e-5, 2, 40);
            assert!(c.reject(tried));
            assert_eq!(c.step(), 0.02);
        }
    }
}
