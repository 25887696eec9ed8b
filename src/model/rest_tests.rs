//! The rest state chosen by `--rest`: zero strain in the modelled shape, and `auto`'s
//! choice per panel (issue 50, "garments whose UVs are not a sewing pattern").
use super::*;
use crate::fixtures::{sheet, tube_skirt, SheetPins, SheetSpec, TubeSkirtSpec};
use crate::forces::shear::shear;
use crate::forces::stretch::{stretch, StretchParams};
use crate::forces::JacobianMode;
use crate::model::{ClothModel, UvScale};
use crate::scene::{Garment, Material};

/// A two-panel sheet (one island mirrored) bent and sheared in 3D so that its UVs are a
/// distorted version of its shape: stretched 1.7× and sheared along x, squashed along y,
/// curved out of its plane.
fn distorted_sheet() -> Garment {
    let mut g = sheet(&SheetSpec {
        n: 13,
        seam: true,
        pins: SheetPins::None,
        ..SheetSpec::default()
    });
    for p in &mut g.positions {
        *p = Vec3::new(
            1.7 * p.x + 0.4 * p.y,
            0.6 * p.y + 0.2 * (2.0 * p.x).sin(),
            0.25 * (1.5 * p.x + p.y).cos(),
        );
    }
    g
}

fn area(p: [Vec3; 3]) -> f64 {
    0.5 * (p[1] - p[0]).cross(&(p[2] - p[0])).norm()
}

/// The largest stretch and shear force on any particle at the first frame (N).
fn largest_forces(m: &ClothModel, material: &Material) -> (f64, f64) {
    let p = StretchParams {
        k: [material.stretch_u, material.stretch_v],
        kd: 0.0,
        bu: 1.0,
        bv: 1.0,
    };
    let v = [Vec3::zeros(); 3];
    let (mut fs, mut fh) = (0.0f64, 0.0f64);
    for (tri, r) in m.triangles.iter().zip(&m.rest) {
        let x = tri.map(|i| m.positions[i]);
        let s = stretch(&x, &v, r, &p, JacobianMode::System);
        let h = shear(&x, &v, r, material.shear, 0.0, JacobianMode::System);
        for i in 0..3 {
            fs = fs.max(s.f[i].norm());
            fh = fh.max(h.f[i].norm());
        }
    }
    (fs, fh)
}

#[test]
fn shape_rest_has_no_stretch_or_shear_force_in_the_modelled_shape() {
    let g = distorted_sheet();
    let material = Material::default();
    let uv = ClothModel::build_with_rest(&g, Rest::Uv, UvScale::Auto, material.density).unwrap();
    let shape =
        ClothModel::build_with_rest(&g, Rest::Shape, UvScale::Auto, material.density).unwrap();
    // Under the UV rest the distortion pulls with forces of order k a² |d| (tens of
    // percent strain); under the shape rest they vanish to round-off.
    let (uv_stretch, uv_shear) = largest_forces(&uv, &material);
    let (fs, fh) = largest_forces(&shape, &material);
    assert!(
        fs < 1e-12 * uv_stretch,
        "stretch force {fs} N against {uv_stretch} N"
    );
    assert!(
        fh < 1e-12 * uv_shear,
        "shear force {fh} N against {uv_shear} N"
    );
    // Rest areas are the shape's, so the mass is density × 3D area; seams, panels, the
    // mirrored island and the hinges' flat rest angle stay those of the UVs.
    let real: f64 = shape
        .triangles
        .iter()
        .map(|t| area(t.map(|i| shape.positions[i])))
        .sum();
    let mass: f64 = shape.mass.iter().sum();
    assert!((mass - material.density * real).abs() < 1e-12 * mass);
    assert_eq!((shape.panels, shape.seam_edges), (uv.panels, uv.seam_edges));
    assert_eq!(shape.hinges.len(), uv.hinges.len());
    assert!(shape.hinges.iter().all(|h| h.rest_angle == 0.0));
    assert!(shape.panel_rest.iter().all(|p| p.shape));
    assert_eq!(shape.rest_warning(), None, "a forced rest warns of nothing");
}

#[test]
fn shape_rest_keeps_the_uv_directions_where_the_uvs_are_stretched_along_their_axes() {
    // The tube's UVs are stretched along u (around) and v (down) only: S is diagonal, so
    // the warp runs around the tube and the weft along its axis, exactly.
    let g = tube_skirt(&TubeSkirtSpec::default());
    let uv = ClothModel::build_with_rest(&g, Rest::Uv, UvScale::Auto, 0.1).unwrap();
    let shape = ClothModel::build_with_rest(&g, Rest::Shape, UvScale::Auto, 0.1).unwrap();
    // Scaled to its 3D area, the rectangle is stretched by √ρ around and 1/√ρ along, with
    // ρ the ratio of the unrolled tube's aspect (32 chords of 2 r sin(π/32) over L) to
    // the rectangle's (1 : 0.5).
    let spec = TubeSkirtSpec::default();
    let unrolled = 64.0 * spec.radius * (std::f64::consts::PI / 32.0).sin() / spec.length;
    let rho = unrolled / (1.0 / spec.uv_height);
    let mismatch = shape.panel_rest[0].mismatch;
    assert!(
        (mismatch - (rho.sqrt() - 1.0)).abs() < 1e-9,
        "{mismatch} vs ρ = {rho}"
    );
    for (t, tri) in shape.triangles.iter().enumerate() {
        let x = tri.map(|i| shape.positions[i]);
        let (w, drawn) = (
            Deformation::new(&x, &shape.rest[t]),
            Deformation::new(&x, &uv.rest[t]),
        );
        let cu = w.wu.normalize().dot(&drawn.wu.normalize());
        let cv = w.wv.normalize().dot(&drawn.wv.normalize());
        assert!(
            cu > 1.0 - 1e-12 && cv > 1.0 - 1e-12,
            "triangle {t}: {cu} {cv}"
        );
    }
}

