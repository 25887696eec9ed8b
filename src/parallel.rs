//! Fork–join for the short parallel loops of a step, and how a thread waits for work.
//!
//! A step runs dozens of parallel loops of a few to a hundred microseconds (each CG
//! iteration's product, updates and sweeps). In `rayon::join(a, b)` the calling thread runs
//! `a` while another worker steals `b`; a caller that finishes `a` first waits in rayon's
//! idle loop, which after 32 rounds of `sched_yield` goes to sleep on a futex, and the
//! worker finishing `b` must then wake it: a system call and a cross-core interrupt,
//! tens of microseconds on a virtual machine, dozens of times per step. The other workers
//! keep looking for work during a frame ([`crate::pipeline::workers`]); [`join`] keeps the
//! caller looking too: once `a` is done and `b` has started elsewhere, it looks for other
//! work ([`rayon::yield_now`], as rayon's own wait does) until `b` is done.
//!
//! Such a wait must not hold a processor that another process needs (a second bake on the
//! same machine, Blender's interface): [`Backoff`] spins only briefly, then yields the
//! processor to any other runnable thread at each look, and after a longer idle spell
//! sleeps in short naps. Alone on the machine the yields return at once and the wait
//! costs what spinning does; shared, the waiting threads give their time to the others.
//!
//! [`chunks`] runs a loop over fixed chunks of one or more slices through such joins
//! (halving the chunk range recursively). Which thread runs which chunk never changes a
//! result: each chunk's work and its place in the output are fixed, so sums over the
//! per-chunk results in chunk order are the same for any number of threads.
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A waiting thread's back-off (module doc): [`Backoff::SPINS`] busy looks, then a
/// `sched_yield` at each look for [`Backoff::YIELD_FOR`], then naps of [`Backoff::NAP`].
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    misses: u32,
    idle_since: Option<Instant>,
}

impl Backoff {
    /// Looks that only spin: work usually comes within a few microseconds.
    const SPINS: u32 = 64;
    /// How long an idle thread yields its processor at each look before it naps.
    const YIELD_FOR: Duration = Duration::from_millis(1);
    /// One nap of a thread idle for longer: short, since the next parallel loop of the
    /// frame waits for it.
    const NAP: Duration = Duration::from_micros(100);

    /// A wait that has not missed yet.
    pub(crate) fn new() -> Self {
        Backoff::default()
    }

    /// Work was found: the next wait starts spinning again.
    pub(crate) fn reset(&mut self) {
        self.misses = 0;
        self.idle_since = None;
    }

    /// One look found no work: spin, yield or nap, by how long the thread has been idle.
    pub(crate) fn wait(&mut self) {
        if self.misses < Self::SPINS {
            self.misses += 1;
            std::hint::spin_loop();
            return;
        }
        let since = *self.idle_since.get_or_insert_with(Instant::now);
        if since.elapsed() < Self::YIELD_FOR {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Self::NAP);
        }
    }
}

/// `rayon::join(a, b)`, except that a caller that finishes `a` while another thread runs
/// `b` waits without sleeping (module doc). Outside a pool, or when `b` was not taken by
/// another thread, it is `rayon::join` exactly.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let started = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    rayon::join(
        || {
            let out = a();
            // Not started: `b` is still in the caller's deque, where rayon's join takes it
            // back and runs it here; waiting for it would never end.
            if started.load(Ordering::Acquire) {
                let mut backoff = Backoff::new();
                while !done.load(Ordering::Acquire) {
                    match rayon::yield_now() {
                        Some(rayon::Yield::Executed) => backoff.reset(),
                        _ => backoff.wait(),
                    }
                }
            }
            out
        },
        || {
            started.store(true, Ordering::Release);
            // Set on return and on unwinding: a panicking `b` must not leave the caller
            // spinning (rayon's join then resumes the panic on the caller).
            let _done = SetOnDrop(&done);
            b()
        },
    )
}

/// Sets its flag when dropped (on return or unwinding).
pub(crate) struct SetOnDrop<'a>(pub(crate) &'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Slices (or tuples of slices of equal length) that a parallel loop splits between
/// threads.
pub trait Split: Sized + Send {
    /// Number of elements (of each slice).
    fn size(&self) -> usize;
    /// The first `mid` elements and the rest.
    fn split_at(self, mid: usize) -> (Self, Self);
}

impl<T: Send> Split for &mut [T] {
    fn size(&self) -> usize {
        <[T]>::len(self)
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        self.split_at_mut(mid)
    }
}

impl<T: Sync> Split for &[T] {
    fn size(&self) -> usize {
        <[T]>::len(self)
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        <[T]>::split_at(self, mid)
    }
}

impl Split for std::ops::Range<usize> {
    fn size(&self) -> usize {
        ExactSizeIterator::len(self)
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let cut = self.start + mid;
        (self.start..cut, cut..self.end)
    }
}

macro_rules! split_tuple {
    ($($name:ident),+) => {
        impl<$($name: Split),+> Split for ($($name,)+) {
            fn size(&self) -> usize {
                #[allow(non_snake_case)]
                let ($($name,)+) = self;
                let lens = [$($name.size()),+];
                debug_assert!(lens.iter().all(|&l| l == lens[0]), "unequal lengths");
                lens[0]
            }

            fn split_at(self, mid: usize) -> (Self, Self) {
                #[allow(non_snake_case)]
                let ($($name,)+) = self;
                #[allow(non_snake_case)]
                let ($($name,)+) = ($($name.split_at(mid),)+);
                (($($name.0,)+), ($($name.1,)+))
            }
        }
    };
}

split_tuple!(A);
split_tuple!(A, B);
split_tuple!(A, B, C);
split_tuple!(A, B, C, D);
split_tuple!(A, B, C, D, E);

