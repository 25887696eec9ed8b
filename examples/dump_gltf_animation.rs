//! Prints drape's evaluation of every mesh of a glTF file at given frames, as JSON, for
//! the reference test `tests/python/test_gltf_reference.py` (which evaluates the same file
//! with its own skinning and sampling code).
//!
//! ```text
//! cargo run --example dump_gltf_animation -- FILE [--fps F] FRAME...
//! {"file": "...", "fps": 24.0, "time_range": [t0, t1] | null,
//!  "meshes": [{"name": "Body", "node": 4, "skinned": true, "animated": true,
//!              "frames": {"13": [[x, y, z], ...], ...}}]}
//! ```
//! Positions are world-space, one per glTF vertex (primitives concatenated, unwelded),
//! at time = frame / fps.
use drape::io::gltf::GltfFile;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

fn run() -> Result<Value, String> {
    let mut args = std::env::args().skip(1);
    let file = PathBuf::from(
        args.next()
            .ok_or("usage: dump_gltf_animation FILE [--fps F] FRAME...")?,
    );
    let mut fps = 24.0;
    let mut frames: Vec<f64> = Vec::new();
    while let Some(a) = args.next() {
        if a == "--fps" {
            let v = args.next().ok_or("--fps needs a value")?;
            fps = v.parse().map_err(|_| format!("--fps {v}: not a number"))?;
        } else {
            frames.push(a.parse().map_err(|_| format!("{a}: not a frame number"))?);
        }
    }
    let gltf = GltfFile::open(&file).map_err(|e| e.to_string())?;
    let poses: Vec<_> = frames.iter().map(|f| gltf.pose(f / fps)).collect();
    let meshes: Vec<Value> = gltf
        .instances()
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let mut by_frame = Map::new();
            for (f, pose) in frames.iter().zip(&poses) {
                let p: Vec<[f64; 3]> = gltf
                    .world_positions(i, pose)
                    .iter()
                    .map(|p| [p.x, p.y, p.z])
                    .collect();
                by_frame.insert(f.to_string(), json!(p));
            }
            json!({"name": inst.name, "node": inst.node, "skinned": gltf.is_skinned(i),
                   "animated": gltf.is_animated(i), "frames": by_frame})
        })
        .collect();
    Ok(json!({"file": file, "fps": fps, "time_range": gltf.time_range(), "meshes": meshes}))
}

fn main() {
    match run() {
        Ok(v) => println!("{v}"),
        Err(e) => {
            eprintln!("dump_gltf_animation: {e}");
            std::process::exit(2);
        }
    }
}
