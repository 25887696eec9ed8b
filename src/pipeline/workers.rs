//! Keeping the pool's other workers looking for work while a frame is computed.
//!
//! A step runs dozens of short parallel loops (box refits, the crossing search, the
//! colours of the scatter, each CG iteration's products and sweeps) with serial work in
//! between. An idle rayon worker spins a little, then sleeps on a futex, and the next loop
//! has to wake it: a system call and a cross-core interrupt, tens of microseconds on a
//! virtual machine, dozens of times per step.
//!
//! [`with_spinning_workers`] gives every other worker of the current pool a job that keeps
//! asking the pool for work ([`rayon::yield_now`], which also steals from the other
//! workers' deques) until the frame is done: the parallel loops' halves are taken without
//! a wake-up. Which thread runs what never changes a result (the loops are deterministic
//! for any thread count), so the caches stay bit-identical.
//!
//! The workers look for work only inside [`Simulator::advance`](super::Simulator::advance)
//! and stop when it returns (or unwinds); between frames (cache writes, progress) they
//! sleep as usual. While they look they back off ([`crate::parallel`]'s `Backoff`): a
//! brief spin, then a `sched_yield` at each look, then short naps, so that a bake sharing
//! the machine with other bakes or with Blender's interface gives the processors its
//! workers do not use to them.
//!
//! Frames of several simulators advanced at once on one pool stay correct: a spinning job
//! only ever runs the pool's work, and ends with its own frame; but a worker that picked up
//! another frame's spinning job while waiting returns to its own frame only when that one
//! ends. drape advances its simulators one after another.
use crate::parallel::{Backoff, SetOnDrop};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Runs `f`, keeping the other workers of the current rayon pool looking for work until
/// it returns (module doc). Called from outside a pool, or in a pool of one thread, it
/// just runs `f`.
pub fn with_spinning_workers<T>(f: impl FnOnce() -> T) -> T {
    spinning(f, &Arc::new(AtomicUsize::new(0)))
}

/// [`with_spinning_workers`], counting the spinning jobs in `running` (tests).
fn spinning<T>(f: impl FnOnce() -> T, running: &Arc<AtomicUsize>) -> T {
    let Some(caller) = rayon::current_thread_index() else {
        return f();
    };
    let others = rayon::current_num_threads().saturating_sub(1);
    if others == 0 {
        return f();
    }
    let stop = Arc::new(AtomicBool::new(false));
    // Ends the spinning jobs after `f` returns or unwinds.
    let _stop = SetOnDrop(&stop);
    for _ in 0..others {
        let (stop, running) = (stop.clone(), running.clone());
        rayon::spawn(move || {
            // The caller may take its own job back while it waits for work it handed
            // out: spinning there would block it under this job until `stop`, which only
            // it can set.
            if rayon::current_thread_index() == Some(caller) {
                return;
            }
            running.fetch_add(1, Ordering::SeqCst);
            let mut backoff = Backoff::new();
            while !stop.load(Ordering::Acquire) {
                match rayon::yield_now() {
                    Some(rayon::Yield::Executed) => backoff.reset(),
                    _ => backoff.wait(),
                }
            }
            running.fetch_sub(1, Ordering::SeqCst);
        });
    }
    f()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;
    use rayon::prelude::*;
    use std::time::{Duration, Instant};

    /// Waits up to 10 s for `done`.
    fn eventually(done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    #[test]
    fn the_other_worker_spins_during_f_and_stops_after_it() {
        let pool = pool(2);
        let running = Arc::new(AtomicUsize::new(0));
        let (sum, seen) = pool.install(|| {
            spinning(
                || {
                    let seen = eventually(|| running.load(Ordering::SeqCst) == 1);
                    // Parallel work while the other worker spins: taken and done by it.
                    let sum: u64 = (0..100_000u64).into_par_iter().map(|k| k * k).sum();
                    (sum, seen)
                },
                &running,
            )
        });
        assert!(seen, "the other worker picked up its spinning job");
        assert_eq!(sum, (0..100_000u64).map(|k| k * k).sum::<u64>());
        assert!(eventually(|| running.load(Ordering::SeqCst) == 0));
    }

    #[test]
    fn a_panic_in_f_still_stops_the_spinning() {
        let pool = pool(2);
        let running = Arc::new(AtomicUsize::new(0));
        let outcome = pool.install(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                spinning(
                    || {
                        assert!(eventually(|| running.load(Ordering::SeqCst) == 1));
                        panic!("frame failed");
                    },
                    &running,
                )
            }))
        });
        assert!(outcome.is_err());
        assert!(eventually(|| running.load(Ordering::SeqCst) == 0));
    }

    #[test]
    fn outside_a_pool_or_alone_in_one_f_just_runs() {
        let running = Arc::new(AtomicUsize::new(0));
        assert_eq!(spinning(|| 7, &running), 7);
        let one = pool(1);
        assert_eq!(one.install(|| spinning(|| 8, &running)), 8);
        assert_eq!(running.load(Ordering::SeqCst), 0);
    }
}
