//! Material parameters fitted to a user's own measurements (`drape calibrate`): areal
//! density, cantilever bending lengths (ASTM D1388) and, optionally, the Cusick drape
//! coefficient.
//!
//! The bending rigidities are found by simulating the cantilever test of both directions
//! ([`super::cantilever`]) at the given spacing and correcting `B ← B (c_measured /
//! c_simulated)³` (`B = w g c³`) until the simulated bending length is within 1% of the
//! measured one; it starts from `B = w g c³`. The drape coefficient, when given, is then
//! matched by scaling the shear modulus (and its damping) by bisection on its logarithm
//! over a factor of 100 either way, the fabric's bending fixed; a coefficient out of that
//! reach is reported with the closest one found.
use super::{cantilever, cusick, Axis};
use crate::error::{Error, Result};
use crate::scene::Material;
use crate::stop::Stop;

/// Bending-rigidity corrections tried at most.
const MAX_CORRECTIONS: usize = 6;

/// Bisection steps on the shear modulus.
const SHEAR_STEPS: usize = 10;

/// What a user measured on their fabric.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Areal density (kg/m²).
    pub density: f64,
    /// Cantilever bending length of a strip cut along u (weft), m.
    pub bending_length_u: f64,
    /// Cantilever bending length of a strip cut along v (warp), m.
    pub bending_length_v: f64,
    /// Cusick drape coefficient, if measured.
    pub drape_coefficient: Option<f64>,
}

/// The fitted material and what its simulated tests gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// `base` with the fitted density, bending rigidities (and shear).
    pub material: Material,
    /// Simulated bending lengths (u, v), m.
    pub bending_length: [f64; 2],
    /// Simulated drape coefficient, when one was asked for.
    pub drape_coefficient: Option<f64>,
}

/// Fits `base`'s density, bending rigidities and, with a measured drape coefficient, its
/// shear modulus to `measured`, simulating at `spacing` (m). `report` hears one line per
/// simulated trial.
pub fn fit(
    measured: &Measured,
    base: &Material,
    spacing: f64,
    stop: &Stop,
    report: &mut dyn FnMut(&str),
) -> Result<Fitted> {
    // The bias rigidity is not measured: the mean of the two directions.
    let mut m = Material {
        density: measured.density,
        bend_bias: None,
        ..base.clone()
    };
    let weight = measured.density * 9.81;
    let targets = [measured.bending_length_u, measured.bending_length_v];
    // Both directions are corrected together: a strip along u also bends its diagonal
    // hinges, which share the v rigidity.
    let mut b = targets.map(|c| weight * c.powi(3));
    let mut simulated = [0.0; 2];
    let mut done = false;
    for _ in 0..MAX_CORRECTIONS {
        (m.bend_u, m.bend_v) = (b[0], b[1]);
        for (k, axis) in [Axis::U, Axis::V].into_iter().enumerate() {
            simulated[k] = cantilever::bending_length(&m, axis, spacing, stop)?;
            report(&format!(
                "bending {axis:?}: B {:.3e} N·m gives c {:.2} cm (measured {:.2} cm)",
                b[k],
                100.0 * simulated[k],
                100.0 * targets[k]
            ));
        }
        if (0..2).all(|k| (simulated[k] / targets[k] - 1.0).abs() < 0.01) {
            done = true;
            break;
        }
        for k in 0..2 {
            b[k] *= (targets[k] / simulated[k]).powi(3);
        }
    }
    if !done {
        return Err(Error::Simulation(format!(
            "the simulated bending lengths did not reach the measured ones within {MAX_CORRECTIONS} corrections; try a finer --spacing"
        )));
    }
    m.bend_damping = 0.1 * m.bend_u.max(m.bend_v);
    let mut drape_coefficient = None;
    if let Some(target) = measured.drape_coefficient {
        let (shear, damping) = (m.shear, m.shear_damping);
        let at = |f: f64, m: &Material| Material {
            shear: shear * f,
            shear_damping: damping * f,
            ..m.clone()
        };
        let (mut lo, mut hi) = (0.01f64.ln(), 100f64.ln());
        let mut best: Option<(f64, f64)> = None;
        for _ in 0..SHEAR_STEPS {
            let mid = 0.5 * (lo + hi);
            let trial = at(mid.exp(), &m);
            let dc = cusick::drape(&trial, spacing, stop)?.coefficient;
            report(&format!(
                "drape: shear {:.3} N/m gives DC {dc:.3} (measured {target:.3})",
                trial.shear
            ));
            if best.is_none_or(|(_, d)| (dc - target).abs() < (d - target).abs()) {
                best = Some((mid, dc));
            }
            if (dc - target).abs() < 0.005 {
                break;
            }
            // A stiffer shear drapes less (higher DC).
            if dc > target {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        if let Some((f, dc)) = best {
            m = at(f.exp(), &m);
            drape_coefficient = Some(dc);
        }
    }
    Ok(Fitted {
        material: m,
        bending_length: simulated,
        drape_coefficient,
    })
}
