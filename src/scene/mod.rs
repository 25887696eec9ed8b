//! The scene as importers deliver it: garments (meshes with per-corner UVs and pin weights)
//! in their source vertex order, independent of any solver.
pub mod material;

pub use material::Material;

use crate::{Mat3, Vec2, Vec3};
use std::path::PathBuf;

/// Axis that points up in a file's convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpAxis {
    /// +Y up (glTF, most USD from Maya/Houdini).
    Y,
    /// +Z up (Blender's native axes, some USD).
    Z,
}

impl UpAxis {
    /// Unit vector of the up direction.
    pub fn vector(self) -> Vec3 {
        match self {
            UpAxis::Y => Vec3::new(0.0, 1.0, 0.0),
            UpAxis::Z => Vec3::new(0.0, 0.0, 1.0),
        }
    }
}

/// A garment mesh as imported, already welded at UV seams.
///
/// Particles are the welded vertices; every triangle corner carries its own UV (a particle
/// on a seam has one UV per panel it belongs to, Baraff §2.1 footnote 3).
#[derive(Debug, Clone)]
pub struct Garment {
    /// Node / prim / file-stem name the user refers to with `--garment`.
    pub name: String,
    /// The file it came from (for messages and the default output path).
    pub source: PathBuf,
    /// Particle positions in the garment's object-local space (metres).
    pub positions: Vec<Vec3>,
    /// Triangles as particle indices (counter-clockwise seen from the front).
    pub triangles: Vec<[usize; 3]>,
    /// UV of each triangle corner, in the file's UV units (scaled later per `--uv-scale`).
    pub corner_uvs: Vec<[Vec2; 3]>,
    /// Pin weight per particle in [0, 1]; a particle with weight ≥ 0.5 is pinned.
    pub pin: Vec<f64>,
    /// For each point of the output cache (source vertex order), the particle it shows.
    pub output_points: Vec<usize>,
    /// Object-to-world transform at the first frame (rotation/scale part and translation).
    pub world_linear: Mat3,
    /// Translation part of the object-to-world transform.
    pub world_translation: Vec3,
}

impl Garment {
    /// Number of pinned particles (pin weight ≥ 0.5, SPEC `inspect`).
    pub fn pinned_count(&self) -> usize {
        self.pin.iter().filter(|&&w| w >= 0.5).count()
    }

    /// Particle positions in world space.
    pub fn world_positions(&self) -> Vec<Vec3> {
        self.positions
            .iter()
            .map(|p| self.world_linear * p + self.world_translation)
            .collect()
    }
}

/// Everything read from the input files.
#[derive(Debug, Clone)]
pub struct Scene {
    /// Garments to simulate.
    pub garments: Vec<Garment>,
    /// Up axis of the source files (gravity points against it).
    pub up: UpAxis,
    /// Frames per second stored in the file, if any.
    pub fps: Option<f64>,
    /// Animation frame range stored in the file, if any.
    pub frame_range: Option<(i32, i32)>,
}
