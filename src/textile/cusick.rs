//! The Cusick drape test (Cusick 1968; BS 5058:1973, ISO 9073-9): a disc of fabric 30 cm
//! across is held between two discs 18 cm across and drapes over their edge; the area of
//! its shadow seen from above gives the drape coefficient
//!
//! ```text
//! DC = (A_shadow − A_pedestal) / (A_disc − A_pedestal)
//! ```
//!
//! 1 for a fabric that stays flat, about 0.2 for the limpest silks. The fabric drapes in
//! folds ("nodes"), 4 to 10 of them, fewer the stiffer it is.
use super::{settle, specimen};
use crate::error::Result;
use crate::scene::Material;
use crate::stop::Stop;
use crate::Vec3;
use std::f64::consts::PI;

/// Radius of the specimen (m): the standard 30 cm disc.
pub const DISC_RADIUS: f64 = 0.15;

/// Radius of the pedestal and the clamping disc (m): the standard 18 cm discs.
pub const PEDESTAL_RADIUS: f64 = 0.09;

/// Height of the random ripple the disc starts with (m): breaks the symmetry of the flat
/// start as handling does on the instrument.
const RIPPLE: f64 = 5e-4;

/// Side of the pixels the shadow is measured on (m).
const PIXEL: f64 = 5e-4;

/// Simulated seconds after which a specimen that still moves is reported as not settling.
const MAX_SECONDS: f64 = 30.0;

/// The result of one Cusick test.
#[derive(Debug, Clone, PartialEq)]
pub struct Drape {
    /// The drape coefficient DC.
    pub coefficient: f64,
    /// Number of folds of the draped rim.
    pub nodes: usize,
    /// The particle positions at rest (m).
    pub positions: Vec<Vec3>,
}

/// Drapes the standard disc of `material`, meshed at `spacing` (m), on the standard
/// pedestal and measures it.
pub fn drape(material: &Material, spacing: f64, stop: &Stop) -> Result<Drape> {
    let disc = specimen::disc(DISC_RADIUS, spacing, PEDESTAL_RADIUS, RIPPLE);
    let sim = settle(&disc, material, 9.81, None, MAX_SECONDS, stop)?;
    let x = sim.positions().to_vec();
    let shadow = shadow_area(&x, &disc.triangles, PIXEL);
    let (disc_area, pedestal) = (PI * DISC_RADIUS.powi(2), PI * PEDESTAL_RADIUS.powi(2));
    let rim: Vec<Vec3> = disc
        .positions
        .iter()
        .zip(&x)
        .filter(|(p0, _)| p0.x.hypot(p0.z) > DISC_RADIUS - 1e-6)
        .map(|(_, p)| *p)
        .collect();
    Ok(Drape {
        coefficient: (shadow - pedestal) / (disc_area - pedestal),
        nodes: count_nodes(&rim),
        positions: x,
    })
}

/// The area (m²) of the union of the triangles' shadows on the plane `y = 0` seen from
/// above: pixels of side `pixel` (m) whose centre lies in some projected triangle.
pub fn shadow_area(x: &[Vec3], triangles: &[[usize; 3]], pixel: f64) -> f64 {
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in x {
        for (k, c) in [p.x, p.z].into_iter().enumerate() {
            lo[k] = lo[k].min(c);
            hi[k] = hi[k].max(c);
        }
    }
    if !(lo[0].is_finite() && hi[0].is_finite()) {
        return 0.0;
    }
    let cols = ((hi[0] - lo[0]) / pixel).ceil() as usize + 1;
    let rows = ((hi[1] - lo[1]) / pixel).ceil() as usize + 1;
    let mut covered = vec![false; cols * rows];
    let centre = |i: usize, k: usize| lo[k] + (i as f64 + 0.5) * pixel;
    for t in triangles {
        let q = t.map(|k| [x[k].x, x[k].z]);
        let area2 =
            (q[1][0] - q[0][0]) * (q[2][1] - q[0][1]) - (q[2][0] - q[0][0]) * (q[1][1] - q[0][1]);
        if area2 == 0.0 {
            continue;
        }
        let range = |k: usize| {
            let (a, b) = q
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(p[k]), b.max(p[k]))
                });
            (
                ((a - lo[k]) / pixel - 0.5).ceil().max(0.0) as usize,
                ((b - lo[k]) / pixel - 0.5).floor() as usize,
            )
        };
        let ((c0, c1), (r0, r1)) = (range(0), range(1));
        for r in r0..=r1.min(rows - 1) {
            for c in c0..=c1.min(cols - 1) {
                let p = [centre(c, 0), centre(r, 1)];
                let side = |a: [f64; 2], b: [f64; 2]| {
                    ((b[0] - a[0]) * (p[1] - a[1]) - (p[0] - a[0]) * (b[1] - a[1])) * area2.signum()
                };
                if side(q[0], q[1]) >= 0.0 && side(q[1], q[2]) >= 0.0 && side(q[2], q[0]) >= 0.0 {
                    covered[r * cols + c] = true;
                }
            }
        }
    }
    covered.iter().filter(|&&c| c).count() as f64 * pixel * pixel
}

/// Folds of a draped rim: the maxima of its distance from the axis around the circle
/// (smoothed over 10°) that stand out from the minima on both sides by more than 5% of
/// the specimen's overhang.
pub fn count_nodes(rim: &[Vec3]) -> usize {
    const BINS: usize = 180;
    let mut radius = [f64::NAN; BINS];
    for p in rim {
        let b = ((p.z.atan2(p.x) + PI) / (2.0 * PI) * BINS as f64) as usize % BINS;
        let r = p.x.hypot(p.z);
        radius[b] = if radius[b].is_nan() {
            r
        } else {
            radius[b].max(r)
        };
    }
    // Fill empty bins from their neighbours, then smooth.
    for _ in 0..BINS {
        for b in 0..BINS {
            if radius[b].is_nan() {
                radius[b] = radius[(b + 1) % BINS];
            }
        }
    }
    if radius.iter().any(|r| r.is_nan()) {
        return 0;
    }
    let smooth: Vec<f64> = (0..BINS)
        .map(|b| {
            (0..5)
                .map(|d| radius[(b + BINS + d - 2) % BINS])
                .sum::<f64>()
                / 5.0
        })
        .collect();
    let prominence = 0.05 * (DISC_RADIUS - PEDESTAL_RADIUS);
    // Walk the circle from its lowest point, counting rises and falls by more than the
    // prominence (hysteresis).
    let start = (0..BINS)
        .min_by(|&a, &b| smooth[a].total_cmp(&smooth[b]))
        .unwrap_or(0);
    let (mut nodes, mut rising, mut low, mut high) = (0, true, smooth[start], smooth[start]);
    for d in 1..=BINS {
        let r = smooth[(start + d) % BINS];
        if rising {
            high = high.max(r);
            if high - r > prominence {
                nodes += 1;
                rising = false;
                low = r;
            }
        } else {
            low = low.min(r);
            if r - low > prominence {
                rising = true;
                high = r;
            }
        }
    }
    nodes
}
