//! Assembly of the linearised backward-Euler system with position alteration
//! (Baraff eq. 6 and eq. 18):
//!
//! ```text
//! (M − h ∂f/∂v − h² ∂f/∂x) Δv = h ( f₀ + ∂f/∂x (h v₀ + y) )
//! ```
//! `M` diagonal particle masses (kg), `h` the step (s), `f₀` all forces at the start of the
//! step (N), `v₀` velocities (m/s), `y` the position alteration of §6.2 (m). Each element
//! (triangle: stretch + shear + drag; hinge: bend; self-contact: repulsion spring) computes
//! its blocks of the left side and its share of the right side and adds them straight into
//! the matrix, colour by colour of the [`AssemblyPlan`] (elements of a colour share no
//! particle, so they run in parallel without races), so the system is bit-identical for
//! any thread count. With the solver's Jacobians the triangles and hinges add their share
//! straight from their force terms ([`SystemShare`], the `*_system` kernels of
//! [`crate::forces`]) instead of forming `∂f/∂x` and `∂f/∂v` and combining them, which
//! saves most of the block products of the assembly. The other
//! products over the elements (forces only, transposed Jacobian products of the adjoint)
//! fill small per-element vector buffers that the plan gathers in a fixed order.
use crate::collision::self_contact::{add_repulsion_system, repulsion_forces, Repulsion};
use crate::forces::bend::{add_bend_system, bend};
use crate::forces::external::{add_drag_system, drag, gravity, lift};
use crate::forces::shear::{add_shear, add_shear_system};
use crate::forces::spring::{spring, SpringParams};
use crate::forces::stretch::{add_stretch, add_stretch_system};
use crate::forces::{ElementForces, JacobianMode, SystemShare};
use crate::linalg::assembly::{ElementSet, MAX_SCATTER_ARITY};
use crate::linalg::{AssemblyPlan, BlockCsr};
use crate::model::ClothModel;
use crate::pipeline::params::ForceModel;
use crate::scene::Material;
use crate::{Mat3, Vec3};
use rayon::prelude::*;
use std::sync::Arc;

mod coefficients;
mod forces_only;
mod jacobian_derivative;
#[cfg(test)]
mod tests;

use coefficients::Coefficients;

/// The system of one step: matrix, right-hand side and the buffers they are built in.
#[derive(Debug, Clone)]
pub struct System {
    force_model: ForceModel,
    /// This step's plan: `base_plan` itself without self-contact springs.
    plan: Arc<AssemblyPlan>,
    /// The plan of the topology's element sets (triangles, hinges), which the plan of a
    /// step with self-contact springs extends ([`AssemblyPlan::extended`]).
    base_plan: Arc<AssemblyPlan>,
    repulsions: Vec<Repulsion>,
    /// Repulsion distance, stiffness and damping of self-contacts.
    repulsion_params: (f64, f64, f64),
    repulsion_rhs: Vec<Vec3>,
    coefficients: Coefficients,
    /// `A = M − h ∂f/∂v − h² ∂f/∂x`.
    pub matrix: BlockCsr,
    /// `b = h (f₀ + ∂f/∂x (h v₀ + y))`.
    pub rhs: Vec<Vec3>,
    triangle_rhs: Vec<Vec3>,
    /// Vectors of the second element set: hinges (continuum) or springs (mass-spring).
    hinge_rhs: Vec<Vec3>,
    mass_blocks: Vec<Mat3>,
    /// Triangles and hinges through their fused kernels ([`ScatterSink::fused`]); false
    /// only in tests, to compare against the elements' Jacobians.
    fused: bool,
}

impl System {
    /// Pattern, plan and buffers for `model` (built once per topology), continuum forces.
    pub fn new(model: &ClothModel, material: &Material) -> Self {
        Self::with_force_model(model, material, ForceModel::Continuum)
    }

