//! Keyframe targets q*_n of the control objective (docs/reference.md, "Inputs"; Stuyck ch. 8 eq. 8.1,
//! Wojtan et al. 2006):
//!
//! ```text
//! Φ(u) = ½ Σ_n ‖W_n (q_n − q*_n)‖² + α_n ‖u_n‖²
//!
//! q*_n  target particle positions at frame n, world space (m)     — Keyframe::positions
//! W_n   diagonal per-particle weights in [0, 1] (`key_weight`)     — Keyframe::weights
//! q_n   simulated particle positions at frame n (m)
//! ```
//!
//! The targets are read from the scene's own file, another scene file or an MDD file by
//! [`crate::io::keyframes::load`].
use crate::Vec3;

/// One keyframe q*_n of the control objective, in particle order and world space.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyframe {
    /// Frame number n the target applies to (in `first + 1 ..= last`).
    pub frame: i32,
    /// Target position of every particle, world space (m).
    pub positions: Vec<Vec3>,
    /// Weight of every particle in [0, 1] (the diagonal of W_n): `key_weight`, else 1;
    /// 0 for particles no source point shows.
    pub weights: Vec<f64>,
    /// How messages name it: `key_48`, `Shirt_key_48` or `keys.mdd sample 3 (frame 48)`.
    pub name: String,
}
