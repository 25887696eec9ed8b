//! The cantilever bending test (ASTM D1388 option A, BS 3356): a strip 2.5 cm wide slides
//! over the edge of a horizontal platform until its tip, bending under its own weight,
//! touches a slope 41.5° below the edge. With `l` that overhang, the bending length is
//!
//! ```text
//! c = l / 2,        B = w g c³
//! ```
//!
//! (Peirce 1930: the heavy elastica's tip reaches the 41.5° chord at `l = 2c` to within
//! 2%), with `B` the bending rigidity (N·m) and `w g` the fabric's weight per area (N/m²).
//! The simulated test finds the overhang by simulating strips of trial overhangs until the
//! tip's chord angle is 41.5° ± [`ANGLE_TOLERANCE`].
use super::{settle, specimen, Axis};
use crate::error::{Error, Result};
use crate::scene::Material;
use crate::stop::Stop;

/// Width of the strip (m): ASTM D1388's 25 mm.
pub const WIDTH: f64 = 0.025;

/// The chord angle of the standard (radians): 41.5°.
pub const ANGLE: f64 = 41.5 * std::f64::consts::PI / 180.0;

/// How close the simulated tip's chord angle must come to [`ANGLE`] (radians): 0.05°.
pub const ANGLE_TOLERANCE: f64 = 0.05 * std::f64::consts::PI / 180.0;

/// Simulated seconds after which a strip that still moves is reported as not settling.
const MAX_SECONDS: f64 = 12.0;

/// Trial overhangs tried at most.
const MAX_TRIALS: usize = 12;

/// The cantilever bending length (m) of `material` cut along `axis`, the strip meshed at
/// `spacing` (m).
pub fn bending_length(material: &Material, axis: Axis, spacing: f64, stop: &Stop) -> Result<f64> {
    let m = axis.orient(material);
    // The first trial: the overhang the heavy elastica predicts for the material's rigidity.
    let mut l = 2.0 * (m.bend_u / (m.density * 9.81)).cbrt();
    // The trials keep the first one's number of segments along the overhang, so that the
    // tip angle is a smooth function of the overhang.
    let along = ((l / spacing).round() as usize).max(4);
    let mut last: Option<(f64, f64)> = None;
    for _ in 0..MAX_TRIALS {
        let phi = tip_angle(&m, l, along, spacing, stop)?;
        if (phi - ANGLE).abs() < ANGLE_TOLERANCE {
            return Ok(0.5 * l);
        }
        // Secant on ln φ against ln l (φ ∝ l³ while the deflection is small).
        let slope = match last {
            Some((l0, phi0)) if (l - l0).abs() > 0.0 && phi0 > 0.0 && phi > 0.0 => {
                ((phi.ln() - phi0.ln()) / (l.ln() - l0.ln())).clamp(0.5, 4.0)
            }
            _ => 3.0,
        };
        last = Some((l, phi));
        l *= (ANGLE / phi.max(1e-6)).powf(1.0 / slope).clamp(0.25, 4.0);
    }
    Err(Error::Simulation(format!(
        "the cantilever strip's overhang did not converge to the 41.5° slope in {MAX_TRIALS} trials"
    )))
}

/// The chord angle (radians below horizontal) from the platform edge to the tip of a strip
/// of `material` with overhang `overhang` (m) in `along` segments, `spacing` (m) across,
/// at rest.
pub fn tip_angle(
    material: &Material,
    overhang: f64,
    along: usize,
    spacing: f64,
    stop: &Stop,
) -> Result<f64> {
    let strip = specimen::strip(overhang, WIDTH, 2.0 * spacing, along, spacing);
    let sim = settle(&strip, material, 9.81, None, MAX_SECONDS, stop)?;
    let tip: Vec<_> = strip
        .positions
        .iter()
        .zip(sim.positions())
        .filter(|(p0, _)| p0.x > overhang - 1e-9)
        .map(|(_, p)| *p)
        .collect();
    let mean = tip.iter().sum::<crate::Vec3>() / tip.len().max(1) as f64;
    Ok((-mean.y).atan2(mean.x))
}
