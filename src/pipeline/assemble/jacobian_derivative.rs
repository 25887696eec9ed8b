//! The step-matrix derivatives an exact adjoint of keyframe control needs, summed over the
//! system's elements in the plan's fixed order (bit-identical for any thread count):
//!
//! ```text
//! ∇ₓ [λᵀ D(x) a + λᵀ K(x) b]        definite Jacobians (forces::jacobian_derivative)
//! (∂f/∂v − D)ᵀ λ                      the velocity Jacobian the system leaves out (lift)
//! ```
use super::{State, System, TransposeProduct};
use crate::forces::bend::bend_condition;
use crate::forces::external::drag_jacobian_gradient;
use crate::forces::jacobian_derivative::{
    condition_jacobian_gradient, spring_jacobian_gradient, stretch_hessian_gradient,
};
use crate::forces::shear::shear_condition;
use crate::forces::stretch::stretch_condition;
use crate::forces::JacobianMode;
use crate::model::ClothModel;
use crate::pipeline::params::ForceModel;
use crate::Vec3;
use rayon::prelude::*;

impl System {
    /// `∇ₓ [λᵀ D(x) a + λᵀ K(x) b]` at positions `x` for the [`JacobianMode::Definite`]
    /// Jacobians `D = ∂f/∂v`, `K = ∂f/∂x` of every element (stretch, shear, bend or springs,
    /// drag). The self-contact springs of the step add nothing: their normals and weights
    /// are frozen over the step, so their Jacobians do not change with `x`.
    pub fn definite_jacobian_gradient(
        &mut self,
        model: &ClothModel,
        x: &[Vec3],
        lambda: &[Vec3],
        a: &[Vec3],
        b: &[Vec3],
    ) -> Vec<Vec3> {
        let coeff = &self.coefficients;
        let continuum = self.force_model == ForceModel::Continuum;
        self.triangle_rhs
            .par_chunks_mut(3)
            .enumerate()
            .for_each(|(t, out)| {
                let tri = model.triangles[t];
                let rest = &model.rest[t];
                let [xs, ls, as_, bs] = [x, lambda, a, b].map(|v| tri.map(|i| v[i]));
                let mut g = [Vec3::zeros(); 3];
                if continuum {
                    let (sp, ks, kds) = &coeff.triangles[t];
                    let se = stretch_condition(&xs, rest, sp.bu, sp.bv);
                    let third = stretch_hessian_gradient(&xs, rest, &se, &ls, &bs);
                    let gs = condition_jacobian_gradient(
                        &se, &third, &ls, &as_, &bs, sp.k, sp.kd, [true; 2],
                    );
                    let sh = shear_condition(&xs, rest);
                    let none = [[Vec3::zeros(); 3]];
                    let gh = condition_jacobian_gradient(
                        &sh,
                        &none,
                        &ls,
                        &as_,
                        &bs,
                        [*ks],
                        *kds,
                        [false],
                    );
                    for ((g, s), h) in g.iter_mut().zip(gs).zip(gh) {
                        *g += s + h;
                    }
                }
                if coeff.drag > 0.0 {
                    let gd = drag_jacobian_gradient(&xs, rest.area, coeff.drag, &ls, &as_);
                    g.iter_mut().zip(gd).for_each(|(g, d)| *g += d);
                }
                out.copy_from_slice(&g);
            });
        if continuum {
            self.hinge_rhs
                .par_chunks_mut(4)
                .enumerate()
                .for_each(|(k, out)| {
                    let hinge = &model.hinges[k];
                    let nodes = super::hinge_nodes(hinge);
                    let [xs, ls, as_, bs] = [x, lambda, a, b].map(|v| nodes.map(|i| v[i]));
                    let (kb, kdb) = coeff.hinges[k];
                    let eval = bend_condition(&xs, hinge.rest_angle);
                    let none = [[Vec3::zeros(); 4]];
                    let g = condition_jacobian_gradient(
                        &eval,
                        &none,
                        &ls,
                        &as_,
                        &bs,
                        [kb],
                        kdb,
                        [false],
                    );
                    out.copy_from_slice(&g);
                });
        } else {
            self.hinge_rhs
                .par_chunks_mut(2)
                .zip(coeff.springs.par_iter())
                .for_each(|(out, (nodes, p))| {
                    let [xs, ls, as_, bs] = [x, lambda, a, b].map(|v| nodes.map(|i| v[i]));
                    out.copy_from_slice(&spring_jacobian_gradient(&xs, p, &ls, &as_, &bs));
                });
        }
        self.repulsion_rhs.fill(Vec3::zeros());
        let mut out = vec![Vec3::zeros(); x.len()];
        self.plan.gather_vector(&self.vector_buffers(), &mut out);
        out
    }

    /// `(∂f/∂v)ᵀ λ − Dᵀ λ` at state `(x, v)`: the part of the exact velocity Jacobian that
    /// the system matrix of `mode` leaves out. Only lift, applied explicitly, has one (the
    /// condition forces' and drag's `∂f/∂v` are exact in every mode); `None` without lift.
    pub fn explicit_velocity_transpose_product(
        &mut self,
        model: &ClothModel,
        x: &[Vec3],
        v: &[Vec3],
        wind: Vec3,
        mode: JacobianMode,
        lambda: &[Vec3],
    ) -> Option<Vec<Vec3>> {
        if self.coefficients.lift <= 0.0 {
            return None;
        }
        let state = |mode| State {
            model,
            x,
            v,
            wind,
            mode,
        };
        let writer = TransposeProduct {
            w: lambda,
            velocity: true,
        };
        let exact = self.gather_elements(&state(JacobianMode::Exact), &writer);
        let system = self.gather_elements(&state(mode), &writer);
        Some(exact.iter().zip(&system).map(|(e, s)| e - s).collect())
    }
}
