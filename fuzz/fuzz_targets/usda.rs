//! USD text reader: parse, build the meshes, pick garments and bodies.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(layer) = drape::io::usd::parser::parse(text) else {
        return;
    };
    if let Ok(imported) = drape::io::usd::from_layer(Path::new("fuzz.usda"), &layer) {
        let _ = imported.select(&[], &[], false);
    }
});
