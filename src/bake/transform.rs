//! World space → a garment's cache space.
//!
//! The simulation runs in world space (the source file's up axis); a cache stores each
//! garment's points in its object-local space, as the DCC that exported it expects to play
//! it back on the object, in the axis convention the cache asks for (`--up`):
//!
//! ```text
//! p_local = L⁻¹ (p_world − t)                 L, t: the object's world linear part and
//!                                               translation (Garment::world_linear,
//!                                               Garment::world_translation)
//! Y-up → Z-up:  (x, y, z) ↦ (x, −z, y)        Z-up → Y-up:  (x, y, z) ↦ (x, z, −y)
//! ```
use crate::error::{Error, Result};
use crate::scene::{Garment, UpAxis};
use crate::{Mat3, Vec3};

/// World space → one garment's object-local space in the cache's axis convention.
#[derive(Debug, Clone)]
pub struct CacheTransform {
    inverse: Mat3,
    translation: Vec3,
    swap: Option<UpAxis>,
}

impl CacheTransform {
    /// The transform of garment `g`, simulated with `source_up` as up and cached with
    /// `cache_up`. An input error if the object's transform is singular (zero scale).
    pub fn new(g: &Garment, source_up: UpAxis, cache_up: UpAxis) -> Result<Self> {
        let inverse = g.world_linear.try_inverse().ok_or_else(|| {
            Error::input(
                &g.source,
                Some(&g.name),
                "the object's transform is singular (zero scale); apply a non-zero scale",
            )
        })?;
        Ok(CacheTransform {
            inverse,
            translation: g.world_translation,
            swap: (source_up != cache_up).then_some(cache_up),
        })
    }

    /// One position per output point of `g`, from particle positions in world space.
    pub fn points(&self, g: &Garment, world: &[Vec3]) -> Vec<Vec3> {
        g.output_points
            .iter()
            .map(|&i| {
                let p = self.inverse * (world[i] - self.translation);
                match self.swap {
                    Some(UpAxis::Z) => Vec3::new(p.x, -p.z, p.y),
                    Some(UpAxis::Y) => Vec3::new(p.x, p.z, -p.y),
                    None => p,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn garment() -> Garment {
        let mut g = crate::fixtures::sheet(&crate::fixtures::SheetSpec {
            n: 2,
            ..Default::default()
        });
        g.world_linear = Mat3::from_diagonal(&Vec3::new(2.0, 2.0, 2.0));
        g.world_translation = Vec3::new(1.0, 0.0, 0.0);
        g
    }

    #[test]
    fn world_points_go_to_object_space_then_to_the_cache_axes() {
        let g = garment();
        let world = vec![Vec3::new(3.0, 4.0, 6.0); g.positions.len()];
        let same = CacheTransform::new(&g, UpAxis::Y, UpAxis::Y).unwrap();
        assert_eq!(same.points(&g, &world)[0], Vec3::new(1.0, 2.0, 3.0));
        let z_up = CacheTransform::new(&g, UpAxis::Y, UpAxis::Z).unwrap();
        assert_eq!(z_up.points(&g, &world)[0], Vec3::new(1.0, -3.0, 2.0));
        let y_up = CacheTransform::new(&g, UpAxis::Z, UpAxis::Y).unwrap();
        assert_eq!(y_up.points(&g, &world)[0], Vec3::new(1.0, 3.0, -2.0));
    }

    #[test]
    fn a_zero_scale_object_is_an_input_error_naming_it() {
        let mut g = garment();
        g.world_linear = Mat3::zeros();
        let e = CacheTransform::new(&g, UpAxis::Y, UpAxis::Y).unwrap_err();
        assert!(e.to_string().contains("non-zero scale"), "{e}");
        assert_eq!(e.exit_code(), 2);
    }
}
