//! The cloth model: welded particles, per-triangle rest UVs in metres, lumped masses and
//! bend hinges, built once from a [`Garment`].
//!
//! * Seams (Baraff §2.1 footnote 3): a particle on a seam has one UV per triangle corner,
//!   so each triangle keeps its own rest UVs ([`TriangleRest`]).
//! * Panels are the UV islands (connected through shared corner UVs). Each is scaled to
//!   metres per [`UvScale`]: `Auto` scales a panel uniformly so its UV area equals its 3D
//!   area at the first frame.
//! * Rest state ([`Rest`], module `rest`): the scaled UV panels, or per panel the
//!   modelled shape at the first frame when the UVs are not its sewing pattern.
//! * Masses: density × rest area / 3 per corner; a particle used by no triangle gets the
//!   mean mass (so the system stays positive definite).
//! * Hinges: one per interior edge (two triangles sharing two particles), including edges
//!   across seams, whose rest angle is 0 (flat panels sewn flat). An edge shared by k > 2
//!   triangles gets k − 1 hinges between consecutive triangles (in triangle order).
//! * Winding: the builder makes each connected piece consistently wound (flipping the
//!   minority of triangles), so [`ClothModel::triangles`] may differ from the garment's
//!   in corner order.
use crate::scene::Garment;
use crate::{Result, Vec2, Vec3};
pub use rest::{PanelRest, Rest, AUTO_TOLERANCE};

mod build;
mod hinges;
mod rest;
pub mod springs;
#[cfg(test)]
mod tests;
pub(crate) mod topology;

/// How UV units map to metres (`--uv-scale`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UvScale {
    /// Scale each panel uniformly so its UV area equals its 3D area at the first frame.
    Auto,
    /// Metres per UV unit, the same for all panels.
    Fixed(f64),
}

/// Rest state of one triangle (Baraff §4.2, eq. 9).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TriangleRest {
    /// Rest (u, v) of the three corners, metres.
    pub uv: [Vec2; 3],
    /// Rest area `a` in m² (always positive, also for mirrored UVs).
    pub area: f64,
    /// Inverse of `[[Δu1, Δu2], [Δv1, Δv2]]` (rows u, v), so that
    /// `[w_u w_v] = [Δx1 Δx2] · inv` (Baraff eq. 9). Stored row-major: `[[a, b], [c, d]]`.
    pub inv: [[f64; 2]; 2],
}

impl TriangleRest {
    /// Rest state from three corner UVs in metres; `None` if the UV triangle is degenerate
    /// (area below `1e-14` m² or relative to its edge lengths).
    pub fn new(uv: [Vec2; 3]) -> Option<TriangleRest> {
        let d1 = uv[1] - uv[0];
        let d2 = uv[2] - uv[0];
        let det = d1.x * d2.y - d2.x * d1.y;
        let scale = d1.norm_squared().max(d2.norm_squared());
        if !det.is_finite() || det.abs() <= 1e-12 * scale || det.abs() < 2e-14 {
            return None;
        }
        let inv = [[d2.y / det, -d2.x / det], [-d1.y / det, d1.x / det]];
        Some(TriangleRest {
            uv,
            area: 0.5 * det.abs(),
            inv,
        })
    }
}

/// A bend hinge: two triangles sharing the edge `edge`; `wings[0]` is the third vertex of
/// the first triangle, `wings[1]` of the second (Stuyck fig. 7.6: x1, x2 edge; x0, x3 wings).
///
/// Orientation: the first triangle runs x0 → x2 → x1 and the second x3 → x1 → x2
/// (counter-clockwise), so Stuyck's `n_A = (x2 − x0) × (x1 − x0)` and
/// `n_B = (x1 − x3) × (x2 − x3)` (eq. 7.36) are both front normals and θ = 0 when flat.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hinge {
    /// The shared edge's particles (x1, x2).
    pub edge: [usize; 2],
    /// The two opposite particles (x0 in the first triangle, x3 in the second).
    pub wings: [usize; 2],
    /// Discrete-shells weight `3‖e‖² / (A₁ + A₂)` from rest lengths and areas (dimensionless).
    pub weight: f64,
    /// Share of the u rigidity: `d_v²` where `(d_u, d_v)` is the unit rest direction of the
    /// edge in UV space (bending about a hinge along v bends the u fibres). `k = weight ·
    /// (B_u · u_share + B_v · (1 − u_share))`.
    pub u_share: f64,
    /// Rest dihedral angle θ₀ (radians); 0 for flat panels and seams.
    pub rest_angle: f64,
    /// True if the edge joins two panels (its two triangles disagree on the edge's UVs).
    pub seam: bool,
}

/// The simulated cloth of one garment.
#[derive(Debug, Clone)]
pub struct ClothModel {
    /// Initial particle positions in world space (metres).
    pub positions: Vec<Vec3>,
    /// Triangles as particle indices.
    pub triangles: Vec<[usize; 3]>,
    /// Rest state per triangle: its UVs scaled to metres, or its modelled shape's
    /// ([`Rest`]).
    pub rest: Vec<TriangleRest>,
    /// Panel (UV island) index of each triangle.
    pub panel_of_triangle: Vec<usize>,
    /// Number of panels.
    pub panels: usize,
    /// Metres per UV unit chosen for each panel.
    pub panel_scale: Vec<f64>,
    /// The rest state asked for (`--rest`).
    pub rest_mode: Rest,
    /// The rest chosen for each panel and its mismatch against the modelled shape.
    pub panel_rest: Vec<PanelRest>,
    /// Bend hinges, one per interior edge.
    pub hinges: Vec<Hinge>,
    /// Number of welded edges whose two faces disagree on UVs (docs/reference.md, `inspect --json`).
    pub seam_edges: usize,
    /// Lumped particle masses (kg).
    pub mass: Vec<f64>,
}

impl ClothModel {
    /// Builds the model of `garment` (world-space positions at the first frame), with panels
    /// scaled per `uv_scale` as its rest state ([`Rest::Uv`]) and masses from `density`
    /// (kg/m²). Degenerate UV triangles, non-finite positions and missing UVs are input
    /// errors naming the garment.
    pub fn build(garment: &Garment, uv_scale: UvScale, density: f64) -> Result<ClothModel> {
        build::build(garment, Rest::Uv, uv_scale, density)
    }

    /// As [`ClothModel::build`], with the rest state chosen per `rest` (`--rest`); under
    /// [`Rest::Shape`] a triangle of zero area in the modelled shape is an input error too.
    pub fn build_with_rest(
        garment: &Garment,
        rest: Rest,
        uv_scale: UvScale,
        density: f64,
    ) -> Result<ClothModel> {
        build::build(garment, rest, uv_scale, density)
    }

    /// The warning of a [`Rest::Auto`] choice that took the modelled shape as the rest of
    /// some panels (which, by how much, and how to keep the UV panels); `None` otherwise.
    pub fn rest_warning(&self) -> Option<String> {
        rest::warning(self.rest_mode, &self.panel_rest)
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// True if the model has no particles.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}
