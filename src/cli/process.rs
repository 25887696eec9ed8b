//! How the drape process meets its environment: signals that would kill it where an error
//! fits, and a panic (a bug) reported as the one error line every run ends with
//! (docs/reference.md, "Exit codes").
//!
//! * `SIGXFSZ` (a write past `ulimit -f`) is ignored, so the write fails with `EFBIG`
//!   and the bake ends like one on a full disk: exit 3, the partial cache cut back to its
//!   finished frames.
//! * `SIGPIPE` stays ignored (Rust's default): a closed stdout or stderr is a write error.
//! * A panic prints `error: internal error: …` (a JSON `error` event with code 1 under
//!   `--progress json`, so the stream stays one JSON object per line) and exits 1; one
//!   inside a third-party reader ([`crate::io::foreign`]) unwinds silently to its caller.
use std::io::Write;

/// Ignores `SIGXFSZ`; called first thing in `main`.
pub fn prepare() {
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler code.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Replaces the panic message by the error line of exit code 1 (`json`: a JSON event).
pub fn on_panic(json: bool) {
    std::panic::set_hook(Box::new(move |info| {
        if crate::io::foreign::catching() {
            return;
        }
        let what = match info.payload().downcast_ref::<&str>() {
            Some(s) => (*s).to_string(),
            None => info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default(),
        };
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        super::progress::print_error(
            json,
            1,
            &format!("internal error: {what}{at}; please report it with the command line"),
        );
        let _ = std::io::stderr().flush();
        std::process::exit(1);
    }));
}

/// Writes `text` to stdout (command output: `inspect`, `bench`) and flushes it; a failed
/// write (`>/dev/full`, a closed pipe) is an output error naming stdout (exit 3 when the
/// disk is full, else 2), never a panic.
pub fn print(text: &str) -> crate::error::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| crate::error::Error::Output {
            path: "<stdout>".into(),
            source,
        })
}
