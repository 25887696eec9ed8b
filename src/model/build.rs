//! [`ClothModel::build`](super::ClothModel::build): validation, panels, rest state, masses,
//! hinges.
//!
//! ```text
//! s_k      = sqrt(A3D_k / AUV_k)     UvScale::Auto: metres per UV unit of panel k, from its
//!                                    3D area A3D_k (m², first frame) and UV area AUV_k
//! rest uv  = s_k · corner uv         per triangle corner (Baraff §2.1 footnote 3), or the
//!                                    modelled shape's rest per panel ([`super::rest`])
//! m_i      = Σ_{t ∋ i} ρ a_t / 3      lumped mass (kg), ρ density (kg/m²), a_t rest area (m²)
//! ```
//! A particle used by no triangle (a loose vertex) gets the mean mass of the others so the
//! system matrix stays positive definite; no force but gravity acts on it.
use super::topology::{edges, orient, panels};
use super::{hinges::hinges, rest, ClothModel, Rest, TriangleRest, UvScale};
use crate::error::{Error, Result};
use crate::scene::Garment;
use crate::{Vec2, Vec3};

pub(crate) fn build(
    g: &Garment,
    rest_mode: Rest,
    uv_scale: UvScale,
    density: f64,
) -> Result<ClothModel> {
    let err = |msg: String| Error::input(&g.source, Some(&g.name), msg);
    if !(density.is_finite() && density > 0.0) {
        return Err(Error::usage(format!(
            "density {density} kg/m² is not a positive number; give the material a density > 0"
        )));
    }
    if let UvScale::Fixed(s) = uv_scale {
        if !(s.is_finite() && s > 0.0) {
            return Err(Error::usage(format!(
                "--uv-scale {s} is not a positive number of metres per UV unit; use auto or S > 0"
            )));
        }
    }
    let positions = g.world_positions();
    validate(g, &positions).map_err(err)?;

    let mut triangles = g.triangles.clone();
    let mut corner_uvs = g.corner_uvs.clone();
    let mut edge_list = edges(&triangles);
    if orient(&mut triangles, &mut corner_uvs, &edge_list) > 0 {
        edge_list = edges(&triangles);
    }
    let (panel_of_triangle, n_panels) = panels(triangles.len(), &edge_list, &corner_uvs);
    let panel_scale = panel_scales(
        uv_scale,
        &positions,
        &triangles,
        &corner_uvs,
        &panel_of_triangle,
        n_panels,
    )
    .map_err(err)?;

    let mut uv_rest = Vec::with_capacity(triangles.len());
    for (t, uv) in corner_uvs.iter().enumerate() {
        let s = panel_scale[panel_of_triangle[t]];
        let r = TriangleRest::new(uv.map(|c| c * s)).ok_or_else(|| {
            err(format!(
                "triangle {t} is too small once its panel is scaled to metres ({s} m per UV \
                 unit); check --uv-scale or enlarge the triangle in the UV editor"
            ))
        })?;
        uv_rest.push(r);
    }
    let (rest, panel_rest) = rest::choose(
        rest_mode,
        uv_rest,
        &positions,
        &triangles,
        &panel_of_triangle,
        n_panels,
    )
    .map_err(err)?;

    let mass = lumped_masses(positions.len(), &triangles, &rest, density);
    let (hinges, seam_edges) = hinges(&triangles, &corner_uvs, &rest, &edge_list);
    Ok(ClothModel {
        positions,
        triangles,
        rest,
        panel_of_triangle,
        panels: n_panels,
        panel_scale,
        rest_mode,
        panel_rest,
        hinges,
        seam_edges,
        mass,
    })
}

/// Input checks; the message says what is wrong and what to do (the caller adds file and
/// garment name).
fn validate(g: &Garment, world: &[Vec3]) -> std::result::Result<(), String> {
    let n = g.positions.len();
    if g.triangles.is_empty() {
        return Err("has no triangles; export the garment as a polygon mesh".into());
    }
    if g.corner_uvs.len() != g.triangles.len() {
        return Err(
            "has no UV map; add a UV map (unwrap the garment into its sewing panels) and export again"
                .into(),
        );
    }
    if let Some(i) = world.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(format!(
            "vertex {i} has a non-finite position (NaN or infinity) in world space; fix the \
             mesh or its transform and export again"
        ));
    }
    for (t, (tri, uv)) in g.triangles.iter().zip(&g.corner_uvs).enumerate() {
        if let Some(&i) = tri.iter().find(|&&i| i >= n) {
            return Err(format!(
                "triangle {t} uses vertex {i} but the mesh has {n} vertices; export the mesh again"
            ));
        }
        if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
            return Err(format!(
                "triangle {t} uses a vertex twice; remove degenerate faces (Merge by Distance, \
                 Delete Loose) and export again"
            ));
        }
        if !uv.iter().all(|c| c.x.is_finite() && c.y.is_finite()) {
            return Err(format!(
                "triangle {t} has a non-finite UV; fix it in the UV editor"
            ));
        }
        if TriangleRest::new(*uv).is_none() {
            return Err(format!(
                "triangle {t} has zero UV area; fix or remove it in the UV editor"
            ));
        }
    }
    Ok(())
}

/// Metres per UV unit for each panel.
fn panel_scales(
    uv_scale: UvScale,
    positions: &[Vec3],
    triangles: &[[usize; 3]],
    corner_uvs: &[[Vec2; 3]],
    panel_of: &[usize],
    n_panels: usize,
) -> std::result::Result<Vec<f64>, String> {
    if let UvScale::Fixed(s) = uv_scale {
        return Ok(vec![s; n_panels]);
    }
    let mut area_3d = vec![0.0; n_panels];
    let mut area_uv = vec![0.0; n_panels];
    for (t, tri) in triangles.iter().enumerate() {
        let [a, b, c] = tri.map(|i| positions[i]);
        area_3d[panel_of[t]] += 0.5 * (b - a).cross(&(c - a)).norm();
        let [p, q, r] = corner_uvs[t];
        let (d1, d2) = (q - p, r - p);
        area_uv[panel_of[t]] += 0.5 * (d1.x * d2.y - d2.x * d1.y).abs();
    }
    (0..n_panels)
        .map(|k| {
            let s = (area_3d[k] / area_uv[k]).sqrt();
            if s.is_finite() && s > 0.0 {
                Ok(s)
            } else {
                let t = panel_of.iter().position(|&p| p == k).unwrap_or(0);
                Err(format!(
                    "the UV panel of triangle {t} has zero area in 3D at the first frame, so \
                     --uv-scale auto cannot size it; give --uv-scale S (metres per UV unit)"
                ))
            }
        })
        .collect()
}

/// `m_i = Σ ρ a_t / 3` over the triangles around particle i; loose particles get the mean.
fn lumped_masses(
    n: usize,
    triangles: &[[usize; 3]],
    rest: &[TriangleRest],
    density: f64,
) -> Vec<f64> {
    let mut mass = vec![0.0; n];
    for (tri, r) in triangles.iter().zip(rest) {
        for &i in tri {
            mass[i] += density * r.area / 3.0;
        }
    }
    let used: Vec<f64> = mass.iter().copied().filter(|&m| m > 0.0).collect();
    let mean = used.iter().sum::<f64>() / used.len().max(1) as f64;
    for m in mass.iter_mut().filter(|m| **m <= 0.0) {
        *m = mean;
    }
    mass
}
