//! The spring network of the mass-spring model (Kang & Cho §3; Choi & Ko 2002), built
//! from the cloth model's triangles and rest UVs:
//!
//! * a **stretch** spring on every edge, rest length the edge's rest UV length (the mean of
//!   its triangles' when they disagree across a seam), area share `Σ A_t / 3` over the
//!   triangles using it;
//! * a **hinge** spring (shear and bend) across every pair of triangles sharing an edge,
//!   between the two opposite vertices, rest length their distance with both triangles
//!   unfolded flat around the shared edge:
//!
//! ```text
//! (s_k, p_k) = position of wing k along the edge and its distance from it, in triangle k's
//!              rest UVs (m)
//! L₀ = √((s₀ − s₁)² + (p₀ + p₁)²)      weight w = 3‖e‖² / (A₀ + A₁)  (as the bend hinges)
//! ```
//! The pairs are the same as the bend hinges' ([`super::Hinge`]): consecutive triangles
//! around an edge, skipping pairs whose windings disagree.
use super::topology::{edges, Side};
use super::{ClothModel, TriangleRest};
use crate::Vec2;

/// What a spring stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpringKind {
    /// On a mesh edge: resists stretch.
    Stretch,
    /// Between the opposite vertices of two triangles sharing an edge: resists shear
    /// (in-plane) and bending (out-of-plane folds shorten it).
    Hinge,
}

/// One spring of the network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spring {
    /// The two particles.
    pub nodes: [usize; 2],
    /// Rest length `L₀` (m).
    pub rest: f64,
    /// Stretch or hinge spring.
    pub kind: SpringKind,
    /// Rest area it stands for (m²): `Σ A_t / 3` of an edge's triangles, `(A₀ + A₁)/3` of a
    /// hinge's two triangles.
    pub area: f64,
    /// Discrete-shells weight `3‖e‖²/(A₀ + A₁)` of a hinge spring (dimensionless, 0 for
    /// stretch springs).
    pub weight: f64,
}

/// Stretch springs first (edge order), then hinge springs (edge order). Springs of zero
/// rest length (coincident rest UVs cannot occur in a valid model) are skipped.
pub fn springs(model: &ClothModel) -> Vec<Spring> {
    let edge_list = edges(&model.triangles);
    let mut out = Vec::with_capacity(edge_list.len() * 2);
    for e in &edge_list {
        let rest = e
            .sides
            .iter()
            .map(|s| side_length(&model.rest[s.tri], s))
            .sum::<f64>()
            / e.sides.len() as f64;
        let area = e.sides.iter().map(|s| model.rest[s.tri].area).sum::<f64>() / 3.0;
        if rest > 0.0 {
            out.push(Spring {
                nodes: [e.a, e.b],
                rest,
                kind: SpringKind::Stretch,
                area,
                weight: 0.0,
            });
        }
    }
    for e in &edge_list {
        for pair in e.sides.windows(2) {
            let (s, t) = (&pair[0], &pair[1]);
            if s.runs_a_to_b() == t.runs_a_to_b() {
                continue;
            }
            let (rs, rt) = (&model.rest[s.tri], &model.rest[t.tri]);
            let (sa, pa) = wing_coordinates(rs, s);
            let (sb, pb) = wing_coordinates(rt, t);
            let rest = ((sa - sb).powi(2) + (pa + pb).powi(2)).sqrt();
            let len = 0.5 * (side_length(rs, s) + side_length(rt, t));
            if rest > 0.0 {
                out.push(Spring {
                    nodes: [
                        model.triangles[s.tri][s.opposite()],
                        model.triangles[t.tri][t.opposite()],
                    ],
                    rest,
                    kind: SpringKind::Hinge,
                    area: (rs.area + rt.area) / 3.0,
                    weight: 3.0 * len * len / (rs.area + rt.area),
                });
            }
        }
    }
    out
}

/// Rest length of the edge `s` in its triangle's UVs (m).
fn side_length(r: &TriangleRest, s: &Side) -> f64 {
    (r.uv[s.cb] - r.uv[s.ca]).norm()
}

/// Position of the triangle's wing along the edge from `a` (m) and its distance from the
/// edge's line (m), in the triangle's rest UVs.
fn wing_coordinates(r: &TriangleRest, s: &Side) -> (f64, f64) {
    let a: Vec2 = r.uv[s.ca];
    let e = r.uv[s.cb] - a;
    let len = e.norm();
    let w = r.uv[s.opposite()] - a;
    let along = w.dot(&e) / len;
    let across = (e.x * w.y - e.y * w.x).abs() / len;
    (along, across)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{sheet, SheetPins, SheetSpec, SheetUv};
    use crate::model::UvScale;

    #[test]
    fn grid_springs_have_edge_and_unfolded_wing_rest_lengths() {
        // 5 × 5 particles, 1 m: cells of 0.25 m cut by one diagonal each.
        let g = sheet(&SheetSpec {
            n: 5,
            uv: SheetUv::Metres,
            pins: SheetPins::None,
            seam: true,
            ..SheetSpec::default()
        });
        let m = ClothModel::build(&g, UvScale::Fixed(1.0), 0.1).unwrap();
        let s = springs(&m);
        let cell = 0.25;
        let stretch: Vec<&Spring> = s.iter().filter(|s| s.kind == SpringKind::Stretch).collect();
        let hinge: Vec<&Spring> = s.iter().filter(|s| s.kind == SpringKind::Hinge).collect();
        // One per edge and one per interior edge (the seam's edges included).
        let interior = 2 * 5 * 4 + 16 - 4 * 4;
        assert_eq!(stretch.len(), 2 * 5 * 4 + 16);
        assert_eq!(hinge.len(), interior);
        assert_eq!(hinge.len(), m.hinges.len());
        for sp in &stretch {
            // Rest length = the 3D length of the flat sheet's edge.
            let d = (m.positions[sp.nodes[0]] - m.positions[sp.nodes[1]]).norm();
            assert!((sp.rest - d).abs() < 1e-12, "{sp:?} vs {d}");
            assert!(sp.rest == cell || (sp.rest - cell * 2f64.sqrt()).abs() < 1e-12);
        }
        for sp in &hinge {
            // Flat rest: the wings' rest distance is their 3D distance.
            let d = (m.positions[sp.nodes[0]] - m.positions[sp.nodes[1]]).norm();
            assert!((sp.rest - d).abs() < 1e-12, "{sp:?} vs {d}");
            assert!(sp.weight > 0.0 && sp.area > 0.0);
        }
        let total: f64 = stretch.iter().map(|s| s.area).sum();
        assert!(
            (total - 1.0).abs() < 1e-12,
            "edge area shares sum to the area: {total}"
        );
    }
}
