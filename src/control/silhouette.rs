//! Keyframe silhouettes: the garment's outline as one camera sees it, matched against a
//! target region drawn in that camera's image (docs/reference.md, "Keyframe silhouettes").
//!
//! A silhouette keyframe `k` replaces the 3D target `x*_k` of the control objective
//! ([`super::objective`]; Stuyck §8.2 eq. 8.1, Wojtan et al. 2006 §4) by an image-space
//! term. With `π` the camera's perspective projection (glTF convention: the camera looks
//! down its −Z axis, +Y up) to normalised image coordinates (x, y ∈ [−1, 1], y up),
//!
//! ```text
//! q_i   = π(x_i(n_k))                        particle i in the image
//! R_k   the target region: even–odd interior of the outlines, boundary ∂R_k
//! G     the garment's image: union of its projected triangles
//! s_j   S points sampled along ∂R_k (spacing perimeter / 256)
//!
//! Φ_k = ½ w_k [ (1/P) Σ_i d(q_i, R_k)²         garment points outside the target, pulled in
//!             + (1/S) Σ_j d(s_j, G)² ]         target outline not covered, garment pulled out
//! ```
//! `d(q, R)` is the distance from `q` to the nearest point of `R` (0 inside), `P` the
//! particle count, `w_k` the keyframe's weight. The first sum is the one-sided chamfer
//! distance of the garment to the target, the second the one-sided chamfer distance of the
//! target outline to the garment (as in differentiable silhouette fitting, e.g. Kato et
//! al. 2018, where the area term is replaced here by distances so that a missing part
//! far from the garment still has a gradient). Both are continuous in the positions and
//! differentiable almost everywhere: the nearest point lies on one segment, whose end
//! points carry the gradient with the segment parameter's weights. Depth is free: only
//! `π(x)` enters. Points at or behind the camera's near distance ([`NEAR`]) are left out
//! of both sums (and their triangles out of `G`); bodies do not hide the garment.
//!
//! `∂Φ_k/∂x_i = Lᵀ J_iᵀ ∂Φ_k/∂q_i` with `L` the camera-from-world linear part and `J_i`
//! the 2 × 3 Jacobian of the perspective division at particle i; it seeds the adjoint
//! sweep like a 3D keyframe's `W(x − x*)` (Stuyck eq. 8.11).
//!
//! The error reported for a silhouette keyframe is `e_k = √(2 Φ_k / w_k)`, a root-mean
//! distance in normalised image units (1 = half the image height); the measure of match is
//! the intersection over union of the rasterised garment image and the target region
//! ([`SilhouetteTerm::iou`]).
mod image;

pub use image::{Outline, Region, IOU_RESOLUTION};

use crate::{Mat3, Vec2, Vec3};

/// Camera-space depth (in the scene's length unit) below which a point counts as behind
/// the camera: 1e-3.
pub const NEAR: f64 = 1e-3;

/// Target outline samples per keyframe (about): the spacing is the perimeter over this.
pub const OUTLINE_SAMPLES: usize = 256;

/// A perspective camera: `world_from_camera` inverted, and the image scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    /// Camera-from-world linear part `L`.
    linear: Mat3,
    /// Camera-from-world translation.
    translation: Vec3,
    /// `1 / (aspect · tan(yfov/2))`, `1 / tan(yfov/2)`.
    scale: Vec2,
}

