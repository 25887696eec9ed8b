//! The strip tensile test at small strain (ISO 13934-1's strip, the initial slope of the
//! KES-FB1 tensile curve): a strip clamped at one end is pulled at the other by a force
//! `F` spread evenly over its width `W`; at rest its strain `ε` gives the slope
//!
//! ```text
//! E = F / (W ε)      (N/m, force per width per unit strain)
//! ```
//!
//! which for drape's stretch condition (Baraff §4.2, energy `½ k a ε²` per triangle with
//! `k` the membrane modulus) is the material's `stretch_u` or `stretch_v`.
use super::{settle, specimen, Axis};
use crate::error::Result;
use crate::scene::Material;
use crate::stop::Stop;
use crate::Vec3;

/// Gauge length of the strip (m).
pub const LENGTH: f64 = 0.1;

/// Width of the strip (m): ISO 13934-1's 50 mm.
pub const WIDTH: f64 = 0.05;

/// The strain the test load aims at: 1%, within the initial slope of woven fabrics.
const TARGET_STRAIN: f64 = 0.01;

/// Simulated seconds after which a strip that still moves is reported as not settling.
const MAX_SECONDS: f64 = 6.0;

/// The tensile slope (N/m) of `material` cut along `axis`, the strip meshed at `spacing`
/// (m), loaded to about 1% strain, without gravity.
pub fn slope(material: &Material, axis: Axis, spacing: f64, stop: &Stop) -> Result<f64> {
    let m = axis.orient(material);
    let along = ((LENGTH / spacing).round() as usize).max(4);
    let strip = specimen::strip(LENGTH, WIDTH, 2.0 * spacing, along, spacing);
    // Force per width (N/m), spread over the end's particles by the width each carries.
    let load = TARGET_STRAIN * m.stretch_u;
    let end: Vec<usize> = (0..strip.positions.len())
        .filter(|&i| strip.positions[i].x > LENGTH - 1e-9)
        .collect();
    let mut applied = vec![Vec3::zeros(); strip.positions.len()];
    let mut z: Vec<f64> = end.iter().map(|&i| strip.positions[i].z).collect();
    z.sort_by(f64::total_cmp);
    for &i in &end {
        let zi = strip.positions[i].z;
        let k = z.iter().position(|&v| v == zi).unwrap_or(0);
        let below = if k > 0 { zi - z[k - 1] } else { 0.0 };
        let above = if k + 1 < z.len() { z[k + 1] - zi } else { 0.0 };
        applied[i] = Vec3::new(load * 0.5 * (below + above), 0.0, 0.0);
    }
    let sim = settle(&strip, &m, 0.0, Some(applied), MAX_SECONDS, stop)?;
    let stretched = end.iter().map(|&i| sim.positions()[i].x).sum::<f64>() / end.len() as f64;
    let strain = (stretched - LENGTH) / LENGTH;
    Ok(load / strain)
}
