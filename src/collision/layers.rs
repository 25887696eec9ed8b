//! Cloth lying near each particle, from the step's self-contact springs: what body contact
//! (Baraff §6) needs to know of layers of cloth piled on a body.
//!
//! ```text
//! a_ri = n_r if γ_ri > 0, else −n_r     for each spring r with particle i among its nodes
//! ```
//! A spring's frozen normal `n_r` points from its negative side (`γ ≤ 0`: the triangle of a
//! point–triangle pair, the second edge of an edge–edge pair) to its positive side, so
//! `a_ri` points from the other cloth of the pair to `i`. Cloth lies between `i` and a
//! body's surface of outward normal `n` when some `a_ri` points out of it: `a_ri · n ≥ ½`
//! (within 60°; a pair side by side along the surface does not count).
//!
//! A particle that its body contact pulled down in an attempt rejected because it took
//! part in a crossing ([`NearbyCloth::holding`]) counts as lying over cloth too: the
//! crossing check saw cloth in its way, near or not at the detection.
use super::geometry::closest_point_barycentric;
use super::self_contact::Repulsion;
use crate::Vec3;

/// Per particle, the directions `a_ri` from the cloth within the repulsion distance (see
/// the module doc), stored compressed by particle.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NearbyCloth {
    offsets: Vec<usize>,
    away: Vec<Vec3>,
    /// Sorted particles held over cloth whatever their springs ([`NearbyCloth::holding`]).
    held: Vec<usize>,
}

/// Smallest `a_ri · n` of cloth counted as lying between a particle and a surface.
const UNDER_COSINE: f64 = 0.5;

impl NearbyCloth {
    /// The cloth near each of `particles` particles through the springs `repulsions`.
    pub fn new(particles: usize, repulsions: &[Repulsion]) -> Self {
        let mut offsets = vec![0; particles + 1];
        for r in repulsions {
            for &i in &r.nodes {
                offsets[i + 1] += 1;
            }
        }
        for i in 0..particles {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut away = vec![Vec3::zeros(); offsets[particles]];
        for r in repulsions {
            for (&i, &g) in r.nodes.iter().zip(&r.gamma) {
                away[fill[i]] = if g > 0.0 { r.normal } else { -r.normal };
                fill[i] += 1;
            }
        }
        NearbyCloth {
            offsets,
            away,
            held: Vec::new(),
        }
    }

    /// The same, with the sorted particles `held` near cloth lying between them and any
    /// surface: the particles of crossing pairs that their body contact pulled down in a
    /// rejected attempt of this frame (see `Simulator::check_and_commit`).
    pub fn holding(mut self, held: &[usize]) -> Self {
        self.held = held.to_vec();
        self
    }

    fn holds(&self, i: usize) -> bool {
        self.held.binary_search(&i).is_ok()
    }

    /// No cloth near any particle (a garment without self-collision).
    pub fn none() -> Self {
        NearbyCloth::default()
    }

    fn directions(&self, i: usize) -> &[Vec3] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.away[a..b],
            _ => &[],
        }
    }

    /// Whether cloth lies within the repulsion distance of particle `i`.
    pub fn near(&self, i: usize) -> bool {
        !self.directions(i).is_empty() || self.holds(i)
    }

    /// Whether cloth lies between particle `i` and a surface with outward normal `n`.
    pub fn over_cloth(&self, i: usize, n: Vec3) -> bool {
        self.holds(i) || self.directions(i).iter().any(|a| a.dot(&n) >= UNDER_COSINE)
    }
}

