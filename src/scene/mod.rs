//! The scene as importers deliver it: garments (meshes with per-corner UVs and pin weights)
//! in their source vertex order, independent of any solver.
pub mod material;
pub mod units;

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
    /// The garment's own animation (skin, morphs, time samples) as world-space particle
    /// positions, if it has one: pinned particles follow it (docs/reference.md, "Inputs").
    pub animation: Option<Animation>,
    /// Target shapes for `drape control` (docs/reference.md, "Inputs"): `(frame, positions)` with one
    /// object-local position per particle, sorted by frame. Empty when the file has none.
    pub keyframes: Vec<(i32, Vec<Vec3>)>,
    /// Per-particle keyframe weight in [0, 1] (`key_weight` attribute, the W_n of the
    /// control objective); `None` means every particle has weight 1.
    pub key_weight: Option<Vec<f64>>,
    /// The source mesh's polygons over output points (cache formats that store topology:
    /// USD, Houdini `.geo`). Empty when the importer does not provide them; writers then
    /// use `triangles` and `corner_uvs` through each particle's first output point.
    pub output_faces: OutputFaces,
}

/// Polygons of a garment's source mesh in output-point indices, with a UV per corner.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputFaces {
    /// Corner count of each polygon, in source order.
    pub counts: Vec<usize>,
    /// Output point of each corner, polygon after polygon, in source winding
    /// (counter-clockwise seen from the front).
    pub points: Vec<usize>,
    /// UV of each corner in file units, parallel to `points` (empty if the mesh has none).
    pub uvs: Vec<Vec2>,
}

impl Garment {
    /// A garment of triangles alone, without a source file: one output point per particle,
    /// the identity world transform, no animation or keyframes, and the triangles as its
    /// output faces (procedural fixtures and the specimens of [`crate::textile`]).
    pub fn from_triangles(
        name: &str,
        source: PathBuf,
        positions: Vec<Vec3>,
        triangles: Vec<[usize; 3]>,
        corner_uvs: Vec<[Vec2; 3]>,
        pin: Vec<f64>,
    ) -> Garment {
        let output_faces = OutputFaces {
            counts: vec![3; triangles.len()],
            points: triangles.iter().flatten().copied().collect(),
            uvs: corner_uvs.iter().flatten().copied().collect(),
        };
        Garment {
            name: name.into(),
            source,
            output_points: (0..positions.len()).collect(),
            positions,
            triangles,
            corner_uvs,
            pin,
            world_linear: Mat3::identity(),
            world_translation: Vec3::zeros(),
            animation: None,
            keyframes: Vec::new(),
            key_weight: None,
            output_faces,
        }
    }

    /// Number of pinned particles (pin weight ≥ 0.5, docs/reference.md `inspect --json`).
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

/// World-space vertex positions sampled over time, interpolated linearly in between
/// (docs/reference.md, "Inputs": evaluated at every step by interpolation between frames).
#[derive(Debug, Clone, PartialEq)]
pub struct Animation {
    /// Sample times as frame numbers (file time × fps), strictly increasing, at least one.
    pub frames: Vec<f64>,
    /// World-space positions of every vertex at each sample (`positions[k].len()` = vertices).
    pub positions: Vec<Vec<Vec3>>,
}

impl Animation {
    /// A single sample: a static mesh.
    pub fn fixed(positions: Vec<Vec3>) -> Self {
        Animation {
            frames: vec![0.0],
            positions: vec![positions],
        }
    }

    /// Positions at `frame` (fractional), linear between the bracketing samples and held
    /// constant before the first and after the last.
    pub fn sample(&self, frame: f64) -> Vec<Vec3> {
        match self.bracket(frame) {
            (k, _, None) => self.positions[k].clone(),
            (k0, k1, Some(s)) => self.positions[k0]
                .iter()
                .zip(&self.positions[k1])
                .map(|(a, b)| a + (b - a) * s)
                .collect(),
        }
    }

    /// Position of vertex `i` at `frame`, as [`Animation::sample`] gives it.
    pub fn sample_point(&self, frame: f64, i: usize) -> Vec3 {
        match self.bracket(frame) {
            (k, _, None) => self.positions[k][i],
            (k0, k1, Some(s)) => {
                let (a, b) = (self.positions[k0][i], self.positions[k1][i]);
                a + (b - a) * s
            }
        }
    }

    /// The samples around `frame` and the blend between them (`None`: sample `k0` alone,
    /// before the first or after the last).
    fn bracket(&self, frame: f64) -> (usize, usize, Option<f64>) {
        let n = self.frames.len();
        if n == 1 || frame <= self.frames[0] {
            return (0, 0, None);
        }
        if frame >= self.frames[n - 1] {
            return (n - 1, n - 1, None);
        }
        let k = self.frames.partition_point(|&f| f <= frame).clamp(1, n - 1);
        let (f0, f1) = (self.frames[k - 1], self.frames[k]);
        (k - 1, k, Some((frame - f0) / (f1 - f0)))
    }

    /// First and last sample frame.
    pub fn range(&self) -> (f64, f64) {
        (self.frames[0], self.frames[self.frames.len() - 1])
    }
}

/// A collision body: a triangle mesh, static or animated, in world space.
#[derive(Debug, Clone)]
pub struct Body {
    /// Node / prim / file-stem name the user refers to with `--body`.
    pub name: String,
    /// The file it came from.
    pub source: PathBuf,
    /// Triangles as vertex indices.
    pub triangles: Vec<[usize; 3]>,
    /// World-space vertex positions over time.
    pub animation: Animation,
    /// Collision thickness (m) if the file or scene file sets one, else the material's.
    pub thickness: Option<f64>,
    /// Friction coefficient if the file or scene file sets one, else the material's.
    pub friction: Option<f64>,
}

/// Everything read from the input files.
#[derive(Debug, Clone)]
pub struct Scene {
    /// Garments to simulate.
    pub garments: Vec<Garment>,
    /// Collision bodies.
    pub bodies: Vec<Body>,
    /// Up axis of the source files (gravity points against it).
    pub up: UpAxis,
    /// Frames per second stored in the file, if any.
    pub fps: Option<f64>,
    /// Animation frame range stored in the file, if any.
    pub frame_range: Option<(i32, i32)>,
}
