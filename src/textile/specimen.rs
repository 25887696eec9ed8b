//! The specimens of the standard fabric tests as garments: a disc for the Cusick drape
//! test and a strip for the cantilever and tensile tests, lying flat in the horizontal
//! plane `y = 0` (drape's Y-up world), UVs in metres along the fabric's axes.
//!
//! The fabric's u axis (weft unless the material says otherwise, [`Material::warp`])
//! runs along world x and v along world z, so a strip along x measures the u fibres.
//!
//! [`Material::warp`]: crate::scene::Material::warp
use crate::scene::Garment;
use crate::{Vec2, Vec3};
use std::path::PathBuf;

/// A flat disc of `radius` (m) meshed in concentric rings `spacing` (m) apart, each ring
/// with as many particles as make its chords about `spacing` long (a mesh without a
/// preferred direction, unlike a grid, so the drape's folds are not steered by it). Each
/// ring is turned by a different fraction of its chord, so that no two rings line up.
/// Particles within `clamp_radius` (m) of the centre are pinned (the specimen holder), and
/// the free particles are lifted by up to `ripple` (m), a fixed pseudo-random pattern,
/// so that the disc does not start in a perfectly symmetric state.
pub fn disc(radius: f64, spacing: f64, clamp_radius: f64, ripple: f64) -> Garment {
    let rings = (radius / spacing).round().max(1.0) as usize;
    let step = radius / rings as f64;
    let mut positions = vec![Vec3::zeros()];
    let mut starts = vec![0usize];
    let mut counts = vec![1usize];
    let mut phases = vec![0.0];
    let mut noise = Lcg(0x5eed_d1c5);
    for i in 1..=rings {
        let r = i as f64 * step;
        let n = ((std::f64::consts::TAU * r / step).round() as usize).max(6);
        let phase = (i as f64 * 0.618_033_988_75).fract() * std::f64::consts::TAU / n as f64;
        starts.push(positions.len());
        counts.push(n);
        phases.push(phase);
        for k in 0..n {
            let a = phase + k as f64 * std::f64::consts::TAU / n as f64;
            let lift = if r > clamp_radius + 1e-9 {
                ripple * noise.next()
            } else {
                0.0
            };
            positions.push(Vec3::new(r * a.cos(), lift, r * a.sin()));
        }
    }
    let mut triangles = Vec::new();
    for k in 0..counts[1] {
        triangles.push([0, 1 + k, 1 + (k + 1) % counts[1]]);
    }
    for i in 1..rings {
        // Both rings start within one chord after angle 0: walk them together by angle,
        // always closing the triangle whose new corner comes first around the circle.
        let (na, nb) = (counts[i], counts[i + 1]);
        let theta = |ring: usize, n: usize, k: usize| {
            phases[ring] + k as f64 * std::f64::consts::TAU / n as f64
        };
        let inner = |k: usize| starts[i] + k % na;
        let outer = |k: usize| starts[i + 1] + k % nb;
        let (mut a, mut b) = (0, 0);
        while a < na || b < nb {
            if b == nb || (a < na && theta(i, na, a + 1) <= theta(i + 1, nb, b + 1)) {
                triangles.push([inner(a), outer(b), inner(a + 1)]);
                a += 1;
            } else {
                triangles.push([inner(a), outer(b), outer(b + 1)]);
                b += 1;
            }
        }
    }
    // Wind every triangle counter-clockwise seen from above (+y).
    for t in &mut triangles {
        let [a, b, c] = t.map(|k| positions[k]);
        if (b - a).cross(&(c - a)).y < 0.0 {
            t.swap(1, 2);
        }
    }
    let pin = positions
        .iter()
        .map(|p| f64::from(u8::from(p.x.hypot(p.z) <= clamp_radius + 1e-9)))
        .collect();
    garment("CusickDisc", positions, triangles, pin)
}

/// A flat strip `length` × `width` (m) along world x from `x = −clamp` to `length`, cut
/// into `along` segments along its free length and segments about `spacing` (m) wide
/// across (at least 2); every particle at `x ≤ 0` is pinned (two or more columns: a clamp
/// that holds the slope as well as the position).
pub fn strip(length: f64, width: f64, clamp: f64, along: usize, spacing: f64) -> Garment {
    let along = along.max(1);
    let dx = length / along as f64;
    let behind = ((clamp / dx).ceil() as usize).max(1);
    let across = ((width / spacing).round() as usize).max(2);
    let dz = width / across as f64;
    let (ni, nj) = (behind + along + 1, across + 1);
    let positions: Vec<Vec3> = (0..ni * nj)
        .map(|k| {
            let (i, j) = (k % ni, k / ni);
            Vec3::new(
                (i as f64 - behind as f64) * dx,
                0.0,
                j as f64 * dz - 0.5 * width,
            )
        })
        .collect();
    let mut triangles = Vec::new();
    for j in 0..nj - 1 {
        for i in 0..ni - 1 {
            let [p00, p10, p01, p11] = [
                j * ni + i,
                j * ni + i + 1,
                (j + 1) * ni + i,
                (j + 1) * ni + i + 1,
            ];
            if (i + j) % 2 == 0 {
                triangles.extend([[p00, p01, p11], [p00, p11, p10]]);
            } else {
                triangles.extend([[p00, p01, p10], [p10, p01, p11]]);
            }
        }
    }
    for t in &mut triangles {
        let [a, b, c] = t.map(|k| positions[k]);
        if (b - a).cross(&(c - a)).y < 0.0 {
            t.swap(1, 2);
        }
    }
    let pin = positions
        .iter()
        .map(|p| f64::from(u8::from(p.x <= 1e-9)))
        .collect();
    garment("Strip", positions, triangles, pin)
}

/// A garment of the given flat mesh, UVs the (x, z) coordinates in metres.
fn garment(name: &str, positions: Vec<Vec3>, triangles: Vec<[usize; 3]>, pin: Vec<f64>) -> Garment {
    let corner_uvs: Vec<[Vec2; 3]> = triangles
        .iter()
        .map(|t| t.map(|k| Vec2::new(positions[k].x, positions[k].z)))
        .collect();
    let source = PathBuf::from(format!("{name}.specimen"));
    Garment::from_triangles(name, source, positions, triangles, corner_uvs, pin)
}

/// A small linear congruential generator: the same ripple on every machine.
struct Lcg(u64);

impl Lcg {
    /// The next number, uniform in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}
