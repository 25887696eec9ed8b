//! Prints drape's reading of every mesh of a scene file (USD, Alembic, glTF, `.geo`) at
//! given frames, as JSON, for reference tests that evaluate the same file with the program
//! that wrote it (`tests/python/test_usd_blend_shapes.py` against Pixar's UsdSkel).
//!
//! ```text
//! cargo run --example dump_scene_points -- FILE FRAME...
//! {"file": "...", "up": "Y", "meshes": [{"name": "Body", "animated": true,
//!   "frames": {"13": [[x, y, z], ...], ...}}]}
//! ```
//! Positions are world-space metres in the file's own axes, one per point, at each frame
//! (an unanimated mesh gives its first-frame positions at every frame).
use serde_json::{json, Map, Value};
use std::path::PathBuf;

fn run() -> Result<Value, String> {
    let mut args = std::env::args().skip(1);
    let file = PathBuf::from(
        args.next()
            .ok_or("usage: dump_scene_points FILE FRAME...")?,
    );
    let frames = args
        .map(|a| {
            a.parse::<f64>()
                .map_err(|_| format!("{a}: not a frame number"))
        })
        .collect::<Result<Vec<f64>, String>>()?;
    let imported = drape::io::read_objects(&file).map_err(|e| e.to_string())?;
    let meshes: Vec<Value> = imported
        .meshes
        .iter()
        .map(|m| {
            let mut by_frame = Map::new();
            for &f in &frames {
                let p = match &m.animation {
                    Some(a) => a.sample(f),
                    None => m.world_positions(),
                };
                let p: Vec<[f64; 3]> = p.iter().map(|p| [p.x, p.y, p.z]).collect();
                by_frame.insert(f.to_string(), json!(p));
            }
            json!({"name": m.name, "animated": m.animation.is_some(), "frames": by_frame})
        })
        .collect();
    Ok(json!({"file": file, "up": format!("{:?}", imported.up), "meshes": meshes}))
}

fn main() {
    match run() {
        Ok(v) => println!("{v}"),
        Err(e) => {
            eprintln!("dump_scene_points: {e}");
            std::process::exit(2);
        }
    }
}
