//! The assembled system through the fused kernels against the same system from the
//! elements' own Jacobians ([`ElementForces`](crate::forces::ElementForces)).
use super::System;
use crate::bench;
use crate::collision::self_contact::Repulsion;
use crate::forces::JacobianMode;
use crate::model::{ClothModel, UvScale};
use crate::pipeline::params::ForceModel;
use crate::scene::Material;
use crate::Vec3;

/// `max |a − b| / max |b|` over the matrix values and the right side of two systems.
fn difference(a: &System, b: &System) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (p, q) in a.matrix.values.iter().zip(&b.matrix.values) {
        num = num.max((p - q).amax());
        den = den.max(q.amax());
    }
    let (mut num_r, mut den_r) = (0.0f64, 0.0f64);
    for (p, q) in a.rhs.iter().zip(&b.rhs) {
        num_r = num_r.max((p - q).amax());
        den_r = den_r.max(q.amax());
    }
    assert!(den > 0.0 && den_r > 0.0, "an empty system proves nothing");
    (num / den).max(num_r / den_r)
}

#[test]
fn fused_assembly_equals_the_assembly_from_element_jacobians() {
    let material = Material::default();
    let (garment, _) = bench::drape_over_sphere(12);
    let model = ClothModel::build(&garment, UvScale::Auto, material.density).expect("model");
    let n = model.len();
    // Crumpled, moving, some particles altered: every term of eq. 18 is active, and the
    // crumpling compresses some stretch components (clamped in System mode).
    let (x, v) = bench::crumpled_state(&model.positions, 0.03);
    let y: Vec<Vec3> = (0..n)
        .map(|i| {
            if i % 7 == 0 {
                Vec3::new(0.0, 1e-3, 2e-4)
            } else {
                Vec3::zeros()
            }
        })
        .collect();
    // Self-contact springs, point–triangle and edge–edge, against a repulsion distance of
    // 4 mm.
    let repulsions: Vec<Repulsion> = (0..40)
        .map(|k| {
            let nodes = [k, k + 13, k + 27, k + 41].map(|i| (7 * i) % n);
            let point_triangle = k % 2 == 0;
            let gamma = if point_triangle {
                [1.0, -0.2, -0.5, -0.3]
            } else {
                [0.6, 0.4, -0.7, -0.3]
            };
            let dir = Vec3::new(1.0, 0.3 * k as f64, -0.5).normalize();
            // Oriented so that the spring is compressed (C < 0), except every fifth.
            let along: f64 = (0..4).map(|i| gamma[i] * dir.dot(&x[nodes[i]])).sum();
            let normal = if (along > 0.0) == (k % 5 == 0) {
                dir
            } else {
                -dir
            };
            Repulsion {
                nodes,
                gamma,
                normal,
                point_triangle,
                slack: 0.0,
            }
        })
        .collect();
    let active = (repulsions.iter())
        .filter(|r| {
            (0..4)
                .map(|k| r.gamma[k] * r.normal.dot(&x[r.nodes[k]]))
                .sum::<f64>()
                < 0.004
        })
        .count();
    assert!(
        (20..40).contains(&active),
        "{active} of the 40 springs push"
    );
    let g = Vec3::new(0.0, -9.81, 0.0);
    let wind = Vec3::new(0.5, 0.0, -0.2);
    let mut worst: f64 = 0.0;
    for model_kind in [ForceModel::Continuum, ForceModel::MassSpring] {
        for mode in [JacobianMode::System, JacobianMode::Definite] {
            let mut fused = System::with_force_model(&model, &material, model_kind);
            fused.set_repulsions(repulsions.clone(), 0.004);
            let mut reference = fused.clone();
            reference.fused = false;
            for s in [&mut fused, &mut reference] {
                s.assemble(&model, &x, &v, &y, 1.0 / 48.0, g, wind, mode);
            }
            let d = difference(&fused, &reference);
            assert!(d < 1e-12, "{model_kind:?} {mode:?}: fused differs by {d:e}");
            worst = worst.max(d);
        }
    }
    println!("fused assembly against element Jacobians: worst relative difference {worst:.2e}");
}