    /// Pattern, plan and buffers for `model` with the internal forces of `force_model`:
    /// the continuum's element sets are (triangles, hinges), the mass-spring model's
    /// (triangles for drag and lift only, springs).
    pub fn with_force_model(
        model: &ClothModel,
        material: &Material,
        force_model: ForceModel,
    ) -> Self {
        let n = model.len();
        let triangles = ElementSet {
            arity: 3,
            nodes: model.triangles.iter().flatten().copied().collect(),
        };
        let mut coefficients = Coefficients::new(model, material);
        let second = match force_model {
            ForceModel::Continuum => ElementSet {
                arity: 4,
                nodes: model.hinges.iter().flat_map(hinge_nodes).collect(),
            },
            ForceModel::MassSpring => {
                coefficients.springs = Coefficients::spring_network(model, material);
                ElementSet {
                    arity: 2,
                    nodes: coefficients.springs.iter().flat_map(|s| s.0).collect(),
                }
            }
        };
        let arity = second.arity;
        let nh = second.count();
        let plan = Arc::new(AssemblyPlan::new(n, &[triangles, second]));
        let matrix = BlockCsr::zeros(plan.pattern.clone());
        let nt = model.triangles.len();
        System {
            force_model,
            coefficients,
            base_plan: plan.clone(),
            plan,
            repulsions: Vec::new(),
            repulsion_params: (
                0.0,
                material.stretch_u.max(material.stretch_v),
                material.stretch_damping,
            ),
            repulsion_rhs: Vec::new(),
            matrix,
            rhs: vec![Vec3::zeros(); n],
            triangle_rhs: vec![Vec3::zeros(); nt * 3],
            hinge_rhs: vec![Vec3::zeros(); nh * arity],
            mass_blocks: model.mass.iter().map(|&m| Mat3::identity() * m).collect(),
            fused: true,
        }
    }

    /// Builds `A` and `b` for a step of size `h` from state `(x, v)` with position
    /// alteration `y`, gravity `g` (m/s²) and `wind` (m/s), with the force Jacobians of
    /// `mode` ([`JacobianMode::System`], or [`JacobianMode::Definite`] as the fallback).
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        &mut self,
        model: &ClothModel,
        x: &[Vec3],
        v: &[Vec3],
        y: &[Vec3],
        h: f64,
        g: Vec3,
        wind: Vec3,
        mode: JacobianMode,
    ) {
        let state = State {
            model,
            x,
            v,
            wind,
            mode,
        };
        let System {
            force_model,
            plan,
            repulsions,
            repulsion_params,
            coefficients,
            matrix,
            rhs,
            mass_blocks,
            fused,
            ..
        } = self;
        let elements = Elements {
            state: &state,
            coeff: coefficients,
            continuum: *force_model == ForceModel::Continuum,
            repulsions,
            repulsion_params: *repulsion_params,
        };
        let mut sink = ScatterSink {
            plan,
            matrix,
            rhs,
            writer: &SystemWriter { v, y, h },
        };
        if !(*fused && sink.fused(&elements, mass_blocks)) {
            (sink.plan).scatter_begin(Some(mass_blocks), sink.matrix, sink.rhs);
            elements.visit_triangles(&mut sink);
            elements.visit_second(&mut sink);
            elements.visit_repulsions(&mut sink);
        }
        let parts = (&mut self.rhs[..], &model.mass[..]);
        crate::parallel::for_each_chunk(parts, crate::linalg::block3::CHUNK, |_, (rhs, mass)| {
            for (b, &m) in rhs.iter_mut().zip(mass) {
                *b += h * gravity(m, g);
            }
        });
    }

    /// `(∂f/∂x)ᵀ w` with the Jacobians of `mode` at state `(x, v)`, over the current
    /// elements (triangles, hinges and this step's self-contact springs), element by element
    /// without assembling a matrix. The adjoint pass of keyframe control (Stuyck eq. 8.10)
    /// uses it with [`JacobianMode::Exact`]. Overwrites the element buffers.
    pub fn stiffness_transpose_product(
        &mut self,
        model: &ClothModel,
        x: &[Vec3],
        v: &[Vec3],
        wind: Vec3,
        mode: JacobianMode,
        w: &[Vec3],
    ) -> Vec<Vec3> {
        let state = State {
            model,
            x,
            v,
            wind,
            mode,
        };
        self.gather_elements(&state, &TransposeProduct { w, velocity: false })
    }

    /// Lets `writer` fill every element's vector slots at `state` and sums them per
    /// particle in the plan's fixed order.
    fn gather_elements(&mut self, state: &State, writer: &impl ElementWriter) -> Vec<Vec3> {
        self.fill_elements(state, writer);
        let mut out = vec![Vec3::zeros(); state.x.len()];
        self.plan.gather_vector(&self.vector_buffers(), &mut out);
        out
    }

    /// Computes every element's forces at `state` and lets `writer` fill its slots of the
    /// flat vector buffers.
    fn fill_elements(&mut self, state: &State, writer: &impl ElementWriter) {
        let elements = Elements {
            state,
            coeff: &self.coefficients,
            continuum: self.force_model == ForceModel::Continuum,
            repulsions: &self.repulsions,
            repulsion_params: self.repulsion_params,
        };
        elements.visit(&mut BufferSink {
            buffers: [
                &mut self.triangle_rhs,
                &mut self.hinge_rhs,
                &mut self.repulsion_rhs,
            ],
            writer,
        });
    }

    /// The vector buffers of the element sets of the current plan.
    fn vector_buffers(&self) -> Vec<&[Vec3]> {
        per_set(&self.triangle_rhs, &self.hinge_rhs, &self.repulsion_rhs)
    }
}

