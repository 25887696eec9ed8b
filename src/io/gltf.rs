//! glTF 2.0 garments (`.gltf`, `.glb`) on the `gltf` crate.
use crate::error::Result;
use crate::scene::Scene;
use std::path::Path;

/// Reads every mesh node of a glTF file; meshes marked as garments (SPEC "Common options":
/// `extras.drape.role = "garment"` or `extras.drape_role`) become [`Garment`](crate::scene::Garment)s.
pub fn read(path: &Path) -> Result<Scene> {
    let _ = path;
    todo!()
}