impl Camera {
    /// The camera whose placement is the column-major 4 × 4 matrix `world_from_camera`,
    /// with vertical field of view `yfov` (radians) and `aspect` = width / height. An error
    /// message (for the caller to name the file) if the matrix is not a finite invertible
    /// affine transform or the lens is not in `0 < yfov < π`, `aspect > 0`.
    pub fn new(world_from_camera: &[f64; 16], yfov: f64, aspect: f64) -> Result<Camera, String> {
        let m = world_from_camera;
        if m.iter().any(|v| !v.is_finite()) {
            return Err("world_from_camera holds a number that is not finite".into());
        }
        if [m[3], m[7], m[11]].iter().any(|v| v.abs() > 1e-9) || (m[15] - 1.0).abs() > 1e-9 {
            return Err(format!(
                "world_from_camera is not an affine transform: its last row (elements 3, 7, \
                 11, 15 in column-major order) is [{}, {}, {}, {}], not [0, 0, 0, 1]; give \
                 the camera object's world matrix in column-major order",
                m[3], m[7], m[11], m[15]
            ));
        }
        let linear = Mat3::new(m[0], m[4], m[8], m[1], m[5], m[9], m[2], m[6], m[10]);
        let size = linear.norm().max(f64::MIN_POSITIVE);
        let inverse = match linear.try_inverse() {
            Some(i) if linear.determinant().abs() > 1e-12 * size.powi(3) => i,
            _ => {
                return Err(
                    "world_from_camera is degenerate (its 3 × 3 part cannot be inverted); \
                     give the camera object's world matrix"
                        .into(),
                )
            }
        };
        if !(yfov.is_finite() && yfov > 0.0 && yfov < std::f64::consts::PI) {
            return Err(format!(
                "yfov {yfov} is not a vertical field of view in radians between 0 and π \
                 (0.6 is a 50 mm lens on a full-frame camera)"
            ));
        }
        if !(aspect.is_finite() && aspect > 0.0) {
            return Err(format!(
                "aspect {aspect} is not a width / height ratio above 0 (1.78 for 16:9)"
            ));
        }
        let t = (0.5 * yfov).tan();
        Ok(Camera {
            linear: inverse,
            translation: -(inverse * Vec3::new(m[12], m[13], m[14])),
            scale: Vec2::new(1.0 / (aspect * t), 1.0 / t),
        })
    }

    /// `x` (world) in camera space.
    pub fn to_camera(&self, x: &Vec3) -> Vec3 {
        self.linear * x + self.translation
    }

    /// `π(x)`: `x` (world) in normalised image coordinates, `None` at or behind [`NEAR`].
    pub fn project(&self, x: &Vec3) -> Option<Vec2> {
        let p = self.to_camera(x);
        let z = -p.z;
        (z > NEAR).then(|| Vec2::new(self.scale.x * p.x / z, self.scale.y * p.y / z))
    }

    /// `(∂π/∂x)ᵀ g`: the world-space gradient of a function of `π(x)` whose image-space
    /// gradient at `π(x)` is `g` (`x` in front of the camera).
    pub fn pull_back(&self, x: &Vec3, g: Vec2) -> Vec3 {
        let p = self.to_camera(x);
        let z = -p.z;
        let (a, b) = (g.x * self.scale.x, g.y * self.scale.y);
        let dp = Vec3::new(a / z, b / z, (a * p.x + b * p.y) / (z * z));
        self.linear.transpose() * dp
    }
}

/// A silhouette keyframe: the target region at a frame, seen by a camera.
#[derive(Debug, Clone)]
pub struct SilhouetteKey {
    /// Frame number the target applies to (in `first + 1 ..= last`).
    pub frame: i32,
    /// The camera at that frame.
    pub camera: Camera,
    /// The target region (closed polygons, even–odd).
    pub region: Region,
    /// `w_k ≥ 0`: the keyframe's weight against the others and the force term. Default 1.
    pub weight: f64,
    /// How messages name it: `silhouettes.json keyframe 2 (frame 40)`.
    pub name: String,
}

/// One silhouette term of Φ, ready to evaluate.
#[derive(Debug, Clone)]
pub struct SilhouetteTerm {
    /// Interval at whose end the keyframe applies (`frame − first − 1`).
    pub interval: usize,
    /// The keyframe.
    pub key: SilhouetteKey,
    /// `s_j`: points along the target outline.
    samples: Vec<Vec2>,
    /// The target region rasterised for [`SilhouetteTerm::iou`].
    mask: Vec<bool>,
}

/// What one silhouette term gives at a state.
#[derive(Debug, Clone)]
pub struct SilhouetteValue {
    /// `Φ_k`.
    pub value: f64,
    /// `∂Φ_k/∂x` per particle.
    pub gradient: Vec<Vec3>,
    /// `e_k²` (normalised image units squared).
    pub error_squared: f64,
}

