//! Calls into third-party readers (`openusd`, `gltf`, `draco-core`) whose panics on a malformed file are input
//! errors, not bugs of drape: [`catch`] runs such a call and turns its panic into `None`,
//! and [`catching`] tells the process's panic hook (which otherwise reports a panic as an
//! internal error and exits 1) to stay silent and let the panic unwind to [`catch`].
//! A last line of defence only: what can be checked beforehand (sizes against the file
//! and the memory budget, [`usd::crate_budget`](super::usd::crate_budget)) is checked
//! before the call, since an allocation failure or a stack overflow cannot be caught.
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// How many [`catch`] calls the current thread is inside.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f`; `None` if it panicked.
pub fn catch<T>(f: impl FnOnce() -> T) -> Option<T> {
    DEPTH.with(|d| d.set(d.get() + 1));
    let out = catch_unwind(AssertUnwindSafe(f)).ok();
    DEPTH.with(|d| d.set(d.get() - 1));
    out
}

/// True while the current thread runs inside [`catch`].
pub fn catching() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_catch_is_none_and_the_flag_is_cleared() {
        assert!(!catching());
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let out = catch(|| {
            assert!(catching());
            panic!("malformed")
        });
        std::panic::set_hook(quiet);
        assert_eq!(out, None::<()>);
        assert!(!catching());
        assert_eq!(catch(|| 7), Some(7));
    }
}
