//! USD crate reader: check the memory budget, parse with `openusd`, build the meshes, pick garments
//! and bodies. A panic inside `openusd` is caught by the reader and is an input error like
//! any other, so the panic hook is silenced; an abort (an allocation refused, a stack
//! overflow), a timeout or a panic outside the crate is a bug.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::Once;

static QUIET: Once = Once::new();

/// A memory budget well under libFuzzer's `-rss_limit_mb=2048`: a file the budget
/// accepts that still takes more than the RSS limit shows the budget underestimates.
const BUDGET: u64 = 256 << 20;

fuzz_target!(|data: &[u8]| {
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let Ok(layer) = drape::io::usd::usdc::parse_within(data, BUDGET) else {
        return;
    };
    if let Ok(imported) = drape::io::usd::from_layer(Path::new("fuzz.usdc"), &layer) {
        let _ = imported.select(&[], &[], false);
    }
});