/// Buffers in plan order: triangles, hinges, and self-contact springs when there are any.
fn per_set<'a, T>(triangles: &'a [T], hinges: &'a [T], repulsions: &'a [T]) -> Vec<&'a [T]> {
    let mut b = vec![triangles, hinges];
    if !repulsions.is_empty() {
        b.push(repulsions);
    }
    b
}

/// The state the element forces are evaluated at.
#[derive(Clone, Copy)]
struct State<'a> {
    model: &'a ClothModel,
    x: &'a [Vec3],
    v: &'a [Vec3],
    wind: Vec3,
    mode: JacobianMode,
}

/// What one element contributes to the vector buffers, given its forces and particles.
trait ElementWriter: Sync {
    /// Fills `rhs` (N vectors) of one element.
    fn write<const N: usize>(&self, e: &ElementForces<N>, nodes: [usize; N], rhs: &mut [Vec3]);
}

/// The elements of a [`System`] evaluated at one state: triangles (set 0), hinges or
/// springs (set 1) and this step's self-contact springs (set 2), in the plan's set order.
struct Elements<'a> {
    state: &'a State<'a>,
    coeff: &'a Coefficients,
    continuum: bool,
    repulsions: &'a [Repulsion],
    repulsion_params: (f64, f64, f64),
}

/// Receives each element set: its index in the plan, its element count and the function
/// giving element `k`'s particles and forces.
trait SetSink {
    fn set<const N: usize>(
        &mut self,
        set: usize,
        count: usize,
        element: impl Fn(usize) -> ([usize; N], ElementForces<N>) + Sync,
    );
}