/// A two-panel sheet whose right panel (x > 0) is modelled 2× wider than its UVs.
fn half_stretched_sheet() -> Garment {
    let mut g = sheet(&SheetSpec {
        n: 13,
        seam: true,
        pins: SheetPins::None,
        ..SheetSpec::default()
    });
    for p in g.positions.iter_mut().filter(|p| p.x > 0.0) {
        p.x *= 2.0;
    }
    g
}

#[test]
fn auto_keeps_a_matching_panel_and_rests_a_stretched_one_on_its_shape() {
    let g = half_stretched_sheet();
    let build = |rest| ClothModel::build_with_rest(&g, rest, UvScale::Auto, 0.1).unwrap();
    let (auto, uv, shape) = (build(Rest::Auto), build(Rest::Uv), build(Rest::Shape));
    assert_eq!(auto.panels, 2);
    let centroid_x = |t: usize| {
        auto.triangles[t]
            .iter()
            .map(|&i| auto.positions[i].x)
            .sum::<f64>()
    };
    let stretched = auto.panel_of_triangle[(0..auto.triangles.len())
        .find(|&t| centroid_x(t) > 0.0)
        .unwrap()];
    let kept = 1 - stretched;
    // Scaled to its 3D area, the 2× panel has principal stretches √2 and 1/√2.
    let p = &auto.panel_rest;
    assert!(!p[kept].shape && p[kept].mismatch < 1e-8, "{p:?}");
    assert!(p[stretched].shape, "{p:?}");
    assert!(
        (p[stretched].mismatch - (2f64.sqrt() - 1.0)).abs() < 1e-12,
        "{p:?}"
    );
    for (t, &k) in auto.panel_of_triangle.iter().enumerate() {
        let expected = if k == kept {
            &uv.rest[t]
        } else {
            &shape.rest[t]
        };
        assert_eq!(&auto.rest[t], expected, "triangle {t}");
    }
    let warning = auto
        .rest_warning()
        .expect("auto warns when it takes the shape");
    for part in [
        "1 of 2 UV panels".to_string(),
        format!("panel {stretched} "),
        "41%".to_string(),
        "15%".to_string(),
        "--rest uv".to_string(),
    ] {
        assert!(warning.contains(&part), "{part:?} missing from: {warning}");
    }
    assert_eq!(uv.rest_warning(), None);
}

#[test]
fn auto_on_uvs_that_are_the_pattern_is_the_uv_rest_bit_for_bit() {
    let g = sheet(&SheetSpec {
        n: 13,
        seam: true,
        ..SheetSpec::default()
    });
    let auto = ClothModel::build_with_rest(&g, Rest::Auto, UvScale::Auto, 0.1).unwrap();
    let uv = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    assert_eq!(auto.rest, uv.rest);
    assert_eq!(auto.mass, uv.mass);
    assert_eq!(auto.hinges, uv.hinges);
    assert!(auto.panel_rest.iter().all(|p| !p.shape));
    assert_eq!(auto.rest_warning(), None);
}

#[test]
fn shape_rest_rejects_a_triangle_of_zero_area_in_the_shape_and_auto_keeps_its_panel() {
    let mut g = half_stretched_sheet();
    // Collapse one triangle of the stretched panel onto a line.
    let t = (0..g.triangles.len())
        .find(|&t| g.triangles[t].iter().all(|&i| g.positions[i].x > 0.0))
        .unwrap();
    let [a, b, c] = g.triangles[t];
    g.positions[c] = 0.5 * (g.positions[a] + g.positions[b]);
    match ClothModel::build_with_rest(&g, Rest::Shape, UvScale::Auto, 0.1) {
        Err(crate::Error::Input { message, .. }) => {
            assert!(
                message.contains("zero area in the modelled shape"),
                "{message}"
            );
            assert!(message.contains("--rest uv"), "{message}");
        }
        other => panic!("expected an input error, got {other:?}"),
    }
    let auto = ClothModel::build_with_rest(&g, Rest::Auto, UvScale::Auto, 0.1).unwrap();
    assert!(auto.panel_rest.iter().all(|p| !p.shape));
}
