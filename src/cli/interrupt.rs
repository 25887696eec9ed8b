//! SIGINT / SIGTERM (and SIGHUP; Ctrl-C on Windows): stop at the next frame boundary.
//!
//! The first signal only requests a stop ([`crate::bake::Stop`], shared by [`stop`]),
//! which the frame loop reads after each finished frame; the bake then ends with exit
//! code 130 and its partial caches valid (docs/reference.md, "Outputs"). A second signal
//! exits at once with 130: the partial caches keep the frames finished before it (a PC2's
//! header is only updated after its frame is complete; the frame being written may be
//! missing from other formats).
use crate::bake::Stop;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

static STOP: OnceLock<Stop> = OnceLock::new();
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: OnceLock<bool> = OnceLock::new();

/// Installs the handler once per process; returns false if it could not be installed
/// (another handler owns the signals), in which case signals keep their default action.
/// `json`: the second signal's message is a JSON error event (docs/reference.md, "Progress").
pub fn install(json: bool) -> bool {
    *INSTALLED.get_or_init(|| {
        ctrlc::set_handler(move || {
            if SIGNALS.fetch_add(1, Ordering::SeqCst) > 0 {
                super::progress::print_error(
                    json,
                    130,
                    "interrupted again: stopped at once; the partial caches keep the frames \
                     finished before the first signal",
                );
                std::process::exit(130);
            }
            stop().request();
        })
        .is_ok()
    })
}

/// The stop request the signals raise (the same for the whole process).
pub fn stop() -> Stop {
    STOP.get_or_init(Stop::new).clone()
}

/// True once a stop was requested.
pub fn requested() -> bool {
    stop().requested()
}