impl Elements<'_> {
    /// Hands every element set to `sink`.
    fn visit(&self, sink: &mut impl SetSink) {
        self.visit_triangles(sink);
        self.visit_second(sink);
        self.visit_repulsions(sink);
    }

    /// Hands the triangles (set 0) to `sink`.
    fn visit_triangles(&self, sink: &mut impl SetSink) {
        let State {
            model,
            x,
            v,
            wind,
            mode,
        } = *self.state;
        let coeff = self.coeff;
        let continuum = self.continuum;
        sink.set(0, model.triangles.len(), |t| {
            let tri = model.triangles[t];
            let rest = &model.rest[t];
            let xs = tri.map(|i| x[i]);
            let vs = tri.map(|i| v[i]);
            let (sp, ks, kds) = &coeff.triangles[t];
            let mut e = ElementForces::zero();
            if continuum {
                add_stretch(&mut e, &xs, &vs, rest, sp, mode);
                add_shear(&mut e, &xs, &vs, rest, *ks, *kds, mode);
            }
            if coeff.drag > 0.0 {
                e.add(&drag(&xs, &vs, rest.area, coeff.drag, wind, mode));
            }
            if coeff.lift > 0.0 {
                e.add(&lift(&xs, &vs, rest.area, coeff.lift, wind, mode));
            }
            (tri, e)
        });
    }

    /// Hands the hinges or springs (set 1) to `sink`.
    fn visit_second(&self, sink: &mut impl SetSink) {
        let State {
            model, x, v, mode, ..
        } = *self.state;
        let coeff = self.coeff;
        if self.continuum {
            sink.set(1, model.hinges.len(), |k| {
                let hinge = &model.hinges[k];
                let nodes = hinge_nodes(hinge);
                let (kb, kdb) = coeff.hinges[k];
                let e = bend(
                    &nodes.map(|i| x[i]),
                    &nodes.map(|i| v[i]),
                    hinge.rest_angle,
                    kb,
                    kdb,
                    mode,
                );
                (nodes, e)
            });
        } else {
            sink.set(1, coeff.springs.len(), |k| {
                let (nodes, p) = &coeff.springs[k];
                let e = spring(&nodes.map(|i| x[i]), &nodes.map(|i| v[i]), p, mode);
                (*nodes, e)
            });
        }
    }

    /// Hands this step's self-contact springs (set 2, if any) to `sink`.
    fn visit_repulsions(&self, sink: &mut impl SetSink) {
        let State { x, v, mode, .. } = *self.state;
        if !self.repulsions.is_empty() {
            let (d, kr, kdr) = self.repulsion_params;
            sink.set(2, self.repulsions.len(), |k| {
                let r = &self.repulsions[k];
                let xs = r.nodes.map(|i| x[i]);
                let vs = r.nodes.map(|i| v[i]);
                (r.nodes, repulsion_forces(r, &xs, &vs, d, kr, kdr, mode))
            });
        }
    }
}

/// Writes each element's vectors into its slots of the per-set buffers.
struct BufferSink<'a, W> {
    buffers: [&'a mut [Vec3]; 3],
    writer: &'a W,
}

impl<W: ElementWriter> SetSink for BufferSink<'_, W> {
    fn set<const N: usize>(
        &mut self,
        set: usize,
        _count: usize,
        element: impl Fn(usize) -> ([usize; N], ElementForces<N>) + Sync,
    ) {
        let writer = self.writer;
        self.buffers[set]
            .par_chunks_mut(N)
            .enumerate()
            .for_each(|(k, rhs)| {
                let (nodes, e) = element(k);
                writer.write(&e, nodes, rhs);
            });
    }
}

/// Adds each element's blocks and right-hand side straight into the system (colour by
/// colour, [`AssemblyPlan::scatter`]).
struct ScatterSink<'a> {
    plan: &'a AssemblyPlan,
    matrix: &'a mut BlockCsr,
    rhs: &'a mut [Vec3],
    writer: &'a SystemWriter<'a>,
}

impl SetSink for ScatterSink<'_> {
    fn set<const N: usize>(
        &mut self,
        set: usize,
        _count: usize,
        element: impl Fn(usize) -> ([usize; N], ElementForces<N>) + Sync,
    ) {
        const { assert!(N <= MAX_SCATTER_ARITY) };
        let writer = self.writer;
        self.plan
            .scatter(set, Some(self.matrix), self.rhs, |k, blocks, rhs| {
                let (nodes, e) = element(k);
                writer.write(&e, nodes, rhs);
                writer.blocks(&e, blocks);
            });
    }
}

