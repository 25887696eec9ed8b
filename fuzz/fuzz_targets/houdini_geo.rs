//! Houdini JSON geometry reader: decode, triangulate, make a garment and a body.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(geo) = drape::io::houdini_geo::format::parse(text) else {
        return;
    };
    if let Ok(mesh) = drape::io::houdini_geo::to_mesh(Path::new("fuzz.geo"), "fuzz", &geo) {
        let _ = mesh.clone().into_garment();
        let _ = mesh.into_body();
    }
});
