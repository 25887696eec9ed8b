//! Tests of the cloth model builder on procedural sheets.
use super::*;
use crate::error::Error;
use crate::fixtures::{sheet, SheetPins, SheetPlane, SheetSpec, SheetUv};
use crate::Mat3;

fn spec(n: usize) -> SheetSpec {
    SheetSpec {
        n,
        pins: SheetPins::None,
        ..SheetSpec::default()
    }
}

fn tri_area(p: [Vec3; 3]) -> f64 {
    0.5 * (p[1] - p[0]).cross(&(p[2] - p[0])).norm()
}

/// Interior edges of an n × n grid cut along one diagonal per cell.
fn interior_edges(n: usize) -> usize {
    2 * n * (n - 1) + (n - 1) * (n - 1) - 4 * (n - 1)
}

#[test]
fn masses_sum_to_density_times_rest_area() {
    let g = sheet(&SheetSpec {
        size: 1.3,
        uv: SheetUv::Metres,
        ..spec(9)
    });
    let m = ClothModel::build(&g, UvScale::Fixed(1.0), 0.15).unwrap();
    let area: f64 = m.rest.iter().map(|r| r.area).sum();
    let mass: f64 = m.mass.iter().sum();
    assert!((area - 1.69).abs() < 1e-12, "area {area}");
    assert!((mass - 0.15 * 1.69).abs() < 1e-12, "mass {mass}");
    // Checkerboard diagonals: interior particles with i + j even touch 8 triangles, odd 4.
    let tri = 0.5 * (1.3f64 / 8.0).powi(2);
    assert!((m.mass[40] - 0.15 * 8.0 * tri / 3.0).abs() < 1e-15);
    assert!((m.mass[41] - 0.15 * 4.0 * tri / 3.0).abs() < 1e-15);
}

#[test]
fn auto_scale_makes_each_panel_rest_area_equal_its_3d_area() {
    let mut g = sheet(&SheetSpec {
        size: 1.7,
        seam: true,
        ..spec(9)
    });
    // Stretch the 3D shape along x by 1.3 so the scale is not just the sheet size.
    g.world_linear = Mat3::from_diagonal(&Vec3::new(1.3, 1.0, 1.0));
    let m = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    assert_eq!(m.panels, 2);
    let world = g.world_positions();
    for k in 0..m.panels {
        let (mut rest, mut real) = (0.0, 0.0);
        for (t, tri) in m.triangles.iter().enumerate() {
            if m.panel_of_triangle[t] == k {
                rest += m.rest[t].area;
                real += tri_area(tri.map(|i| world[i]));
            }
        }
        assert!(
            (rest - real).abs() < 1e-12 * real,
            "panel {k}: {rest} vs {real}"
        );
        assert!((m.panel_scale[k] - 1.7 * 1.3f64.sqrt()).abs() < 1e-12);
    }
}

#[test]
fn fixed_scale_multiplies_corner_uvs() {
    let g = sheet(&spec(4));
    let m = ClothModel::build(&g, UvScale::Fixed(2.5), 0.1).unwrap();
    for (t, r) in m.rest.iter().enumerate() {
        for c in 0..3 {
            assert_eq!(r.uv[c], g.corner_uvs[t][c] * 2.5);
        }
    }
}