impl ScatterSink<'_> {
    /// The triangles, hinges and self-contact springs straight into the system, their
    /// blocks and right side from the force terms without forming the Jacobians
    /// ([`SystemShare`]; the same sums as
    /// [`SetSink::set`] with the element's [`ElementForces`]). Only for the Jacobians of
    /// the solver ([`JacobianMode::System`], [`JacobianMode::Definite`]) without lift;
    /// false (nothing done) otherwise. The system starts from `mass` on the diagonal; the
    /// continuum model's triangles and hinges go in one pass ([`AssemblyPlan::scatter_two`]).
    fn fused(&mut self, elements: &Elements, mass: &[Mat3]) -> bool {
        let State {
            model,
            x,
            v,
            wind,
            mode,
        } = *elements.state;
        let coeff = elements.coeff;
        if mode == JacobianMode::Exact || coeff.lift > 0.0 {
            return false;
        }
        let SystemWriter { v: _, y, h } = *self.writer;
        let continuum = elements.continuum;
        let triangle = |t: usize, blocks: &mut [Mat3], rhs: &mut [Vec3]| {
            let tri = model.triangles[t];
            let (xs, vs) = (tri.map(|i| x[i]), tri.map(|i| v[i]));
            let rest = &model.rest[t];
            let u = tri.map(|i| h * v[i] + y[i]);
            let mut out = SystemShare { h, u, blocks, rhs };
            out.clear();
            if continuum {
                let (sp, ks, kds) = &coeff.triangles[t];
                add_stretch_system(&xs, &vs, rest, sp, mode, &mut out);
                add_shear_system(&xs, &vs, rest, (*ks, *kds), mode, &mut out);
            }
            if coeff.drag > 0.0 {
                add_drag_system(&xs, &vs, rest.area, coeff.drag, wind, mode, &mut out);
            }
        };
        if continuum {
            let hinge = |k: usize, blocks: &mut [Mat3], rhs: &mut [Vec3]| {
                let hinge = &model.hinges[k];
                let nodes = hinge_nodes(hinge);
                let u = nodes.map(|i| h * v[i] + y[i]);
                let mut out = SystemShare { h, u, blocks, rhs };
                out.clear();
                let (xs, vs) = (nodes.map(|i| x[i]), nodes.map(|i| v[i]));
                add_bend_system(&xs, &vs, hinge.rest_angle, coeff.hinges[k], mode, &mut out);
            };
            (self.plan).scatter_two(Some(mass), self.matrix, self.rhs, (0, triangle), (1, hinge));
        } else {
            (self.plan).scatter_begin(Some(mass), self.matrix, self.rhs);
            (self.plan).scatter(0, Some(self.matrix), self.rhs, triangle);
            elements.visit_second(self);
        }
        let (d, kr, kdr) = elements.repulsion_params;
        if !elements.repulsions.is_empty() {
            (self.plan).scatter(2, Some(self.matrix), self.rhs, |k, blocks, rhs| {
                let r = &elements.repulsions[k];
                let u = r.nodes.map(|i| h * v[i] + y[i]);
                let mut out = SystemShare { h, u, blocks, rhs };
                out.clear();
                let (xs, vs) = (r.nodes.map(|i| x[i]), r.nodes.map(|i| v[i]));
                add_repulsion_system(r, &xs, &vs, d, (kr, kdr), mode, &mut out);
            });
        }
        true
    }
}

impl System {
    /// Sets this step's self-contact springs (Baraff §6) with repulsion distance `d` (m);
    /// rebuilds the sparsity pattern and gather plan only when the coupled particles change.
    pub fn set_repulsions(&mut self, repulsions: Vec<Repulsion>, d: f64) {
        self.repulsion_params.0 = d;
        let old: Vec<[usize; 4]> = self.repulsions.iter().map(|r| r.nodes).collect();
        let new: Vec<[usize; 4]> = repulsions.iter().map(|r| r.nodes).collect();
        self.repulsions = repulsions;
        self.repulsion_rhs
            .resize(self.repulsions.len() * 4, Vec3::zeros());
        if old == new {
            return;
        }
        // The old plan (its slots and gather lists) goes before the new one is built.
        self.plan = self.base_plan.clone();
        self.plan = if new.is_empty() {
            self.base_plan.clone()
        } else {
            Arc::new(self.base_plan.extended(&ElementSet {
                arity: 4,
                nodes: new.iter().flatten().copied().collect(),
            }))
        };
        self.matrix.reset(self.plan.pattern.clone());
    }

