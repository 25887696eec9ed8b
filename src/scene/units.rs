//! Lengths the file's units give, and the check that they are plausible for clothing.
//!
//! `--scale S` multiplies every length of the input as drape reads it: world positions of
//! garments and bodies and their animations, and each garment's object-to-world transform
//! (`L ↦ S L`, `t ↦ S t`). A garment's object-local points, keyframes included, stay as
//! the file has them, so the cache, written as `L⁻¹ (p − t)` (`bake::transform`), comes
//! back in the file's own units.
//!
//! A garment whose bounding box at the first frame is wider than [`LARGEST`] or smaller
//! than [`SMALLEST`] is not a garment in metres; nor is an animated body of that size (a
//! static body may be a floor of any size). Each gets a warning that names its size and the
//! `--scale` that would bring it nearest a metre (a power of ten).
use super::{Body, Garment, Scene};
use crate::Vec3;

/// Largest plausible size (m) of a garment or an animated body (a character): 5 m.
pub const LARGEST: f64 = 5.0;

/// Smallest plausible size (m) of a garment or an animated body: 5 cm.
pub const SMALLEST: f64 = 0.05;

impl Scene {
    /// Multiplies every length of the scene by `s` (`--scale`; the module doc says which).
    pub fn scale_lengths(&mut self, s: f64) {
        for g in &mut self.garments {
            g.world_linear *= s;
            g.world_translation *= s;
            if let Some(a) = &mut g.animation {
                a.positions.iter_mut().flatten().for_each(|p| *p *= s);
            }
        }
        for b in &mut self.bodies {
            (b.animation.positions.iter_mut().flatten()).for_each(|p| *p *= s);
        }
    }

    /// One warning per garment, and per animated body, whose size at the first frame is
    /// outside [`SMALLEST`]..[`LARGEST`]; `scale` is the `--scale` already applied (1
    /// without), to say what the file itself holds.
    pub fn size_warnings(&self, scale: f64) -> Vec<String> {
        let garments =
            (self.garments.iter()).map(|g| ("garment", g.name.as_str(), size_of_garment(g)));
        let bodies = (self.bodies.iter())
            .filter(|b| b.animation.frames.len() > 1)
            .map(|b| ("body", b.name.as_str(), size_of_body(b)));
        garments
            .chain(bodies)
            .filter(|(_, _, size)| !(SMALLEST..=LARGEST).contains(size))
            .map(|(kind, name, size)| {
                let suggest = short(scale * suggested_scale(size));
                let (adjective, given) = if size > LARGEST {
                    ("large", "wider than 5 m")
                } else {
                    ("small", "smaller than 5 cm")
                };
                format!(
                    "{kind} '{name}' is {size:.3} m across at the first frame ({given}), implausibly {adjective} for clothing or a character: the file's units are probably not metres (a model in centimetres read as metres is 100× too large); give --scale {suggest} to read it at a plausible size, or set the units in the export"
                )
            })
            .collect()
    }
}

/// The largest side of the bounding box of `points` (m); 0 for none.
fn extent<'a>(points: impl Iterator<Item = &'a Vec3>) -> f64 {
    let mut lo = Vec3::repeat(f64::INFINITY);
    let mut hi = Vec3::repeat(f64::NEG_INFINITY);
    for p in points {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    (hi - lo).max().max(0.0)
}

fn size_of_garment(g: &Garment) -> f64 {
    extent(g.world_positions().iter())
}

fn size_of_body(b: &Body) -> f64 {
    extent(b.animation.positions[0].iter())
}

/// `x` with at most six decimals and no trailing zeros (`0.010000000000000002` → `0.01`).
fn short(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The power of ten that brings `size` (m) nearest to one metre (on a log scale).
fn suggested_scale(size: f64) -> f64 {
    10f64.powi(-size.log10().round() as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{sheet, SheetSpec};
    use crate::scene::{Animation, UpAxis};
    use crate::Mat3;

    fn scene(garment_scale: f64) -> Scene {
        let mut g = sheet(&SheetSpec {
            n: 3,
            ..Default::default()
        });
        g.world_linear = Mat3::identity() * garment_scale;
        Scene {
            garments: vec![g],
            bodies: Vec::new(),
            up: UpAxis::Y,
            fps: None,
            frame_range: None,
        }
    }

    #[test]
    fn scaling_multiplies_world_lengths_and_keeps_object_space() {
        let mut s = scene(1.0);
        s.bodies.push(Body {
            name: "Body".into(),
            source: "b.gltf".into(),
            triangles: vec![[0, 1, 2]],
            animation: Animation {
                frames: vec![1.0, 2.0],
                positions: vec![vec![Vec3::new(1.0, 2.0, 3.0); 3]; 2],
            },
            thickness: None,
            friction: None,
        });
        s.garments[0].world_translation = Vec3::new(0.0, 10.0, 0.0);
        let local = s.garments[0].positions.clone();
        let world = s.garments[0].world_positions();
        s.scale_lengths(0.01);
        let g = &s.garments[0];
        assert_eq!(g.positions, local);
        for (a, b) in g.world_positions().iter().zip(&world) {
            assert!((a - b * 0.01).norm() < 1e-15);
        }
        assert_eq!(
            s.bodies[0].animation.positions[1][2],
            Vec3::new(0.01, 0.02, 0.03)
        );
    }

    #[test]
    fn sizes_outside_clothing_are_named_with_the_scale_that_fixes_them() {
        // The sheet fixture is 1 m wide: plausible as it is.
        assert!(scene(1.0).size_warnings(1.0).is_empty());
        // Read as centimetres, it is 100 m: the advice is --scale 0.01.
        let w = scene(100.0).size_warnings(1.0);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("100.000 m across") && w[0].contains("--scale 0.01"),
            "{w:?}"
        );
        // 1 cm: --scale 100.
        let w = scene(0.01).size_warnings(1.0);
        assert!(
            w[0].contains("smaller than 5 cm") && w[0].contains("--scale 100 "),
            "{w:?}"
        );
        // Already scaled by 0.1 and still 10 m: the scale to give is 0.01 overall.
        let w = scene(10.0).size_warnings(0.1);
        assert!(w[0].contains("--scale 0.01 "), "{w:?}");
    }
}