impl SilhouetteTerm {
    /// The term of `key` in a run starting at frame `first`.
    pub fn new(key: SilhouetteKey, first: i32) -> Self {
        let samples = key.region.samples(OUTLINE_SAMPLES);
        let mask = key.region.raster(IOU_RESOLUTION);
        SilhouetteTerm {
            interval: (key.frame - first - 1).max(0) as usize,
            key,
            samples,
            mask,
        }
    }

    /// Projected particles (`None` behind the camera).
    fn project(&self, x: &[Vec3]) -> Vec<Option<Vec2>> {
        x.iter().map(|p| self.key.camera.project(p)).collect()
    }

    /// `Φ_k` at positions `x` of a garment with `triangles`, its gradient and `e_k²`.
    pub fn evaluate(&self, x: &[Vec3], triangles: &[[usize; 3]]) -> SilhouetteValue {
        let q = self.project(x);
        let region = &self.key.region;
        let p = x.len().max(1) as f64;
        let s = self.samples.len().max(1) as f64;
        let mut image_gradient = vec![Vec2::zeros(); x.len()];
        // Garment points outside the target: d(q_i, R)² / P.
        let mut outside = 0.0;
        for (i, qi) in q.iter().enumerate() {
            let Some(qi) = qi else { continue };
            if region.contains(qi) {
                continue;
            }
            let d = qi - region.nearest_boundary_point(qi);
            outside += d.norm_squared();
            image_gradient[i] += d * (2.0 / p);
        }
        // Target outline not covered: d(s_j, G)² / S, G the projected triangles.
        let garment = image::Projected::new(&q, triangles);
        let mut uncovered = 0.0;
        for sj in &self.samples {
            if garment.covers(sj) {
                continue;
            }
            let Some(near) = garment.nearest(sj) else {
                // Nothing of the garment in front of the camera: a constant miss.
                uncovered += 4.0;
                continue;
            };
            let e = near.point - sj;
            uncovered += e.norm_squared();
            let g = e * (2.0 / s);
            image_gradient[near.ends[0]] += g * (1.0 - near.t);
            image_gradient[near.ends[1]] += g * near.t;
        }
        let error_squared = outside / p + uncovered / s;
        let half_w = 0.5 * self.key.weight;
        let gradient = (x.iter().zip(&image_gradient))
            .map(|(xi, g)| {
                if *g == Vec2::zeros() {
                    Vec3::zeros()
                } else {
                    self.key.camera.pull_back(xi, g * half_w)
                }
            })
            .collect();
        SilhouetteValue {
            value: half_w * error_squared,
            gradient,
            error_squared,
        }
    }

    /// Intersection over union of the garment's image (its projected triangles,
    /// rasterised) and the target region, over the camera's frame at
    /// [`IOU_RESOLUTION`]² samples; 1 when both are empty.
    pub fn iou(&self, x: &[Vec3], triangles: &[[usize; 3]]) -> f64 {
        let garment = rasterise(&self.key.camera, x, triangles, IOU_RESOLUTION);
        let (mut both, mut either) = (0usize, 0usize);
        for (g, t) in garment.iter().zip(&self.mask) {
            both += usize::from(*g && *t);
            either += usize::from(*g || *t);
        }
        if either == 0 {
            1.0
        } else {
            both as f64 / either as f64
        }
    }
}

/// The garment's image through `camera` (its triangles with every corner in front,
/// positions `x`) on an `n` × `n` grid over the camera's frame, row by row from y = −1;
/// [`Region::trace`] turns it into outlines.
pub fn rasterise(camera: &Camera, x: &[Vec3], triangles: &[[usize; 3]], n: usize) -> Vec<bool> {
    let q: Vec<Option<Vec2>> = x.iter().map(|p| camera.project(p)).collect();
    image::Projected::new(&q, triangles).raster(n)
}

#[cfg(test)]
mod tests;
