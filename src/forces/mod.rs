//! Internal and external cloth forces with their Jacobians (Baraff & Witkin §4).
//!
//! Every internal force comes from a condition function `C(x)` (Baraff §4.1, Stuyck §7.3):
//!
//! ```text
//! E = ½ k CᵀC                 f_i = −k (∂C/∂x_i) C
//! K_ij = ∂f_i/∂x_j = −k ( (∂C/∂x_i)(∂C/∂x_j)ᵀ + (∂²C/∂x_i∂x_j) C )
//! d_i = −k_d (∂C/∂x_i) Ċ,     Ċ = Σ_j (∂C/∂x_j)ᵀ v_j                      (§4.5, eq. 11)
//! ∂d_i/∂v_j = −k_d (∂C/∂x_i)(∂C/∂x_j)ᵀ
//! ∂d_i/∂x_j = −k_d ( (∂²C/∂x_i∂x_j) Ċ + (∂C/∂x_i)(∂Ċ/∂x_j)ᵀ )
//! ```
//!
//! The last term of `∂d/∂x` is not symmetric; the solver drops it as the paper does
//! ([`JacobianMode::System`]); [`JacobianMode::Exact`] keeps it so tests can compare every
//! Jacobian against finite differences.
//!
//! [`deformation`] computes `w_u`, `w_v` (Baraff eq. 9) for stretch and shear.
//! Conditions: [`stretch`] (§4.2, Stuyck §7.4), [`shear`] (§4.3, §7.5), [`bend`] (§4.3,
//! §7.6); [`spring`] the mass-spring model's springs (Kang & Cho eqs. 21–22);
//! [`external`] holds gravity, air drag and lift.
use crate::{Mat3, Vec3};

pub mod bend;
pub mod condition;
pub mod deformation;
pub mod external;
pub mod jacobian_derivative;
pub mod shear;
pub mod spring;
pub mod stretch;

#[cfg(test)]
pub(crate) mod tests;

/// Which Jacobian to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JacobianMode {
    /// What the implicit solver uses first: symmetric, dropping `−k_d (∂C/∂x_i)(∂Ċ/∂x_j)ᵀ`
    /// (Baraff §4.5) and, for compressed stretch components (C < 0), the `k C ∂²C` term
    /// that would make the system indefinite; drag keeps only `∂f/∂v`.
    System,
    /// The solver's fallback when [`JacobianMode::System`] leaves the system indefinite
    /// (the PCG meets non-positive curvature, e.g. under large shear or folds): keeps only
    /// the Gauss–Newton part `−k (∂C/∂x)(∂C/∂x)ᵀ` of every condition plus the tension term
    /// `−k C ∂²C` of stretched (C > 0) stretch components, whose Hessian is positive
    /// semi-definite. Then `−∂f/∂x` and `−∂f/∂v` are positive semi-definite and the system
    /// matrix `M − h ∂f/∂v − h² ∂f/∂x` is positive definite.
    Definite,
    /// The exact derivative of the force as computed, for finite-difference tests.
    Exact,
}

/// An element's share of the implicit step's system (Baraff eq. 18), accumulated straight
/// from its force terms without forming `∂f/∂x` and `∂f/∂v`:
///
/// ```text
/// blocks[a·N + b] += −h ∂f_a/∂v_b − h² ∂f_a/∂x_b        rhs[a] += h (f_a + Σ_b ∂f_a/∂x_b u_b)
/// ```
/// with `u_b = h v_b + y_b` at the element's particles (velocity and position alteration).
/// The `*_system` functions of the force modules add into it ([`JacobianMode::System`] and
/// [`JacobianMode::Definite`]; the exact Jacobians go through [`ElementForces`]).
pub struct SystemShare<'a, const N: usize> {
    /// The step `h` (s).
    pub h: f64,
    /// `u_b = h v_b + y_b` (m).
    pub u: [Vec3; N],
    /// `N²` blocks, row-major.
    pub blocks: &'a mut [Mat3],
    /// `N` right-side entries.
    pub rhs: &'a mut [Vec3],
}

impl<const N: usize> SystemShare<'_, N> {
    /// Zeroes the blocks and the right side.
    pub fn clear(&mut self) {
        self.blocks[..N * N].fill(Mat3::zeros());
        self.rhs[..N].fill(Vec3::zeros());
    }
}

/// Force and Jacobian blocks of one element with `N` particles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElementForces<const N: usize> {
    /// Force on each of the element's particles (N).
    pub f: [Vec3; N],
    /// `∂f_a/∂x_b` blocks, indexed `[a][b]` (N/m).
    pub dfdx: [[Mat3; N]; N],
    /// `∂f_a/∂v_b` blocks, indexed `[a][b]` (N·s/m).
    pub dfdv: [[Mat3; N]; N],
}

impl<const N: usize> ElementForces<N> {
    /// All forces and Jacobian blocks zero.
    pub fn zero() -> Self {
        ElementForces {
            f: [Vec3::zeros(); N],
            dfdx: [[Mat3::zeros(); N]; N],
            dfdv: [[Mat3::zeros(); N]; N],
        }
    }

    /// Adds `other` into `self` block by block.
    pub fn add(&mut self, other: &ElementForces<N>) {
        for a in 0..N {
            self.f[a] += other.f[a];
            for b in 0..N {
                self.dfdx[a][b] += other.dfdx[a][b];
                self.dfdv[a][b] += other.dfdv[a][b];
            }
        }
    }
}
