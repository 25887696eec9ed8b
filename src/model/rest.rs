//! The rest state of the cloth (`--rest`): the UV panels as cut, or the modelled shape at
//! the first frame, chosen per panel (docs/reference.md, "Rest state").
//!
//! For a triangle with rest UV edges `D = [Δuv₁ Δuv₂]` (2×2, metres after `--uv-scale`)
//! and 3D edges `X = [Δx₁ Δx₂]` (3×2) at the first frame:
//!
//! ```text
//! F   = X D⁻¹ = [w_u w_v]         3×2, the images of the UV unit directions (Baraff eq. 9)
//! S   = sqrt(FᵀF)                 2×2 symmetric positive definite; eigenvalues σ₁, σ₂ are
//!                                 the principal stretches of the shape against the panel
//! F   = R S                       polar decomposition, R (3×2) with orthonormal columns
//! rest corner = S · uv            Rest::Shape: then X (S D)⁻¹ = F S⁻¹ = R, so ‖w_u‖ = ‖w_v‖
//!                                 = 1 and w_uᵀ w_v = 0: no stretch, no shear in the shape
//! e_t = max(|σ₁ − 1|, |σ₂ − 1|)   worst principal stretch of triangle t
//! m_k = Σ_t A_t e_t / Σ_t A_t     mismatch of panel k, A_t the 3D area of t (m²)
//! ```
//!
//! * Seams, panels and bend hinges still come from the UVs (only the rest corners change);
//!   the rest area `|det S| a_uv` is the 3D area, so masses are those of the shape.
//! * Material axes: the rest u axis is worn along `R e_u`, the drawn u direction along
//!   `F e_u = R S e_u`. They coincide where the UVs are stretched along their own axes
//!   (`S` diagonal: a cylinder's rectangle); where the UVs also shear, the polar factor
//!   splits the difference evenly between warp and weft (each is off by at most half the
//!   shear angle), where a QR factor would keep the warp exact and put it all on the weft.
//!   Mirrored UV islands stay mirrored (`det(S D)` has the sign of `det D`).
//! * Each triangle keeps its own rest corners (as across seams, Baraff §2.1 footnote 3);
//!   neighbours agree on their shared edge's rest length, its 3D length.
//! * `S · uv` does not depend on `--uv-scale` (`S` scales inversely). `m_k` is measured
//!   after it: under `auto` (each panel sized to its 3D area) it sees distortion only, with
//!   a fixed scale a wrong scale counts as mismatch too.
//! * Bend hinges keep rest angle 0: a panel is flat cloth, and the shape's curvature comes
//!   from its seams, pins and bodies. Taking the modelled dihedral angles as rest would make
//!   the cloth hold the modelled folds (and any faceting of the mesh) like a shell.
//!
//! `Rest::Auto` keeps the UV panel where `m_k ≤` [`AUTO_TOLERANCE`] and takes the shape
//! elsewhere (and where a panel has a triangle of zero 3D area, keeps the panel).
use super::TriangleRest;
use crate::forces::deformation::Deformation;
use crate::{Vec2, Vec3};

/// Which state the cloth rests in (`--rest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rest {
    /// Each panel's UV layout where it matches the modelled shape within
    /// [`AUTO_TOLERANCE`], the modelled shape elsewhere (default).
    #[default]
    Auto,
    /// The UV panels scaled per `--uv-scale` (the UVs are the sewing pattern).
    Uv,
    /// The modelled shape at the first frame, with the UV directions as material axes.
    Shape,
}

impl Rest {
    /// The flag value: `auto`, `uv` or `shape`.
    pub fn name(self) -> &'static str {
        match self {
            Rest::Auto => "auto",
            Rest::Uv => "uv",
            Rest::Shape => "shape",
        }
    }
}

/// Largest panel mismatch `m_k` (area-weighted mean of the worst principal stretch, as a
/// fraction) for which `Rest::Auto` keeps a UV panel: 15%. A garment modelled as worn is
/// rarely stretched more than that on average over a panel (woven cloth a few percent,
/// knits worn close 10–15%), so a real pattern keeps its panels; layouts made for
/// texturing that are not patterns (a cylinder's rectangle, a projection) are 30–90% off.
pub const AUTO_TOLERANCE: f64 = 0.15;

/// The rest chosen for one panel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PanelRest {
    /// True if the panel rests in the modelled shape, false if in its UV layout.
    pub shape: bool,
    /// The panel's mismatch `m_k`: area-weighted mean over its triangles of the worst
    /// principal stretch `|σ − 1|` of the shape against the scaled UVs (fraction).
    pub mismatch: f64,
    /// Number of triangles in the panel.
    pub triangles: usize,
}

