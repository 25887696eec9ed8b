//! The goal function of keyframe control (Stuyck §8.2, eq. 8.1; Wojtan et al. 2006):
//!
//! ```text
//! Φ(θ) = Σ_k ½ Σ_i w_ki ‖x_i(n_k) − x*_ki‖² / Σ_i w_ki            keyframe positions
//!      + Σ_k ½ β Σ_i w_ki ‖v_i(n_k)‖² / Σ_i w_ki                   arrive at rest (optional)
//!      + Σ_k Φ_k(π_k(x(n_k)))                                      silhouette keyframes
//!      + ½ α Σ_n Σ_i ‖θ_in‖² / P                                    force regularisation
//! u_in = m_i g₀ θ_in
//! ```
//! The silhouette terms `Φ_k` compare the garment's image through camera `π_k` with a
//! target region ([`super::silhouette`]); 3D and silhouette keyframes may be mixed.
//! `x*_k` the keyframe shape at frame `n_k` (m, world space), `w_ki ∈ [0, 1]` its per-vertex
//! weights (`key_weight`, the diagonal of W_n), `β` the velocity weight (s²), `α` the
//! regularisation (`--regularization`), `P` the particle count, `u_in` the control force
//! on particle `i` during frame interval `n` (N), held over the interval's sub-steps
//! (Stuyck §8.4), and `θ_in` the same force in units of the particle's weight
//! `m_i g₀` (g₀ = 9.81 m/s²). Measuring forces in weights makes α independent of mesh
//! resolution and density: with α = 1e-3, pushing every particle with its own weight for
//! one frame costs as much as a 3.2 cm RMS error at one keyframe.
use super::keyframes::Keyframe;
use super::silhouette::{SilhouetteKey, SilhouetteTerm};
use crate::Vec3;

/// Standard gravity g₀ (m/s²): the unit of control forces is a particle's weight `m g₀`.
pub const G0: f64 = 9.81;

/// One keyframe term, at the end of frame interval `interval` (0-based from the first
/// frame).
#[derive(Debug, Clone)]
pub struct KeyTerm {
    /// Interval at whose end the keyframe applies (`frame − first − 1`).
    pub interval: usize,
    /// Target positions `x*` (m, world space, per particle).
    pub positions: Vec<Vec3>,
    /// Weights `w_i / Σ w` (normalised to sum 1).
    pub weights: Vec<f64>,
    /// How messages name it.
    pub name: String,
}

/// Φ with its parameters.
#[derive(Debug, Clone)]
pub struct Objective {
    /// Keyframe terms, sorted by interval.
    pub keys: Vec<KeyTerm>,
    /// Silhouette keyframe terms, sorted by interval.
    pub silhouettes: Vec<SilhouetteTerm>,
    /// The garment's triangles (particle indices), whose images the silhouettes compare.
    pub triangles: Vec<[usize; 3]>,
    /// α.
    pub regularization: f64,
    /// β (s²); 0 leaves velocities free.
    pub velocity_weight: f64,
    /// `m_i g₀` (N): the force of one control unit on each particle.
    pub unit: Vec<f64>,
}

/// Value of Φ split in its parts, and the keyframe error.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Breakdown {
    /// Keyframe position and velocity terms (m²).
    pub keyframes: f64,
    /// Silhouette terms Σ Φ_k.
    pub silhouettes: f64,
    /// Regularisation term.
    pub forces: f64,
    /// RMS weighted distance to the keyframes over all 3D keyframes (m).
    pub keyframe_error: f64,
    /// RMS over the silhouette keyframes of their errors `e_k` (normalised image units,
    /// 1 = half the image height; [`super::silhouette`]).
    pub silhouette_error: f64,
    /// Mean intersection over union of garment image and target over the silhouette
    /// keyframes (1 = exact; 0 without silhouettes).
    pub silhouette_iou: f64,
}

impl Breakdown {
    /// Φ.
    pub fn total(&self) -> f64 {
        self.keyframes + self.silhouettes + self.forces
    }
}