#[test]
fn mirrored_island_has_positive_areas_and_true_rest_lengths() {
    let g = sheet(&SheetSpec {
        seam: true,
        uv: SheetUv::Metres,
        size: 0.8,
        ..spec(7)
    });
    let m = ClothModel::build(&g, UvScale::Fixed(1.0), 0.1).unwrap();
    let h = 0.8 / 6.0;
    let mut mirrored = 0;
    for (t, r) in m.rest.iter().enumerate() {
        let d1 = r.uv[1] - r.uv[0];
        let d2 = r.uv[2] - r.uv[0];
        mirrored += usize::from(d1.x * d2.y - d2.x * d1.y < 0.0);
        assert!((r.area - 0.5 * h * h).abs() < 1e-15, "area {}", r.area);
        let x = m.triangles[t].map(|i| m.positions[i]);
        for (a, b) in [(0, 1), (1, 2), (2, 0)] {
            let rest_len = (r.uv[b] - r.uv[a]).norm();
            assert!((rest_len - (x[b] - x[a]).norm()).abs() < 1e-14);
        }
        // Undeformed: w_u, w_v (Baraff eq. 9) orthonormal.
        let (dx1, dx2) = (x[1] - x[0], x[2] - x[0]);
        let wu = dx1 * r.inv[0][0] + dx2 * r.inv[1][0];
        let wv = dx1 * r.inv[0][1] + dx2 * r.inv[1][1];
        assert!((wu.norm() - 1.0).abs() < 1e-12 && (wv.norm() - 1.0).abs() < 1e-12);
        assert!(wu.dot(&wv).abs() < 1e-12);
    }
    // Columns 3..6 of 6 are the mirrored panel: half the triangles.
    assert_eq!(mirrored, m.triangles.len() / 2);
}

#[test]
fn hinge_count_equals_interior_edges_with_discrete_shell_weights() {
    for n in [2, 3, 6, 12] {
        let m = ClothModel::build(&sheet(&spec(n)), UvScale::Auto, 0.1).unwrap();
        assert_eq!(m.hinges.len(), interior_edges(n), "n = {n}");
        assert_eq!(m.seam_edges, 0);
        assert_eq!(m.panels, 1);
    }
    let m = ClothModel::build(&sheet(&spec(12)), UvScale::Auto, 0.1).unwrap();
    for hg in &m.hinges {
        let [x0, x3] = hg.wings.map(|i| m.positions[i]);
        let [x1, x2] = hg.edge.map(|i| m.positions[i]);
        // Stuyck eq. 7.36 normals both face the front (+z) on the flat sheet.
        let na = (x2 - x0).cross(&(x1 - x0));
        let nb = (x1 - x3).cross(&(x2 - x3));
        assert!(na.z > 0.0 && nb.z > 0.0, "{hg:?}");
        let e = x1 - x2;
        let (weight, share) = if e.x.abs() < 1e-12 {
            (3.0, 1.0) // along v
        } else if e.y.abs() < 1e-12 {
            (3.0, 0.0) // along u
        } else {
            (6.0, 0.5) // diagonal
        };
        assert!((hg.weight - weight).abs() < 1e-9, "{hg:?}");
        assert!((hg.u_share - share).abs() < 1e-12, "{hg:?}");
        assert_eq!(hg.rest_angle, 0.0);
        assert!(!hg.seam);
    }
}

#[test]
fn seam_hinges_join_the_two_mirrored_panels() {
    let n = 9;
    let g = sheet(&SheetSpec {
        seam: true,
        uv: SheetUv::Metres,
        ..spec(n)
    });
    let m = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    assert_eq!(m.panels, 2);
    assert_eq!(m.hinges.len(), interior_edges(n));
    assert_eq!(m.seam_edges, n - 1);
    let seam_col = (n - 1) / 2;
    let seams: Vec<&Hinge> = m.hinges.iter().filter(|h| h.seam).collect();
    assert_eq!(seams.len(), n - 1);
    for hg in seams {
        assert!(hg.edge.iter().all(|&p| p % n == seam_col), "{hg:?}");
        assert!((hg.weight - 3.0).abs() < 1e-9 && (hg.u_share - 1.0).abs() < 1e-12);
    }
}

#[test]
fn flipped_triangles_are_reoriented_so_hinges_survive() {
    let mut g = sheet(&SheetSpec {
        plane: SheetPlane::Horizontal,
        ..spec(6)
    });
    for t in [0, 3, 7, 20] {
        g.triangles[t].swap(0, 1);
        g.corner_uvs[t].swap(0, 1);
    }
    let m = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    assert_eq!(m.hinges.len(), interior_edges(6));
    for tri in &m.triangles {
        let [a, b, c] = tri.map(|i| m.positions[i]);
        assert!(
            (b - a).cross(&(c - a)).y > 0.0,
            "triangle {tri:?} not facing +y"
        );
    }
}

