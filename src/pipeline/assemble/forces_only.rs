//! Forces without a system: what the explicit and projective integrators need of the
//! element sets of a [`System`], from the same element functions as the assembly.
use super::{ElementWriter, State, System};
use crate::forces::external::{drag, gravity, lift};
use crate::forces::{ElementForces, JacobianMode};
use crate::model::ClothModel;
use crate::Vec3;
use rayon::prelude::*;

impl System {
    /// All forces `f(x, v)` (N) per particle: the elements of the current plan (internal
    /// forces, drag, lift, self-contact springs) plus gravity `m g`. Overwrites the element
    /// buffers; used by the explicit and projective integrators.
    pub fn forces(
        &mut self,
        model: &ClothModel,
        x: &[Vec3],
        v: &[Vec3],
        g: Vec3,
        wind: Vec3,
    ) -> Vec<Vec3> {
        let state = State {
            model,
            x,
            v,
            wind,
            mode: JacobianMode::Definite,
        };
        let mut out = self.gather_elements(&state, &ForceWriter);
        out.par_iter_mut()
            .zip(model.mass.par_iter())
            .for_each(|(f, &m)| *f += gravity(m, g));
        out
    }

    /// Gravity, air drag and lift (N per particle) at `(x, v)`, without internal forces:
    /// the external forces the projective integrator treats explicitly. Triangle forces
    /// are summed in triangle order (deterministic).
    pub fn external_forces(
        &self,
        model: &ClothModel,
        x: &[Vec3],
        v: &[Vec3],
        g: Vec3,
        wind: Vec3,
    ) -> Vec<Vec3> {
        let mut out: Vec<Vec3> = model.mass.iter().map(|&m| gravity(m, g)).collect();
        let c = &self.coefficients;
        if c.drag > 0.0 || c.lift > 0.0 {
            let per_triangle: Vec<[Vec3; 3]> = (model.triangles.par_iter())
                .zip(model.rest.par_iter())
                .map(|(t, r)| {
                    let (xs, vs) = (t.map(|i| x[i]), t.map(|i| v[i]));
                    let mode = JacobianMode::System;
                    let mut e = ElementForces::zero();
                    if c.drag > 0.0 {
                        e.add(&drag(&xs, &vs, r.area, c.drag, wind, mode));
                    }
                    if c.lift > 0.0 {
                        e.add(&lift(&xs, &vs, r.area, c.lift, wind, mode));
                    }
                    e.f
                })
                .collect();
            for (t, f) in model.triangles.iter().zip(&per_triangle) {
                for (i, fi) in t.iter().zip(f) {
                    out[*i] += fi;
                }
            }
        }
        out
    }

    /// Per particle `(Σ_j ‖∂f_i/∂x_j‖_F, Σ_j ‖∂f_i/∂v_j‖_F)` at `(x, v)` with the
    /// [`JacobianMode::Definite`] Jacobians: Gershgorin bounds of the stiffness and damping
    /// rates that limit an explicit step (`ω_i² ≤ k_i/m_i`).
    pub fn jacobian_row_bounds(
        &mut self,
        model: &ClothModel,
        x: &[Vec3],
        v: &[Vec3],
        wind: Vec3,
    ) -> Vec<(f64, f64)> {
        let state = State {
            model,
            x,
            v,
            wind,
            mode: JacobianMode::Definite,
        };
        let sums = self.gather_elements(&state, &RowBoundWriter);
        sums.iter().map(|b| (b.x, b.y)).collect()
    }
}

/// Forces only: `rhs[a] = f_a`.
struct ForceWriter;

impl ElementWriter for ForceWriter {
    fn write<const N: usize>(&self, e: &ElementForces<N>, _nodes: [usize; N], rhs: &mut [Vec3]) {
        rhs[..N].copy_from_slice(&e.f);
    }
}

/// Row sums of the Jacobian blocks' Frobenius norms: `rhs[a] = (Σ_b ‖∂f_a/∂x_b‖,
/// Σ_b ‖∂f_a/∂v_b‖, 0)`.
struct RowBoundWriter;

impl ElementWriter for RowBoundWriter {
    fn write<const N: usize>(&self, e: &ElementForces<N>, _nodes: [usize; N], rhs: &mut [Vec3]) {
        for (a, r) in rhs.iter_mut().enumerate().take(N) {
            let k: f64 = e.dfdx[a].iter().map(|m| m.norm()).sum();
            let d: f64 = e.dfdv[a].iter().map(|m| m.norm()).sum();
            *r = Vec3::new(k, d, 0.0);
        }
    }
}
