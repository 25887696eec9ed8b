//! Scene-file parser and its checks (no referenced file is opened).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = drape::io::scene_file::SceneFile::parse(text);
    }
});