impl Objective {
    /// The objective for `keys` starting from frame `first`, on particles of masses
    /// `mass` (kg). Keys must lie in `first + 1 ..` with positive total weight (checked by
    /// the keyframe loader).
    pub fn new(
        keys: &[Keyframe],
        first: i32,
        mass: &[f64],
        regularization: f64,
        velocity_weight: f64,
    ) -> Self {
        let mut terms: Vec<KeyTerm> = keys
            .iter()
            .map(|k| {
                let total: f64 = k.weights.iter().sum();
                KeyTerm {
                    interval: (k.frame - first - 1).max(0) as usize,
                    positions: k.positions.clone(),
                    weights: k.weights.iter().map(|w| w / total).collect(),
                    name: k.name.clone(),
                }
            })
            .collect();
        terms.sort_by_key(|t| t.interval);
        Objective {
            keys: terms,
            silhouettes: Vec::new(),
            triangles: Vec::new(),
            regularization,
            velocity_weight,
            unit: mass.iter().map(|m| m * G0).collect(),
        }
    }

    /// Adds silhouette keyframes `keys` (frames in `first + 1 ..`, checked by the reader)
    /// of a garment with `triangles`.
    pub fn with_silhouettes(
        mut self,
        keys: &[SilhouetteKey],
        first: i32,
        triangles: &[[usize; 3]],
    ) -> Self {
        self.silhouettes = (keys.iter())
            .map(|k| SilhouetteTerm::new(k.clone(), first))
            .collect();
        self.silhouettes.sort_by_key(|t| t.interval);
        self.triangles = triangles.to_vec();
        self
    }

    /// Frame intervals the control acts over: up to the last keyframe.
    pub fn horizon(&self) -> usize {
        let shapes = self.keys.last().map_or(0, |k| k.interval + 1);
        let silhouettes = self.silhouettes.last().map_or(0, |k| k.interval + 1);
        shapes.max(silhouettes)
    }

    /// Number of control variables: 3 per particle per interval of the horizon.
    pub fn variables(&self) -> usize {
        3 * self.unit.len() * self.horizon()
    }

    /// The control forces `u_in = m_i g₀ θ_in` (N) of interval `n`.
    pub fn forces(&self, theta: &[f64], n: usize) -> Vec<Vec3> {
        let p = self.unit.len();
        let block = &theta[3 * p * n..3 * p * (n + 1)];
        (block.chunks_exact(3).zip(&self.unit))
            .map(|(t, u)| Vec3::new(t[0], t[1], t[2]) * *u)
            .collect()
    }

    /// Keyframe term `k` at state `(x, v)`: its value and adjoint seeds `∂Φ/∂x`, `∂Φ/∂v`
    /// (Stuyck eq. 8.11), and its weighted squared error Σ w ‖x − x*‖² (m²).
    pub fn key_term(&self, k: usize, x: &[Vec3], v: &[Vec3]) -> (f64, Vec<Vec3>, Vec<Vec3>, f64) {
        let key = &self.keys[k];
        let beta = self.velocity_weight;
        let mut value = 0.0;
        let mut error = 0.0;
        let mut gx = vec![Vec3::zeros(); x.len()];
        let mut gv = vec![Vec3::zeros(); x.len()];
        for (i, &w) in key.weights.iter().enumerate() {
            if w == 0.0 {
                continue;
            }
            let d = x[i] - key.positions[i];
            error += w * d.norm_squared();
            value += 0.5 * w * (d.norm_squared() + beta * v[i].norm_squared());
            gx[i] = w * d;
            gv[i] = (w * beta) * v[i];
        }
        (value, gx, gv, error)
    }

    /// Silhouette term `k` at positions `x`: its value, adjoint seed `∂Φ/∂x`, squared
    /// error `e_k²` and intersection over union.
    pub fn silhouette_term(&self, k: usize, x: &[Vec3]) -> (f64, Vec<Vec3>, f64, f64) {
        let term = &self.silhouettes[k];
        let v = term.evaluate(x, &self.triangles);
        let iou = term.iou(x, &self.triangles);
        (v.value, v.gradient, v.error_squared, iou)
    }

    /// Regularisation term ½ α Σ ‖θ‖² / P and its gradient, added to `gradient`.
    pub fn force_term(&self, theta: &[f64], gradient: &mut [f64]) -> f64 {
        let scale = self.regularization / self.unit.len().max(1) as f64;
        for (g, t) in gradient.iter_mut().zip(theta) {
            *g += scale * t;
        }
        0.5 * scale * theta.iter().map(|t| t * t).sum::<f64>()
    }
}