#[test]
fn nonmanifold_edge_gets_consecutive_hinges_and_loose_particle_gets_mean_mass() {
    let mut g = sheet(&spec(2)); // 4 particles, 2 triangles
    let edge = g.triangles[0];
    let (p, q) = (edge[0], edge[2]);
    // Two flaps on the same edge as the first triangle, and one loose particle.
    g.positions.push(Vec3::new(0.3, 0.5, 0.7));
    g.positions.push(Vec3::new(0.3, 0.5, -0.7));
    g.positions.push(Vec3::new(5.0, 5.0, 5.0));
    g.pin.extend([0.0; 3]);
    let uv = g.corner_uvs[0];
    g.triangles.push([q, p, 4]);
    g.corner_uvs.push([uv[2], uv[0], Vec2::new(0.2, 0.9)]);
    g.triangles.push([p, q, 5]);
    g.corner_uvs.push([uv[0], uv[2], Vec2::new(0.7, 0.1)]);
    let m = ClothModel::build(&g, UvScale::Fixed(1.0), 0.1).unwrap();
    let on_edge = m
        .hinges
        .iter()
        .filter(|h| h.edge.contains(&p) && h.edge.contains(&q))
        .count();
    assert_eq!(on_edge, 3, "hinges on the 4-triangle edge");
    let used = &m.mass[..6];
    let mean = used.iter().sum::<f64>() / 6.0;
    assert!((m.mass[6] - mean).abs() < 1e-15 && mean > 0.0);
}

fn input_error(g: &Garment) -> String {
    match ClothModel::build(g, UvScale::Auto, 0.1) {
        Err(e @ Error::Input { .. }) => {
            let Error::Input { object, .. } = &e else {
                unreachable!()
            };
            assert_eq!(object.as_deref(), Some(g.name.as_str()));
            e.to_string()
        }
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn bad_garments_are_input_errors_naming_the_mesh() {
    let good = sheet(&SheetSpec {
        name: "Skirt".into(),
        ..spec(4)
    });
    let mut g = good.clone();
    let c = g.corner_uvs[4][0];
    g.corner_uvs[4] = [c, c + Vec2::new(1.0, 1.0), c + Vec2::new(2.0, 2.0)];
    let msg = input_error(&g);
    assert!(
        msg.contains("Skirt") && msg.contains("triangle 4 has zero UV area"),
        "{msg}"
    );

    let mut g = good.clone();
    g.positions[5].y = f64::NAN;
    assert!(input_error(&g).contains("vertex 5 has a non-finite position"));

    let mut g = good.clone();
    g.corner_uvs.clear();
    assert!(input_error(&g).contains("add a UV map"));

    let mut g = good.clone();
    g.triangles[2][1] = 99;
    assert!(input_error(&g).contains("triangle 2 uses vertex 99"));

    let mut g = good.clone();
    g.triangles[2][1] = g.triangles[2][0];
    assert!(input_error(&g).contains("triangle 2 uses a vertex twice"));

    let mut g = good.clone();
    g.world_translation.x = f64::INFINITY;
    assert!(input_error(&g).contains("non-finite position"));

    let mut g = good;
    g.triangles.clear();
    g.corner_uvs.clear();
    assert!(input_error(&g).contains("no triangles"));
}

#[test]
fn collapsed_panel_cannot_be_auto_scaled() {
    let mut g = sheet(&spec(3));
    g.positions.iter_mut().for_each(|p| *p = Vec3::zeros());
    assert!(input_error(&g).contains("--uv-scale S"));
    // A fixed scale still works on the collapsed sheet.
    assert!(ClothModel::build(&g, UvScale::Fixed(1.0), 0.1).is_ok());
    assert!(ClothModel::build(&g, UvScale::Fixed(-1.0), 0.1).is_err());
    assert!(ClothModel::build(&g, UvScale::Fixed(1.0), f64::NAN).is_err());
}
