use super::*;
use crate::scene::{Animation, Body};
use std::path::PathBuf;

/// A closed box body `[-a, a]³` (outward-wound), still.
fn cube(a: f64) -> BodyState {
    let p: Vec<Vec3> = (0..8)
        .map(|k| {
            Vec3::new(
                if k & 1 == 0 { -a } else { a },
                if k & 2 == 0 { -a } else { a },
                if k & 4 == 0 { -a } else { a },
            )
        })
        .collect();
    let quads = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    let triangles = quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    still_body("Cube", triangles, p)
}

/// A still body of `triangles` over `positions`, sampled at frame 1.
fn still_body(name: &str, triangles: Vec<[usize; 3]>, positions: Vec<Vec3>) -> BodyState {
    let body = Body {
        name: name.into(),
        source: PathBuf::from(format!("{name}.gltf")),
        triangles,
        animation: Animation {
            frames: vec![1.0],
            positions: vec![positions],
        },
        thickness: None,
        friction: None,
    };
    let mut b = BodyState::new(&body, 0.004, 0.3).unwrap();
    b.advance_to(1.0, 1.0);
    b
}

/// A sheet of `n × n` particles spanning `[-s, s]²` in the plane `z = z0`, with its
/// triangles.
fn sheet(n: usize, s: f64, z0: f64) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let at = |k: usize| -s + 2.0 * s * k as f64 / (n - 1) as f64;
    let x = (0..n * n)
        .map(|k| Vec3::new(at(k % n), at(k / n), z0))
        .collect();
    let mut tris = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let a = j * n + i;
            tris.push([a, a + 1, a + n + 1]);
            tris.push([a, a + n + 1, a + n]);
        }
    }
    (x, tris)
}

#[test]
fn finds_exactly_the_particles_inside_and_how_far_they_are_from_leaving() {
    let a = 0.05;
    let body = cube(a);
    let (x, _) = sheet(21, 0.2, 0.02);
    let fixed = vec![false; x.len()];
    let found = Overlaps::find(std::slice::from_ref(&body), &x, &fixed);
    let inside: Vec<usize> = (0..x.len())
        .filter(|&i| x[i].x.abs() < a && x[i].y.abs() < a)
        .collect();
    assert!(!inside.is_empty());
    assert_eq!(found.particles(), inside);
    // The centre particle leaves by the near face z = a, 3 cm away: along the tilted +z
    // probe d, (a − z₀) / d_z.
    let centre = (0..x.len()).find(|&i| x[i].xy().norm() < 1e-12).unwrap();
    let (d, e) = shortest_exit(&body, x[centre], false).unwrap();
    assert!(d.z > 0.99, "{d:?}");
    assert!(
        (e.distance - (a - 0.02) / d.z).abs() < 1e-12,
        "{}",
        e.distance
    );
    assert_eq!(found.at_start().len(), 1);
    // A pinned particle inside is left to its pin.
    let mut pinned = fixed.clone();
    pinned[centre] = true;
    let without = Overlaps::find(std::slice::from_ref(&body), &x, &pinned);
    assert_eq!(without.len(), inside.len() - 1);
    assert_eq!(without.body_of(centre), None);
}

#[test]
fn a_region_leaves_by_one_side_and_is_released_once_out() {
    let a = 0.05;
    let bodies = [cube(a)];
    let (mut x, tris) = sheet(21, 0.2, 0.02);
    let mut overlaps = Overlaps::find(&bodies, &x, &vec![false; x.len()]);
    let inside = overlaps.particles();
    let h = 1e-3;
    let mut y = vec![Vec3::zeros(); x.len()];
    overlaps.ease(&bodies, &x, &tris, h, &mut y);
    // Every particle inside moves along +z (the sheet's normal, toward the nearer face
    // z = a), by the speed bound; none of the others moves.
    for (i, yi) in y.iter().enumerate() {
        if inside.contains(&i) {
            let expected = Vec3::new(0.0, 0.0, EASE_SPEED * h);
            assert!((yi - expected).norm() < 1e-12, "{i}: {yi:?}");
        } else {
            assert_eq!(*yi, Vec3::zeros());
        }
    }
    // Still inside after half the way: kept; past the face: released.
    for &i in &inside {
        x[i].z = 0.04;
    }
    overlaps.release(&bodies, &x);
    assert_eq!(overlaps.particles(), inside);
    for &i in &inside {
        x[i].z = a + 0.001;
    }
    overlaps.release(&bodies, &x);
    assert!(overlaps.is_empty());
    assert!(inside.iter().all(|&i| overlaps.body_of(i).is_none()));
}