/// Runs `f(k, part)` on every chunk of `chunk` elements of `parts` (chunk `k` covers
/// elements `k·chunk .. (k+1)·chunk`, the last one the rest), the chunks in parallel
/// through [`join`], and leaves `f`'s result for chunk `k` in `out[k]` (`out` is resized
/// to the number of chunks).
///
/// # Panics
/// If `chunk` is 0.
pub fn chunks<S, T, F>(parts: S, chunk: usize, out: &mut Vec<T>, f: F)
where
    S: Split,
    T: Send + Default,
    F: Fn(usize, S) -> T + Sync,
{
    assert!(chunk > 0, "parallel::chunks: empty chunks");
    let count = parts.size().div_ceil(chunk);
    out.clear();
    out.resize_with(count, T::default);
    run(parts, out, 0, chunk, &f);
}

/// [`chunks`] without results.
pub fn for_each_chunk<S, F>(parts: S, chunk: usize, f: F)
where
    S: Split,
    F: Fn(usize, S) + Sync,
{
    assert!(chunk > 0, "parallel::for_each_chunk: empty chunks");
    let count = parts.size().div_ceil(chunk);
    let mut out = vec![(); count];
    run(parts, &mut out, 0, chunk, &f);
}

/// The concatenation, in chunk order, of `f(part)` over the chunks of `chunk` elements of
/// `parts` ([`chunks`]): a parallel filter or flat map whose output keeps the input's order.
pub fn concat<S, T, F>(parts: S, chunk: usize, f: F) -> Vec<T>
where
    S: Split,
    T: Send,
    F: Fn(S) -> Vec<T> + Sync,
{
    let mut found: Vec<Vec<T>> = Vec::new();
    chunks(parts, chunk, &mut found, |_, part| f(part));
    found.into_iter().flatten().collect()
}

/// `out[i] = value(i)` for every `i`, in parallel chunks of `chunk` elements.
pub fn fill<T, F>(out: &mut [T], chunk: usize, value: F)
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    for_each_chunk(out, chunk, |k, part: &mut [T]| {
        for (t, o) in part.iter_mut().enumerate() {
            *o = value(k * chunk + t);
        }
    });
}

/// The chunks `first ..` of `parts`, one per entry of `out`, halving the range.
fn run<S, T, F>(parts: S, out: &mut [T], first: usize, chunk: usize, f: &F)
where
    S: Split,
    T: Send,
    F: Fn(usize, S) -> T + Sync,
{
    match out.len() {
        0 => {}
        1 => out[0] = f(first, parts),
        n => {
            let half = n / 2;
            let (left, right) = parts.split_at(half * chunk);
            let (out_left, out_right) = out.split_at_mut(half);
            join(
                || run(left, out_left, first, chunk, f),
                || run(right, out_right, first + half, chunk, f),
            );
        }
    }
}

/// A rayon pool of `threads` threads (tests).
#[cfg(test)]
pub(crate) fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_element_once_in_order_for_any_thread_count() {
        for threads in [1, 2, 3] {
            for n in [0, 1, 255, 256, 257, 2500] {
                let (sums, x) = pool(threads).install(|| {
                    let mut x = vec![0u64; n];
                    let y: Vec<u64> = (0..n as u64).collect();
                    let mut sums = Vec::new();
                    chunks((&mut x[..], &y[..]), 256, &mut sums, |k, (xc, yc)| {
                        for (a, b) in xc.iter_mut().zip(yc) {
                            *a = b + 1;
                        }
                        (k, yc.iter().sum::<u64>(), yc.len())
                    });
                    (sums, x)
                });
                assert_eq!(sums.len(), n.div_ceil(256));
                for (k, &(index, sum, len)) in sums.iter().enumerate() {
                    let range = 256 * k..(256 * (k + 1)).min(n);
                    assert_eq!(index, k);
                    assert_eq!(len, range.len());
                    assert_eq!(sum, range.map(|i| i as u64).sum::<u64>());
                }
                assert!(x.iter().enumerate().all(|(i, &v)| v == i as u64 + 1));
                // `fill` and `concat` over the same chunks: every index once, in order.
                let (filled, odd) = pool(threads).install(|| {
                    let mut filled = vec![0usize; n];
                    fill(&mut filled, 256, |i| 3 * i);
                    let odd = concat(0..n, 256, |part| part.filter(|i| i % 2 == 1).collect());
                    (filled, odd)
                });
                assert!(filled.iter().enumerate().all(|(i, &v)| v == 3 * i));
                assert_eq!(odd, (0..n).filter(|i| i % 2 == 1).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn join_returns_both_results_and_waits_for_the_stolen_half() {
        for threads in [1, 2] {
            let (a, b) = pool(threads).install(|| {
                join(
                    || 2,
                    || {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        3
                    },
                )
            });
            assert_eq!((a, b), (2, 3));
        }
        // A panic in the half another thread runs reaches the caller instead of leaving
        // it spinning.
        // (Run on a thread of its own, so that a caller left spinning fails the test
        // instead of hanging it.)
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let outcome = pool(2).install(|| {
                std::panic::catch_unwind(|| {
                    join(
                        || std::thread::sleep(std::time::Duration::from_millis(20)),
                        || panic!("b failed"),
                    )
                })
            });
            send.send(outcome.is_err()).unwrap();
        });
        let panicked = receive.recv_timeout(std::time::Duration::from_secs(20));
        assert_eq!(panicked, Ok(true), "the panic did not reach the caller");
        // Outside a pool: rayon's join on the global pool.
        let (a, b) = join(|| "a", || "b");
        assert_eq!((a, b), ("a", "b"));
    }
}
