//! Writes the sheet-over-sphere scene of Baraff & Witkin fig. 1 as files `drape simulate`
//! reads: a horizontal 1.4 m sheet of `SIDE × SIDE` particles 0.45 m above a 0.35 m
//! sphere ([`drape::bench::drape_over_sphere`]), falling onto it, draping and folding
//! over itself (body contact and self-contact).
//!
//! ```text
//! cargo run --release --example sheet_on_sphere -- SIDE DIR
//! target/release/drape simulate DIR/scene.json --frames 1..120 -o DIR/sheet.pc2
//! ```
//!
//! | file | content |
//! |---|---|
//! | `DIR/sheet.gltf` | the sheet, marked as the garment |
//! | `DIR/sphere.gltf` | the sphere (UVs all zero), unmarked: a body |
//! | `DIR/scene.json` | scene file: the sheet as garment, the sphere as body |
//!
//! The checkpoint tests (`tests/resume.rs`) include this file (`#[path]`) to build their
//! 10,000-particle scene.
use drape::fixtures::{write_gltf, write_gltf_with, GltfWriteOptions};
use drape::scene::Garment;
use drape::{Error, Result, Vec2};
use std::path::{Path, PathBuf};

/// Writes the scene of a `side × side` sheet into `dir`; returns the scene file.
pub fn write_sheet_on_sphere(side: usize, dir: &Path) -> Result<PathBuf> {
    let (sheet, sphere) = drape::bench::drape_over_sphere(side);
    write_gltf(&[sheet], &dir.join("sheet.gltf"))?;
    let zero = [Vec2::zeros(); 3];
    let body = Garment::from_triangles(
        &sphere.name,
        sphere.source.clone(),
        sphere.animation.positions[0].clone(),
        sphere.triangles.clone(),
        vec![zero; sphere.triangles.len()],
        vec![0.0; sphere.animation.positions[0].len()],
    );
    let unmarked = GltfWriteOptions {
        mark_garment: false,
        ..GltfWriteOptions::default()
    };
    write_gltf_with(&[body], &dir.join("sphere.gltf"), &unmarked)?;
    let scene = dir.join("scene.json");
    let text = r#"{"garments": [{"file": "sheet.gltf"}], "bodies": [{"file": "sphere.gltf"}]}"#;
    std::fs::write(&scene, text).map_err(|source| Error::Output {
        path: scene.clone(),
        source,
    })?;
    Ok(scene)
}

#[allow(dead_code)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let side = args.first().and_then(|s| s.parse().ok());
    let (Some(side), Some(dir)) = (side, args.get(1)) else {
        eprintln!("usage: sheet_on_sphere SIDE DIR   (SIDE = particles per side, e.g. 100)");
        std::process::exit(2);
    };
    match write_sheet_on_sphere(side, Path::new(dir)) {
        Ok(scene) => println!("wrote {}", scene.display()),
        Err(e) => {
            eprintln!("sheet_on_sphere: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