    /// This step's self-contact springs.
    pub fn repulsions(&self) -> &[Repulsion] {
        &self.repulsions
    }

    /// Turns on aerodynamic lift with coefficient `c` (kg/m³; 0 turns it off), applied
    /// explicitly ([`crate::forces::external::lift`]).
    pub fn set_lift(&mut self, c: f64) {
        self.coefficients.lift = if c.is_finite() { c.max(0.0) } else { 0.0 };
    }

    /// Adds per-particle implicit terms after [`System::assemble`]: for each
    /// `(i, K, f)`, a force `f` at the start of the step with `∂f/∂v = −K`, so
    /// `A_ii += h K` and `b_i += h f` (used for sliding friction).
    pub fn add_particle_terms(&mut self, terms: &[(usize, Mat3, Vec3)], h: f64) {
        for &(i, k, f) in terms {
            if let Some(slot) = self.matrix.pattern.slot(i, i) {
                self.matrix.values[slot] += h * k;
            }
            self.rhs[i] += h * f;
        }
    }
}

/// Particle order of a hinge for [`bend`]: `[x0, x1, x2, x3]`, wings around the edge.
fn hinge_nodes(h: &crate::model::Hinge) -> [usize; 4] {
    [h.wings[0], h.edge[0], h.edge[1], h.wings[1]]
}

/// The system of eq. 18: blocks `−h ∂f/∂v − h² ∂f/∂x`, right side `h (f + ∂f/∂x (h v₀ + y))`.
struct SystemWriter<'a> {
    v: &'a [Vec3],
    y: &'a [Vec3],
    h: f64,
}

impl ElementWriter for SystemWriter<'_> {
    fn write<const N: usize>(&self, e: &ElementForces<N>, nodes: [usize; N], rhs: &mut [Vec3]) {
        let h = self.h;
        for ((r, f), row) in rhs.iter_mut().zip(&e.f).zip(&e.dfdx) {
            let mut sum = *f;
            for (k, &j) in row.iter().zip(&nodes) {
                sum += k * (h * self.v[j] + self.y[j]);
            }
            *r = h * sum;
        }
    }
}

impl SystemWriter<'_> {
    /// The element's blocks of the left side, `blocks[a·N + b]`.
    fn blocks<const N: usize>(&self, e: &ElementForces<N>, blocks: &mut [Mat3]) {
        let h = self.h;
        for a in 0..N {
            for b in 0..N {
                blocks[a * N + b] = -h * e.dfdv[a][b] - (h * h) * e.dfdx[a][b];
            }
        }
    }
}

/// `(∂f/∂x)ᵀ w` per element: entry `a` is `Σ_b (∂f_b/∂x_a)ᵀ w_b`; `(∂f/∂v)ᵀ w` with
/// `velocity`.
struct TransposeProduct<'a> {
    w: &'a [Vec3],
    velocity: bool,
}

impl ElementWriter for TransposeProduct<'_> {
    fn write<const N: usize>(&self, e: &ElementForces<N>, nodes: [usize; N], rhs: &mut [Vec3]) {
        let jacobian = if self.velocity { &e.dfdv } else { &e.dfdx };
        for (a, r) in rhs.iter_mut().enumerate().take(N) {
            *r = (0..N)
                .map(|b| jacobian[b][a].transpose() * self.w[nodes[b]])
                .sum();
        }
    }
}

/// The mass-spring model's springs of `model` with parameters from `material` (the same
/// the [`System`] of [`ForceModel::MassSpring`] assembles): particles and
/// [`SpringParams`].
pub fn spring_parameters(
    model: &ClothModel,
    material: &Material,
) -> Vec<([usize; 2], SpringParams)> {
    Coefficients::spring_network(model, material)
}
