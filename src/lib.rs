//! # drape — Baraff–Witkin implicit cloth simulation for artists' tools
//!
//! drape reads a garment (a triangle mesh whose UV layout is its set of flat sewing panels)
//! and writes a point cache of it falling, hanging or draping, frame by frame. Data flows one
//! way through the crate:
//!
//! ```text
//! files ──io──▶ Scene (garments, pins) ──model──▶ ClothModel (welded particles, rest UVs
//! in metres, masses, hinges) ──pipeline──▶ per step: assemble forces and Jacobians
//! (forces) into a 3x3 block CSR system (linalg) → filtered PCG solve → advance, adapt the
//! step ──▶ frame states ──cache──▶ PC2 files
//! ```
//!
//! The solver is Baraff & Witkin, "Large Steps in Cloth Simulation" (SIGGRAPH 1998); see
//! `shared/seeds/baraff-witkin-1998-large-steps.txt`. Each module documents the equations
//! and paper sections it implements.
//!
//! The `dev` cargo feature adds `bench` (benchmark scenes, their timing, the tuning knobs
//! read from the environment), which the benches and tests share; it is not part of the
//! library's API. `cargo test` and `cargo bench` turn it on.
#![warn(missing_docs)]

pub mod bake;
pub mod batch;
#[cfg(feature = "dev")]
pub mod bench;
#[cfg(not(feature = "dev"))]
mod bench;
pub mod cache;
pub mod cli;
pub mod collision;
pub mod control;
mod disjoint_sets;
pub mod error;
#[cfg(feature = "dev")]
pub mod fixtures;
// Without `dev`, only the procedural sheet and bodies of `drape bench` are built, for the
// crate's own use; the generators only tests use are then unused.
#[cfg(not(feature = "dev"))]
#[allow(dead_code)]
pub(crate) mod fixtures;
pub mod forces;
pub mod format;
pub mod huge_pages;
pub mod io;
pub mod linalg;
pub mod model;
pub(crate) mod parallel;
pub mod pipeline;
pub mod scene;
pub mod stop;
pub mod textile;

pub use error::{Error, Result};

/// 3-vector of `f64` used for positions, velocities and forces (metres, m/s, newtons).
pub type Vec3 = nalgebra::Vector3<f64>;
/// 2-vector of `f64` used for UV (material) coordinates.
pub type Vec2 = nalgebra::Vector2<f64>;
/// 3x3 block of `f64`, the unit of the block-sparse system.
pub type Mat3 = nalgebra::Matrix3<f64>;
