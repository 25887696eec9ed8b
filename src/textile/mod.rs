//! The textile industry's standard fabric tests, simulated: what a material does in the
//! tests its fabric's published figures come from (docs/materials.md).
//!
//! - [`cusick`]: the Cusick drape test (BS 5058, ISO 9073-9): a 30 cm disc on an 18 cm
//!   pedestal; drape coefficient `DC = (A_shadow − A_pedestal) / (A_disc − A_pedestal)`.
//! - [`cantilever`]: the cantilever bending test (ASTM D1388, BS 3356): the overhang `l` at
//!   which the strip's tip falls to a 41.5° slope from the platform edge; bending length
//!   `c = l / 2`, which Peirce's heavy-elastica analysis relates to the bending rigidity
//!   `B` (N·m) and the areal weight `w g` (N/m²) by `B = w g c³`.
//! - [`tensile`]: the strip tensile test (ISO 13934-1 at small strain, KES-FB1): the slope
//!   `F / (W ε)` (N/m) of force per width against strain.
//! - [`fit`]: material parameters from a user's own measured drape coefficient and bending
//!   lengths (`drape calibrate`).
//!
//! Each test builds its specimen ([`specimen`]) at a given particle spacing, simulates it
//! with the solver's defaults until it comes to rest ([`settle`]) and measures it as the
//! instrument would. The same figures at two spacings show the resolution independence
//! of the material model.
pub mod cantilever;
pub mod cusick;
pub mod fit;
pub mod specimen;
pub mod tensile;

use crate::error::{Error, Result};
use crate::model::{ClothModel, UvScale};
use crate::pipeline::{Simulator, SolverParams};
use crate::scene::{Garment, Material};
use crate::stop::Stop;
use crate::Vec3;
use serde::Serialize;

/// Frames per second of the simulated tests.
const FPS: f64 = 24.0;

/// A specimen is at rest once its fastest particle moves slower than this (m/s).
pub const REST_SPEED: f64 = 1e-4;

/// The fastest a specimen may still creep at the end of its time and be measured (m/s):
/// under 0.1 mm in a tenth of a second.
pub const CREEP_SPEED: f64 = 1e-3;

/// The figures of one material in the three tests at one particle spacing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FabricFigures {
    /// Particle spacing of the specimens (m).
    pub spacing: f64,
    /// Cusick drape coefficient (dimensionless, 0 … 1).
    pub drape_coefficient: f64,
    /// Folds (nodes) of the Cusick drape.
    pub nodes: usize,
    /// Cantilever bending length of a strip along u (weft), m.
    pub bending_length_u: f64,
    /// Cantilever bending length of a strip along v (warp), m.
    pub bending_length_v: f64,
    /// Tensile slope of a strip along u, N/m.
    pub tensile_u: f64,
    /// Tensile slope of a strip along v, N/m.
    pub tensile_v: f64,
}

/// Runs the three tests on `material` with specimens meshed at `spacing` (m); `stop`
/// ends them early with [`Error::Interrupted`].
pub fn measure(material: &Material, spacing: f64, stop: &Stop) -> Result<FabricFigures> {
    let drape = cusick::drape(material, spacing, stop)?;
    let [bending_length_u, bending_length_v] =
        [Axis::U, Axis::V].map(|axis| cantilever::bending_length(material, axis, spacing, stop));
    let [tensile_u, tensile_v] =
        [Axis::U, Axis::V].map(|axis| tensile::slope(material, axis, spacing, stop));
    Ok(FabricFigures {
        spacing,
        drape_coefficient: drape.coefficient,
        nodes: drape.nodes,
        bending_length_u: bending_length_u?,
        bending_length_v: bending_length_v?,
        tensile_u: tensile_u?,
        tensile_v: tensile_v?,
    })
}

/// A fabric direction: the material's u or v axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// The u axis (weft unless the material says otherwise).
    U,
    /// The v axis (warp).
    V,
}

impl Axis {
    /// `material` as seen by a specimen cut along this axis: the specimens run along
    /// their u axis, so a v specimen swaps the material's u and v properties.
    fn orient(self, material: &Material) -> Material {
        match self {
            Axis::U => material.clone(),
            Axis::V => material.swapped_axes(),
        }
    }
}

/// Simulates `garment` with `material` (gravity `gravity` m/s² along −y) and optional
/// per-particle applied forces (N) until its fastest particle moves slower than
/// [`REST_SPEED`] for three consecutive frames, or `max_seconds` of simulated time have
/// passed; then it must move slower than [`CREEP_SPEED`] (an [`Error::Simulation`]
/// otherwise: the specimen does not settle). Returns the simulator at rest.
pub fn settle(
    garment: &Garment,
    material: &Material,
    gravity: f64,
    applied: Option<Vec<Vec3>>,
    max_seconds: f64,
    stop: &Stop,
) -> Result<Simulator> {
    let model = ClothModel::build(garment, UvScale::Fixed(1.0), material.density)?;
    let mut params = SolverParams::new(FPS, Vec3::y());
    params.gravity = Vec3::new(0.0, -gravity, 0.0);
    let mut sim = Simulator::new(model, material, &garment.pin, params);
    sim.set_stop(stop.clone());
    sim.set_applied_forces(applied);
    let run = |sim: &mut Simulator| -> Result<()> {
        let (mut calm, mut fastest) = (0, f64::INFINITY);
        let frames = (max_seconds * FPS).ceil() as usize;
        for _ in 0..frames {
            sim.advance(1.0 / FPS)?;
            fastest = sim
                .velocities()
                .iter()
                .map(|v| v.norm())
                .fold(0.0, f64::max);
            calm = if fastest < REST_SPEED { calm + 1 } else { 0 };
            if calm >= 3 {
                return Ok(());
            }
        }
        if fastest < CREEP_SPEED {
            return Ok(());
        }
        Err(Error::Simulation(format!(
            "the {} specimen did not come to rest within {max_seconds} s (still moving at {:.1} mm/s)",
            garment.name,
            1e3 * fastest
        )))
    };
    crate::bench::in_pool(|| run(&mut sim))?;
    Ok(sim)
}

#[cfg(test)]
mod tests;