#[test]
fn overlapping_shells_count_as_one_solid_and_outside_is_outside() {
    // Two cubes overlapping like a limb modelled into a torso: a point inside one of them
    // near a face of the other that lies inside the first is still inside; points outside
    // both, beside either, are outside.
    let big = cube(0.1);
    let mut small = cube(0.04);
    for p in small.x0.iter_mut().chain(small.x1.iter_mut()) {
        p.x += 0.12;
    }
    let body = merged(&big, &small);
    for p in [
        Vec3::new(0.07, 0.0, 0.0),
        Vec3::new(0.09, 0.01, 0.0),
        Vec3::new(0.13, 0.0, 0.0),
        Vec3::new(0.0, 0.09, 0.0),
    ] {
        assert!(shortest_exit(&body, p, false).is_some(), "{p:?} is inside");
    }
    for p in [
        Vec3::new(0.17, 0.0, 0.0),
        Vec3::new(0.12, 0.05, 0.0),
        Vec3::new(0.0, 0.11, 0.0),
        Vec3::new(0.12, 0.0, 0.045),
    ] {
        assert!(shortest_exit(&body, p, false).is_none(), "{p:?} is outside");
    }
}

/// One body made of the triangles of both.
fn merged(a: &BodyState, b: &BodyState) -> BodyState {
    let n = a.x0.len();
    let mut positions = a.x0.clone();
    positions.extend(&b.x0);
    let mut triangles = a.triangles.clone();
    triangles.extend(b.triangles.iter().map(|t| t.map(|i| i + n)));
    still_body("Merged", triangles, positions)
}

#[test]
fn a_particle_let_through_later_makes_no_contact_is_eased_out_and_released() {
    // Particle 1 is outside a 10 cm cube at first; let through it (as when the cube kept
    // catching it), then carried 2 cm inside: it is eased out along +x, the face it is
    // nearest, and released once outside again. Admitting it twice changes nothing.
    let body = cube(0.1);
    let x = vec![Vec3::new(0.5, 0.0, 0.0), Vec3::new(0.12, 0.0, 0.0)];
    let mut o = Overlaps::find(std::slice::from_ref(&body), &x, &[false, false]);
    assert!(o.is_empty() && o.body_of(1).is_none());
    assert!(o.admit(1, 0, x.len()));
    assert!(!o.admit(1, 0, x.len()));
    assert_eq!(
        (o.particles(), o.body_of(1), o.body_of(0)),
        (vec![1], Some(0), None)
    );
    let inside = vec![x[0], Vec3::new(0.08, 0.0, 0.0)];
    let mut y = vec![Vec3::zeros(); 2];
    o.ease(std::slice::from_ref(&body), &inside, &[], 1.0, &mut y);
    // Out the near face x = 0.1 (2 cm, along a probe tilted a few degrees off +x) plus
    // the thickness, not through the far face 18 cm away.
    let t = body.thickness;
    assert!(y[1].normalize().x > 0.99, "{:?}", y[1]);
    assert!(y[1].x > 0.0199 + t && y[1].norm() < 0.021 + t, "{:?}", y[1]);
    assert_eq!(y[0], Vec3::zeros());
    o.release(std::slice::from_ref(&body), &inside);
    assert_eq!(o.body_of(1), Some(0), "still inside: kept");
    o.release(std::slice::from_ref(&body), &x);
    assert!(o.is_empty() && o.body_of(1).is_none(), "outside: released");
}
