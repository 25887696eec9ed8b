//! Number formatting shared by the text formats (USD `.usda`, Houdini JSON `.geo`).
//!
//! Caches store f32 (as PC2 and MDD do), written as the shortest decimal that reads back
//! to the same f32, so text and binary caches of one bake hold identical values.
use crate::error::{Error, Result};
use crate::Vec3;

/// Longest text [`f32_text`] returns: sign, 9 significant digits, point, exponent
/// (`-1.12981344e-26`).
pub const F32_TEXT_MAX: usize = 15;

/// `x` as the shortest decimal that parses back to `x`: plain for magnitudes in
/// [10⁻⁴, 10⁷) (and zero), exponent form otherwise, at most [`F32_TEXT_MAX`] characters;
/// `-0` is written `0`. Valid in both USD and JSON. `x` must be finite.
pub fn f32_text(x: f32) -> String {
    let x = x + 0.0;
    let a = x.abs();
    if a == 0.0 || (1e-4..1e7).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `p` rounded to f32, as stored in every cache.
pub fn to_f32(p: &Vec3) -> [f32; 3] {
    [p.x as f32, p.y as f32, p.z as f32]
}

/// Checks that every point is finite after rounding to f32 (text formats cannot store
/// NaN, and no consumer wants it); the error names the first bad point.
pub fn check_finite(points: &[Vec3]) -> Result<()> {
    match points
        .iter()
        .position(|p| !to_f32(p).iter().all(|c| c.is_finite()))
    {
        None => Ok(()),
        Some(k) => Err(Error::Simulation(format!(
            "point {k} has a non-finite position ({:?})",
            points[k]
        ))),
    }
}

/// Axis-aligned bounds (min, max) of f32 points; zeros for no points.
pub fn bounds(points: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    if points.is_empty() {
        return ([0.0; 3], [0.0; 3]);
    }
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_text_round_trips_within_its_width() {
        let mut samples = vec![
            0.0f32,
            -0.0,
            1.0,
            -0.5,
            0.1,
            1e-4,
            9.999999e-5,
            1e7,
            9_999_999.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            1.0e-45,
            -1.1754944e-38,
            std::f32::consts::PI,
        ];
        // A deterministic spread over many magnitudes.
        let mut bits = 0x1234_5678u32;
        for _ in 0..20_000 {
            bits = bits.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let x = f32::from_bits(bits);
            if x.is_finite() {
                samples.push(x);
            }
        }
        for x in samples {
            let t = f32_text(x);
            assert!(t.len() <= F32_TEXT_MAX, "{x:e} -> {t} ({} chars)", t.len());
            let back: f32 = t.parse().unwrap();
            assert_eq!(back, x + 0.0, "{t}");
            // JSON accepts it too.
            let json: f64 = serde_json::from_str(&t).unwrap();
            assert_eq!(json as f32, x + 0.0, "{t}");
        }
        assert_eq!(f32_text(-0.0), "0");
        assert_eq!(f32_text(0.25), "0.25");
        assert_eq!(f32_text(2.5e-5), "2.5e-5");
    }

    #[test]
    fn non_finite_points_are_a_simulation_error_naming_the_point() {
        let p = [Vec3::new(0.0, 1.0, 2.0), Vec3::new(f64::NAN, 0.0, 0.0)];
        let e = check_finite(&p).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert!(e.to_string().contains("point 1"), "{e}");
        // Finite in f64 but not in f32.
        assert!(check_finite(&[Vec3::new(1e39, 0.0, 0.0)]).is_err());
        assert!(check_finite(&p[..1]).is_ok());
    }
}