/// Whether triangle `tri` of the cloth at `x`, facing the surface (its normal within 60° of
/// the surface normal `n`, either way), lies in the way of particle `i` pulled down from
/// `x[i]` to `to`: the pull crosses it, or ends within `d` of a point of it lying below
/// `x[i]` along `n`. Triangles containing `i` never do.
pub fn pull_meets_cloth(x: &[Vec3], tri: [usize; 3], i: usize, to: Vec3, n: Vec3, d: f64) -> bool {
    if tri.contains(&i) {
        return false;
    }
    let [a, b, c] = tri.map(|k| x[k]);
    let normal = (b - a).cross(&(c - a));
    let area = normal.norm();
    if area == 0.0 || normal.dot(&n).abs() < UNDER_COSINE * area {
        return false;
    }
    let nearest = |p: Vec3| {
        let w = closest_point_barycentric(p, a, b, c);
        a * w[0] + b * w[1] + c * w[2]
    };
    let from = x[i];
    let q = nearest(to);
    if (q - to).norm() < d && (q - from).dot(&n) < 0.0 {
        return true;
    }
    let (s0, s1) = ((from - a).dot(&normal), (to - a).dot(&normal));
    if s0 * s1 >= 0.0 {
        return false;
    }
    let p = from + (to - from) * (s0 / (s0 - s1));
    (nearest(p) - p).norm() <= 1e-9 * d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upper_layer_is_over_cloth_and_the_lower_one_is_not() {
        // Particle 0 hovers over triangle (1, 2, 3); edge (4, 5) lies over edge (6, 7).
        let springs = [
            Repulsion {
                nodes: [0, 1, 2, 3],
                gamma: [1.0, -0.2, -0.3, -0.5],
                normal: Vec3::y(),
                point_triangle: true,
                slack: 0.0,
            },
            Repulsion {
                nodes: [4, 5, 6, 7],
                gamma: [0.6, 0.4, -0.5, -0.5],
                normal: Vec3::y(),
                point_triangle: false,
                slack: 0.0,
            },
        ];
        let layers = NearbyCloth::new(9, &springs);
        // A particle between two layers (a spring from above, normal down) is over cloth
        // both ways.
        let mut sandwich = springs.to_vec();
        sandwich.push(Repulsion {
            nodes: [0, 8, 8, 8],
            gamma: [1.0, -1.0, 0.0, 0.0],
            normal: -Vec3::y(),
            point_triangle: true,
            slack: 0.0,
        });
        let both = NearbyCloth::new(9, &sandwich);
        assert!(both.over_cloth(0, Vec3::y()) && both.over_cloth(0, -Vec3::y()));
        let up = Vec3::y();
        for i in 0..8 {
            assert!(layers.near(i));
            let upper = matches!(i, 0 | 4 | 5);
            assert_eq!(layers.over_cloth(i, up), upper, "particle {i}");
            // Seen from a ceiling (normal down), the lower layer is the covered one.
            assert_eq!(layers.over_cloth(i, -up), !upper, "particle {i}");
            // Side by side along a wall.
            assert!(!layers.over_cloth(i, Vec3::x()));
        }
        assert!(!layers.near(8) && !layers.over_cloth(8, up) && !layers.near(99));
        assert!(!NearbyCloth::none().near(0));
        // Held particles lie over cloth seen from any surface; the others keep their springs.
        let held = NearbyCloth::new(9, &springs).holding(&[1, 8]);
        for n in [up, -up, Vec3::x()] {
            assert!(held.over_cloth(1, n) && held.over_cloth(8, n));
            assert_eq!(held.over_cloth(2, n), layers.over_cloth(2, n));
        }
        assert!(held.near(8) && !held.near(9));
    }

    #[test]
    fn a_pull_meets_the_cloth_it_would_end_in_or_pass_through() {
        // Triangle (0, 1, 2) lies on the floor at y = 2 mm; particle 3 is 2.6 mm above it,
        // pulled down to the floor's thickness; d = 2 mm.
        let (d, up) = (0.002, Vec3::y());
        let mut x = vec![
            Vec3::new(-0.05, 0.002, -0.05),
            Vec3::new(0.05, 0.002, -0.05),
            Vec3::new(0.0, 0.002, 0.05),
            Vec3::new(0.0, 0.0046, 0.0),
        ];
        let to = Vec3::new(0.0, 0.002, 0.0);
        assert!(pull_meets_cloth(&x, [0, 1, 2], 3, to, up, d));
        // Its own triangles never block it; nor does cloth beside the pull's end.
        assert!(!pull_meets_cloth(&x, [0, 1, 3], 3, to, up, d));
        let beside = Vec3::new(0.2, 0.002, 0.0);
        x[3] = beside + Vec3::new(0.0, 0.0026, 0.0);
        assert!(!pull_meets_cloth(&x, [0, 1, 2], 3, beside, up, d));
        // A pull that passes through a layer and ends more than d below it.
        x[3] = Vec3::new(0.0, 0.012, 0.0);
        x[..3].iter_mut().for_each(|p| p.y = 0.008);
        assert!(pull_meets_cloth(&x, [0, 1, 2], 3, to, up, d));
        // A layer above the particle's start, or standing across the surface, is not in
        // the way.
        x[3] = Vec3::new(0.0, 0.0035, 0.0);
        x[..3].iter_mut().for_each(|p| p.y = 0.004);
        assert!(!pull_meets_cloth(&x, [0, 1, 2], 3, to, up, d));
        let wall = [
            Vec3::new(0.001, 0.0, -0.05),
            Vec3::new(0.001, 0.0, 0.05),
            Vec3::new(0.001, 0.05, 0.0),
        ];
        x[..3].copy_from_slice(&wall);
        x[3] = Vec3::new(0.0, 0.0046, 0.0);
        assert!(!pull_meets_cloth(&x, [0, 1, 2], 3, to, up, d));
    }
}
