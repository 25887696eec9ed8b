use super::*;
use std::f64::consts::PI;

/// A calibrated fabric of `materials/` (docs/materials.md).
fn fabric(name: &str) -> Material {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("materials/{name}.json"));
    let text = std::fs::read_to_string(&path).expect("material file exists");
    Material::from_json(&text).expect("material file parses")
}

#[test]
fn tensile_slope_is_the_membrane_modulus_of_each_direction() {
    // Baraff's stretch condition has no Poisson coupling: a strip pulled along u by a force
    // per width σ comes to rest at ε = σ / k_u exactly.
    let stop = Stop::new();
    let m = fabric("wool-suiting");
    assert!(m.stretch_u != m.stretch_v);
    for spacing in [0.01, 0.005] {
        let u = tensile::slope(&m, Axis::U, spacing, &stop).unwrap();
        let v = tensile::slope(&m, Axis::V, spacing, &stop).unwrap();
        assert!(
            (u / m.stretch_u - 1.0).abs() < 0.01,
            "{u} vs {}",
            m.stretch_u
        );
        assert!(
            (v / m.stretch_v - 1.0).abs() < 0.01,
            "{v} vs {}",
            m.stretch_v
        );
    }
}

#[test]
fn cantilever_bending_length_converges_to_the_heavy_elastica() {
    // Peirce: B = w g c³. The discrete hinges bend a little more easily than the plate on
    // coarse strips; refining the strip must bring c toward the analytic value.
    let stop = Stop::new();
    let m = fabric("cotton-shirting");
    let exact = (m.bend_u / (m.density * 9.81)).cbrt();
    let coarse = cantilever::bending_length(&m, Axis::U, 0.01, &stop).unwrap();
    let fine = cantilever::bending_length(&m, Axis::U, 0.002, &stop).unwrap();
    eprintln!("c exact {exact:.4} m, 1 cm {coarse:.4}, 2 mm {fine:.4}");
    assert!(
        (fine - exact).abs() < (coarse - exact).abs(),
        "{coarse} {fine} {exact}"
    );
    assert!((fine / exact - 1.0).abs() < 0.1, "{fine} vs {exact}");
    assert!((coarse / exact - 1.0).abs() < 0.2, "{coarse} vs {exact}");
}

#[test]
fn shadow_of_the_flat_disc_is_its_area_and_folds_are_counted() {
    let disc = specimen::disc(cusick::DISC_RADIUS, 0.01, cusick::PEDESTAL_RADIUS, 0.0);
    let area = cusick::shadow_area(&disc.positions, &disc.triangles, 5e-4);
    let exact = PI * cusick::DISC_RADIUS.powi(2);
    assert!((area / exact - 1.0).abs() < 0.01, "{area} vs {exact}");
    for lobes in [5usize, 7, 9] {
        let rim: Vec<Vec3> = (0..360)
            .map(|k| {
                let a = k as f64 * PI / 180.0;
                let r = 0.12 + 0.015 * (lobes as f64 * a).cos();
                Vec3::new(r * a.cos(), -0.05, r * a.sin())
            })
            .collect();
        assert_eq!(cusick::count_nodes(&rim), lobes);
    }
}

#[test]
fn a_rigid_disc_stays_flat_and_a_limp_one_drapes() {
    let stop = Stop::new();
    let m = fabric("cotton-shirting");
    let rigid = cusick::drape(&m.with_bend_scaled(1e4), 0.01, &stop).unwrap();
    let limp = cusick::drape(&m.with_bend_scaled(0.01), 0.01, &stop).unwrap();
    assert!(rigid.coefficient > 0.95, "{}", rigid.coefficient);
    assert!(
        limp.coefficient < rigid.coefficient - 0.2,
        "{}",
        limp.coefficient
    );
}

#[test]
fn fitting_recovers_the_rigidity_of_a_known_material() {
    // Measure denim's bending lengths in the simulated test, then fit a material from
    // silk to them: it must come back with denim's rigidities.
    let stop = Stop::new();
    let denim = Material {
        bend_bias: None,
        ..fabric("denim")
    };
    let spacing = 0.01;
    let measured = fit::Measured {
        density: denim.density,
        bending_length_u: cantilever::bending_length(&denim, Axis::U, spacing, &stop).unwrap(),
        bending_length_v: cantilever::bending_length(&denim, Axis::V, spacing, &stop).unwrap(),
        drape_coefficient: None,
    };
    let fitted = fit::fit(
        &measured,
        &fabric("silk-crepe-de-chine"),
        spacing,
        &stop,
        &mut |_| {},
    )
    .unwrap();
    let m = fitted.material;
    assert_eq!(m.density, denim.density);
    assert!(
        (m.bend_u / denim.bend_u - 1.0).abs() < 0.05,
        "{} {}",
        m.bend_u,
        denim.bend_u
    );
    assert!(
        (m.bend_v / denim.bend_v - 1.0).abs() < 0.05,
        "{} {}",
        m.bend_v,
        denim.bend_v
    );
}

#[test]
fn every_material_file_parses_and_keeps_its_fields() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("materials");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        let m = Material::from_json(&text).unwrap();
        let fields: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(fields["density"].as_f64(), Some(m.density), "{path:?}");
        assert_eq!(fields["bend_v"].as_f64(), Some(m.bend_v), "{path:?}");
    }
}

#[test]
fn material_json_takes_a_base_a_turned_warp_and_one_stretch_for_both() {
    let m = Material::from_json(r#"{"base": "denim", "warp": "u", "stretch": 3000}"#).unwrap();
    let denim = Material::preset("denim").unwrap();
    assert_eq!((m.bend_u, m.bend_v), (denim.bend_v, denim.bend_u));
    assert_eq!((m.stretch_u, m.stretch_v), (3000.0, 3000.0));
    assert!(Material::from_json(r#"{"stretch": 1, "stretch_u": 2}"#).is_err());
    assert!(Material::from_json(r#"{"base": "tweed"}"#)
        .unwrap_err()
        .contains("tweed"));
    assert!(Material::from_json(r#"{"warp": "x"}"#).is_err());
    assert!(Material::from_json(r#"{"bend_w": 1}"#).is_err());
}

#[test]
fn bias_rigidity_is_met_at_45_degrees_and_the_fibres_along_the_axes() {
    let m = Material {
        bend_u: 2e-5,
        bend_v: 8e-6,
        bend_bias: Some(5e-6),
        ..Material::default()
    };
    assert!((m.bend_rigidity(1.0) - 2e-5).abs() < 1e-18);
    assert!((m.bend_rigidity(0.0) - 8e-6).abs() < 1e-18);
    assert!((m.bend_rigidity(0.5) - 5e-6).abs() < 1e-18);
    let plain = Material {
        bend_bias: None,
        ..m.clone()
    };
    assert!((plain.bend_rigidity(0.5) - 1.4e-5).abs() < 1e-18);
    // Positive in every direction at the least bias the validation allows.
    let least = 0.25 * (m.bend_u.sqrt() - m.bend_v.sqrt()).powi(2);
    let edge = Material {
        bend_bias: Some(least),
        ..m
    };
    assert!((0..=100).all(|k| edge.bend_rigidity(k as f64 / 100.0) >= -1e-20));
}
