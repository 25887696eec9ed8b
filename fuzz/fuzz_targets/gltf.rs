//! glTF / GLB reader: decode, then evaluate every mesh instance at the start, middle and
//! end of the animation (skinning, morphs, node animation).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = drape::io::gltf::GltfFile::from_slice(data, Path::new("fuzz.glb")) else {
        return;
    };
    let (a, b) = file.time_range().unwrap_or((0.0, 0.0));
    for t in [a, 0.5 * (a + b), b] {
        let pose = file.pose(t);
        for i in 0..file.instances().len() {
            let _ = file.world_positions(i, &pose);
        }
    }
});