/// The rest state of every triangle under `rest` and the choice per panel. `uv_rest` is the
/// rest of the UV panels (scaled to metres), `x` the first frame's positions. A triangle of
/// zero 3D area under `Rest::Shape` is an error message (the caller names the garment).
pub(crate) fn choose(
    rest: Rest,
    uv_rest: Vec<TriangleRest>,
    x: &[Vec3],
    triangles: &[[usize; 3]],
    panel_of: &[usize],
    n_panels: usize,
) -> Result<(Vec<TriangleRest>, Vec<PanelRest>), String> {
    let mut weighted = vec![0.0; n_panels];
    let mut area = vec![0.0; n_panels];
    let mut count = vec![0; n_panels];
    let mut shape_ok = vec![true; n_panels];
    let mut shape_rest = Vec::with_capacity(triangles.len());
    for (t, (tri, r)) in triangles.iter().zip(&uv_rest).enumerate() {
        let p = tri.map(|i| x[i]);
        let (s, sigma) = stretch_factor(&p, r);
        let k = panel_of[t];
        let a = 0.5 * (p[1] - p[0]).cross(&(p[2] - p[0])).norm();
        weighted[k] += a * sigma.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
        area[k] += a;
        count[k] += 1;
        let shaped = TriangleRest::new(r.uv.map(|c| s * c));
        shape_ok[k] &= shaped.is_some();
        if rest == Rest::Shape && shaped.is_none() {
            return Err(format!(
                "triangle {t} has zero area in the modelled shape at the first frame, so \
                 --rest shape cannot rest on it; remove degenerate faces (Merge by Distance) \
                 or give --rest uv"
            ));
        }
        shape_rest.push(shaped);
    }
    let panels: Vec<PanelRest> = (0..n_panels)
        .map(|k| {
            let mismatch = if area[k] > 0.0 {
                weighted[k] / area[k]
            } else {
                0.0
            };
            let shape = match rest {
                Rest::Uv => false,
                Rest::Shape => true,
                Rest::Auto => mismatch > AUTO_TOLERANCE && shape_ok[k],
            };
            PanelRest {
                shape,
                mismatch,
                triangles: count[k],
            }
        })
        .collect();
    let rests = uv_rest
        .into_iter()
        .zip(shape_rest)
        .enumerate()
        .map(|(t, (uv, shaped))| match shaped {
            Some(s) if panels[panel_of[t]].shape => s,
            _ => uv,
        })
        .collect();
    Ok((rests, panels))
}

/// `S = sqrt(FᵀF)` of the triangle with corners `p` against its UV rest `r`, and its
/// eigenvalues `σ₁ ≥ σ₂ ≥ 0`. For a 2×2 SPD `M`:
/// `sqrt(M) = (M + √det M · I) / √(tr M + 2 √det M)` and `σ² = tr/2 ± √(tr²/4 − det)`.
fn stretch_factor(p: &[Vec3; 3], r: &TriangleRest) -> (Stretch2, [f64; 2]) {
    let w = Deformation::new(p, r);
    let (a, b, d) = (w.wu.dot(&w.wu), w.wu.dot(&w.wv), w.wv.dot(&w.wv));
    let det = (a * d - b * b).max(0.0);
    let root_det = det.sqrt();
    let norm = (a + d + 2.0 * root_det).sqrt();
    let half = 0.5 * (a + d);
    let gap = (half * half - det).max(0.0).sqrt();
    let sigma = [(half + gap).sqrt(), (half - gap).max(0.0).sqrt()];
    if norm > 0.0 {
        let s = Stretch2 {
            m: [
                [(a + root_det) / norm, b / norm],
                [b / norm, (d + root_det) / norm],
            ],
        };
        (s, sigma)
    } else {
        (Stretch2 { m: [[0.0; 2]; 2] }, sigma)
    }
}

/// A symmetric 2×2 matrix acting on UV points.
#[derive(Debug, Clone, Copy)]
struct Stretch2 {
    m: [[f64; 2]; 2],
}

impl std::ops::Mul<Vec2> for Stretch2 {
    type Output = Vec2;
    fn mul(self, p: Vec2) -> Vec2 {
        Vec2::new(
            self.m[0][0] * p.x + self.m[0][1] * p.y,
            self.m[1][0] * p.x + self.m[1][1] * p.y,
        )
    }
}

/// The warning of a `Rest::Auto` choice that took the shape for some panels; `None` if
/// every panel kept its UV layout (or the rest was forced).
pub(crate) fn warning(rest: Rest, panels: &[PanelRest]) -> Option<String> {
    if rest != Rest::Auto {
        return None;
    }
    let shaped: Vec<(usize, &PanelRest)> =
        panels.iter().enumerate().filter(|(_, p)| p.shape).collect();
    if shaped.is_empty() {
        return None;
    }
    const LISTED: usize = 4;
    let mut list: Vec<String> = shaped
        .iter()
        .take(LISTED)
        .map(|(k, p)| {
            format!(
                "panel {k} ({} triangles) by {:.0}%",
                p.triangles,
                100.0 * p.mismatch
            )
        })
        .collect();
    if shaped.len() > LISTED {
        list.push(format!("{} more", shaped.len() - LISTED));
    }
    let (which, verb, them) = match (shaped.len(), panels.len()) {
        (1, 1) => ("the garment's UV panel".to_string(), "differs", "its"),
        (1, m) => (format!("1 of {m} UV panels"), "differs", "its"),
        (n, m) if n == m => (format!("all {m} UV panels"), "differ", "their"),
        (n, m) => (format!("{n} of {m} UV panels"), "differ", "their"),
    };
    Some(format!(
        "{which} {verb} from the modelled shape by more than {:.0}% stretch ({}; mean of the \
         worst principal stretch), so the UVs are not a sewing pattern there: the modelled \
         shape at the first frame is {them} rest state — give --rest uv to keep the UV \
         panels (the garment then pulls toward them)",
        100.0 * AUTO_TOLERANCE,
        list.join(", ")
    ))
}

#[cfg(test)]
#[path = "rest_tests.rs"]
mod tests;
