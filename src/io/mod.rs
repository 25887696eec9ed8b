//! Importers: files to [`Scene`](crate::scene::Scene). They know nothing of solvers.
//!
//! Only glTF garments are read so far ([`gltf`]); USD, Houdini `.geo` and scene files come
//! with the inputs issue.
pub mod gltf;
pub mod weld;

use crate::error::{Error, Result};
use crate::scene::Scene;
use std::path::Path;

/// Reads a scene file by extension.
pub fn load_scene(path: &Path) -> Result<Scene> {
    if !path.exists() {
        return Err(Error::input(path, None, "file not found; check the path"));
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "gltf" | "glb" => gltf::read(path),
        "usd" | "usda" | "usdc" | "geo" | "json" => Err(Error::input(
            path,
            None,
            format!(".{ext} input is not supported by this build yet; export the garment as glTF (.gltf/.glb)"),
        )),
        _ => Err(Error::input(
            path,
            None,
            "unknown scene format; give a .gltf or .glb file",
        )),
    }
}

/// Reads `path` and keeps the garments named in `names` (all marked garments when empty).
/// Errors name the missing garment and list the meshes that exist.
pub fn load_garments(path: &Path, names: &[String]) -> Result<Scene> {
    let _ = load_scene(path)?; // existence and format checks with their messages
    gltf::select_garments(path, names)
}
