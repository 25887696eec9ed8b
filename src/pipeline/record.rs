//! What the adjoint pass of keyframe control (Stuyck §8.3, eq. 8.10) needs of one accepted
//! step: the state it started from and every discrete choice the step made (Jacobian mode,
//! pins, contacts, self-contact springs, friction), so that its system matrix
//! `A = M − h ∂f/∂v − h² ∂f/∂x` can be rebuilt exactly as the forward pass solved it
//! instead of being stored.
use super::assemble::System;
use super::SolverParams;
use crate::collision::contact::FrictionSource;
use crate::collision::self_contact::Repulsion;
use crate::forces::JacobianMode;
use crate::linalg::pcg::Constraint;
use crate::model::ClothModel;
use crate::{Mat3, Vec3};

/// One accepted step of [`super::Simulator`], recorded when
/// [`super::Simulator::record_steps`] is on.
#[derive(Debug, Clone)]
pub struct StepRecord {
    /// Step size (s).
    pub h: f64,
    /// Positions at the start of the step (m).
    pub x: Vec<Vec3>,
    /// Velocities at the start of the step (m/s).
    pub v: Vec<Vec3>,
    /// The step's solution `Δv` (m/s): `v₁ = v + Δv`, `x₁ = x + h v₁ + y`.
    pub dv: Vec<Vec3>,
    /// Non-zero position alterations `y` (Baraff §6.2), by particle (m).
    pub y: Vec<(usize, Vec3)>,
    /// Jacobians the accepted solve used.
    pub mode: JacobianMode,
    /// The filter constraints of the solve: first the pins, then one per body contact.
    pub constraints: Vec<Constraint>,
    /// How many of `constraints` are pins (`z = (p(t + h) − x₀)/h − v₀`, so `x₁ = p`).
    pub pins: usize,
    /// Particle and outward normal of every body contact (`y = (τ − d₀) n`).
    pub contact_normals: Vec<(usize, Vec3)>,
    /// Self-contact springs of the step.
    pub repulsions: Vec<Repulsion>,
    /// Their rest distance (m).
    pub repulsion_distance: f64,
    /// Sliding friction terms `(particle, K, f₀)` (see `BodyContacts::friction_terms`).
    pub friction: Vec<(usize, Mat3, Vec3)>,
    /// What each friction term was built from: the remembered normal force (`K` and `f₀`
    /// are proportional to it) and direction.
    pub friction_sources: Vec<FrictionSource>,
    /// Body velocity at every body contact (m/s), in the order of `contact_normals`.
    pub contact_velocities: Vec<Vec3>,
}

impl StepRecord {
    /// Memory held by this record (bytes), for checkpoint planning.
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        size_of::<Self>()
            + (self.x.len() + self.v.len() + self.dv.len()) * size_of::<Vec3>()
            + self.y.len() * size_of::<(usize, Vec3)>()
            + self.constraints.len() * size_of::<Constraint>()
            + self.contact_normals.len() * size_of::<(usize, Vec3)>()
            + self.repulsions.len() * size_of::<Repulsion>()
            + self.friction.len() * size_of::<(usize, Mat3, Vec3)>()
            + self.friction_sources.len() * size_of::<FrictionSource>()
            + self.contact_velocities.len() * size_of::<Vec3>()
    }

    /// Index in `contact_normals` (and the body-contact constraints) of particle `i`'s
    /// contact, if it has one. Contacts come one per particle in particle order
    /// (`BodyContacts::detect`), so this is a binary search.
    pub fn contact_of(&self, i: usize) -> Option<usize> {
        self.contact_normals.binary_search_by_key(&i, |c| c.0).ok()
    }

    /// The dense position alteration `y` (m).
    pub fn y_dense(&self) -> Vec<Vec3> {
        let mut y = vec![Vec3::zeros(); self.x.len()];
        for &(i, d) in &self.y {
            y[i] = d;
        }
        y
    }

    /// The step's displacement `x₁ − x₀ = h (v₀ + Δv) + y` (m).
    pub fn displacement(&self) -> Vec<Vec3> {
        let mut d: Vec<Vec3> = (self.v.iter().zip(&self.dv))
            .map(|(v, dv)| self.h * (v + dv))
            .collect();
        for &(i, y) in &self.y {
            d[i] += y;
        }
        d
    }

    /// Rebuilds `system` (a copy of the simulator's, [`super::Simulator::system`]) to the
    /// matrix and right side this step solved, bit for bit.
    pub fn rebuild(&self, system: &mut System, model: &ClothModel, params: &SolverParams) {
        system.set_repulsions(self.repulsions.clone(), self.repulsion_distance);
        let y = self.y_dense();
        let (g, wind) = (params.gravity, params.wind);
        system.assemble(model, &self.x, &self.v, &y, self.h, g, wind, self.mode);
        system.add_particle_terms(&self.friction, self.h);
    }
}
