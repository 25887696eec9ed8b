//! Tests of body contact detection, constraints and friction ([`super`]).
use super::*;
use crate::collision::self_contact::Repulsion;

/// The faceted sphere of the tests: radius 0.35 m at the origin, 24 rings, 48 segments.
fn sphere() -> crate::scene::Body {
    crate::fixtures::bodies::sphere(Vec3::zeros(), 0.35, 24, 48)
}

/// The floor of the tests: a 2 m square at height 0.
fn floor() -> crate::scene::Body {
    crate::fixtures::bodies::inclined_plane(Vec3::zeros(), 2.0, 0.0, 4)
}

/// `body` as the one collision body of a test (thickness 4 mm, friction 0.3), its
/// thickness and gravity.
fn test_bodies(body: crate::scene::Body) -> ([BodyState; 1], f64, Vec3) {
    let tau = 0.004;
    let state = BodyState::new(&body, tau, 0.3).unwrap();
    ([state], tau, Vec3::new(0.0, -9.81, 0.0))
}

fn sliding_contact(normal: Vec3, friction_dir: Vec3) -> BodyContacts {
    let c = Contact {
        particle: 0,
        body: 0,
        normal,
        body_velocity: Vec3::new(0.3, -0.2, 0.1),
        y: Vec3::zeros(),
        stuck: false,
        friction: 0.4,
    };
    BodyContacts {
        memory: vec![Some(Memory {
            body: 0,
            normal_force: 2.5,
            stuck: false,
            released: false,
            friction_dir,
        })],
        contacts: vec![c],
        overlaps: Default::default(),
    }
}

#[test]
fn a_released_particle_resting_on_the_surface_comes_back_unless_cloth_lies_under_it() {
    let (bodies, _, g) = test_bodies(sphere());
    let h = 1.0 / 48.0;
    // Falling onto the top of the sphere: a contact, altered onto the surface.
    let mut x = vec![Vec3::new(0.02, 0.36, 0.01)];
    let v = vec![Vec3::new(0.0, -0.5, 0.0)];
    let mut contacts = BodyContacts::default();
    contacts.detect(&bodies, &x, &v, &[false], &NearbyCloth::none(), h, g, None);
    assert_eq!(contacts.contacts.len(), 1);
    let (mut constraints, mut y) = (Vec::new(), vec![Vec3::zeros()]);
    contacts.constrain(&v, &mut constraints, &mut y);
    let n = contacts.contacts[0].normal;
    // Its constraint force pulled it toward the body: released. It then lifted 0.2 mm
    // and came to rest.
    let rest = vec![Vec3::zeros()];
    contacts.remember(&[-1e-3 * n], &rest, h);
    x[0] += y[0];
    let on_surface = x.clone();
    x[0] += 2e-4 * n;
    let detect = |x: &[Vec3], layered: bool| {
        let mut c = contacts.clone();
        let springs = [Repulsion {
            nodes: [0, 1, 2, 3],
            gamma: [1.0, -0.2, -0.3, -0.5],
            normal: n,
            point_triangle: true,
            slack: 0.0,
        }];
        let layers = NearbyCloth::new(4, if layered { &springs } else { &[] });
        c.detect(&bodies, x, &rest, &[false], &layers, h, g, None);
        c.contacts.len()
    };
    // Nothing under it: gravity brings it back onto the surface.
    assert_eq!(detect(&x, false), 1);
    // Cloth under it: only its own momentum would, and it has none.
    assert_eq!(detect(&x, true), 0);
    // Still lying at the body's thickness, it rests on the body whatever lies near:
    // it comes back too (else it falls below that thickness, into the plane of cloth
    // lying there, see `ON_BODY`).
    assert_eq!(detect(&on_surface, true), 1);
    assert_eq!(detect(&on_surface, false), 1);
}

#[test]
fn a_particle_over_cloth_is_pushed_out_but_never_pulled_down_onto_the_body() {
    let (bodies, tau, g) = test_bodies(floor());
    let h = 1.0 / 48.0;
    // Particle 0 lies 1.5 τ above the floor, on particle 1's layer at τ; particle 2
    // went 1 mm into the floor under cloth (particle 3 over it, a spring from above).
    let x = vec![
        Vec3::new(0.1, 1.5 * tau, 0.1),
        Vec3::new(0.1, tau, 0.1),
        Vec3::new(0.3, -0.001, 0.2),
        Vec3::new(0.3, 0.002, 0.2),
    ];
    let v = vec![Vec3::new(0.0, -0.1, 0.0); 4];
    let spring = |top: usize, bottom: usize| Repulsion {
        nodes: [top, bottom, bottom, bottom],
        gamma: [1.0, -1.0, 0.0, 0.0],
        normal: Vec3::y(),
        point_triangle: true,
        slack: 0.0,
    };
    let alterations = |layers: &NearbyCloth| {
        let mut c = BodyContacts::default();
        c.detect(
            &bodies,
            &x,
            &v,
            &[false, false, false, true],
            layers,
            h,
            g,
            None,
        );
        let (mut constraints, mut y) = (Vec::new(), vec![Vec3::zeros(); 4]);
        c.constrain(&v, &mut constraints, &mut y);
        assert_eq!(constraints.len(), 3, "particles 0–2 touch the floor");
        y.iter().map(|y| y.y).collect::<Vec<_>>()
    };
    let alone = alterations(&NearbyCloth::none());
    let piled = alterations(&NearbyCloth::new(4, &[spring(0, 1), spring(3, 2)]));
    // Without layers: all altered to τ, particle 0 pulled down 2 mm into particle 1's
    // plane.
    for (y, x) in alone.iter().zip(&x).take(3) {
        assert!((x.y + y - tau).abs() < 1e-12);
    }
    // With layers: particle 0 rests on the layer under it; the others as before
    // (particle 2 has cloth above it, not under it, and is pushed out to τ).
    assert_eq!(piled[0], 0.0);
    assert_eq!(piled[1..3], alone[1..3]);
}

#[test]
fn sliding_friction_jacobian_matches_finite_differences() {
    let n = Vec3::new(0.2, 1.0, -0.3).normalize();
    let contacts = sliding_contact(n, Vec3::zeros());
    let force = |v: Vec3| contacts.friction_terms(&[v])[0].2;
    for v in [
        Vec3::new(1.0, 0.5, -0.7),
        Vec3::new(-0.02, 0.3, 0.05),
        Vec3::new(0.31, 2.0, 0.2),
    ] {
        let (_, k, f) = contacts.friction_terms(&[v])[0];
        let bv = contacts.contacts[0].body_velocity;
        let vt = (Mat3::identity() - n * n.transpose()) * (v - bv);
        // Coulomb: magnitude μN, against the slip, tangential.
        assert!((f.norm() - 0.4 * 2.5).abs() < 1e-12);
        assert!(f.dot(&vt) < 0.0 && f.dot(&n).abs() < 1e-12);
        let eps = 1e-6;
        let mut fd = Mat3::zeros();
        for j in 0..3 {
            let mut e = Vec3::zeros();
            e[j] = eps;
            let col = (force(v + e) - force(v - e)) / (2.0 * eps);
            fd.set_column(j, &col);
        }
        // K = −∂f/∂v.
        let err = (k + fd).amax() / k.amax();
        assert!(err < 1e-6, "relative error {err}");
        assert!((k - k.transpose()).amax() < 1e-12);
        assert!(
            k.symmetric_eigenvalues().min() > -1e-12,
            "K is positive semi-definite"
        );
    }
}

#[test]
fn friction_at_rest_acts_along_the_broken_static_force_with_coulomb_magnitude() {
    let n = Vec3::y();
    let dir = Vec3::new(-1.0, 0.0, 0.0);
    let contacts = sliding_contact(n, dir);
    let v = contacts.contacts[0].body_velocity; // no slip
    let (_, k, f) = contacts.friction_terms(&[v])[0];
    assert_eq!(k, Mat3::zeros());
    assert!((f - 1.0 * dir).norm() < 1e-12, "{f}");
}

#[test]
fn a_particle_held_above_the_body_by_its_cloth_is_not_pulled_down_onto_it() {
    let (bodies, tau, g) = test_bodies(floor());
    let h = 1.0 / 48.0;
    // 2.6 mm above the thickness: gravity alone (h² g = 4.3 mm) would carry it into it.
    let x = vec![Vec3::new(0.1, tau + 0.0026, 0.1)];
    let contacts = |v: Vec3, accel: Option<Vec3>, layers: &NearbyCloth| {
        let mut c = BodyContacts::default();
        let accel = accel.map(|a| vec![a]);
        c.detect(&bodies, &x, &[v], &[false], layers, h, g, accel.as_deref());
        c.contacts.len()
    };
    let none = NearbyCloth::none();
    // Before any step, and falling freely in the last one: a contact, as before.
    assert_eq!(contacts(Vec3::zeros(), None, &none), 1);
    assert_eq!(contacts(Vec3::zeros(), Some(g), &none), 1);
    // At rest, held up by its neighbours (no acceleration last step): none.
    assert_eq!(contacts(Vec3::zeros(), Some(Vec3::zeros()), &none), 0);
    // Decelerated hard last step (an impact beside it): the acceleration counts only up
    // to g's size, 4.3 mm of lift against 2.6 mm of gap: still none.
    assert_eq!(contacts(Vec3::zeros(), Some(-30.0 * g), &none), 0);
    // Moving onto the body by more than half the thickness this step: landing, so
    // gravity decides whatever the last acceleration.
    let landing = Vec3::new(0.0, -0.2, 0.0);
    assert_eq!(contacts(landing, Some(-g), &none), 1);
    // Cloth near it: gravity decides too (see `BodyContacts::detect`).
    let spring = [Repulsion {
        nodes: [0, 1, 2, 3],
        gamma: [1.0, -0.2, -0.3, -0.5],
        normal: Vec3::y(),
        point_triangle: true,
        slack: 0.0,
    }];
    let layered = NearbyCloth::new(4, &spring);
    assert_eq!(contacts(Vec3::zeros(), Some(Vec3::zeros()), &layered), 1);
}

/// A particle resting at the thickness over one face band of a faceted sphere, 8 mm above
/// the band's lower edge: gravity's prediction over 1/24 s (17 mm) ends over the band
/// below, whose plane passes closer to the particle than the body does. The alteration
/// must not push it out (it did by about 1 mm, stretching the resting 10,000-vertex
/// sheet's triangles by 3–8% at every attempt to grow its step to 1/24 s).
#[test]
fn a_resting_particle_predicted_onto_the_next_face_is_not_pushed_out() {
    let (bodies, tau, g) = test_bodies(sphere());
    let h = 1.0 / 24.0;
    // The band between rings 8 and 9 (60° and 67.5° from the pole), between the
    // segments 0 and 1: a planar quad.
    let p = &bodies[0].x0;
    let ring = |r: usize, s: usize| p[1 + (r - 1) * 48 + s];
    let (upper, lower) = (
        0.5 * (ring(8, 0) + ring(8, 1)),
        0.5 * (ring(9, 0) + ring(9, 1)),
    );
    let normal = (ring(9, 0) - ring(8, 0))
        .cross(&(ring(9, 1) - ring(8, 0)))
        .normalize();
    let foot = lower + 0.008 * (upper - lower).normalize();
    let x = vec![foot + tau * normal];
    // The body's own distance there is the thickness (brute force over its faces).
    let distance = (bodies[0].triangles.iter())
        .map(|t| {
            let [a, b, c] = t.map(|i| p[i]);
            let w = closest_point_barycentric(x[0], a, b, c);
            (x[0] - (a * w[0] + b * w[1] + c * w[2])).norm()
        })
        .fold(f64::INFINITY, f64::min);
    assert!(
        (distance - tau).abs() < 1e-9,
        "at the thickness: {distance}"
    );
    let mut contacts = BodyContacts::default();
    let rest = [Vec3::zeros()];
    contacts.detect(
        &bodies,
        &x,
        &rest,
        &[false],
        &NearbyCloth::none(),
        h,
        g,
        None,
    );
    assert_eq!(
        contacts.contacts.len(),
        1,
        "a contact, predicted by gravity"
    );
    let c = contacts.contacts[0];
    // The contact is the band below's, and its plane is more than half a millimetre
    // closer to the particle than the thickness: the case this is about.
    let tilt = c.normal.dot(&normal).acos().to_degrees();
    let plane = (x[0] - ring(9, 0)).dot(&c.normal);
    assert!(
        tilt > 5.0 && plane < tau - 5e-4,
        "tilt {tilt}°, plane at {plane} m"
    );
    assert!(c.y.norm() < 1e-6, "not pushed out: |y| = {} m", c.y.norm());
}

#[test]
fn blocked_pulls_become_no_alteration_and_pushes_stay() {
    let contact = |particle: usize, dy: f64| Contact {
        particle,
        body: 0,
        normal: Vec3::y(),
        body_velocity: Vec3::zeros(),
        y: dy * Vec3::y(),
        stuck: false,
        friction: 0.0,
    };
    let mut contacts = BodyContacts {
        contacts: vec![
            contact(0, -2.6e-3),
            contact(1, 1e-3),
            contact(2, -1e-9),
            contact(3, -2e-3),
        ],
        ..BodyContacts::default()
    };
    let x = vec![Vec3::new(0.0, 4.6e-3, 0.0); 4];
    // Pulls longer than 1e-6 m: particles 0 and 3, with where they would end.
    let pulls = contacts.pulls(&x, 1e-6);
    assert_eq!(pulls.iter().map(|p| p.0).collect::<Vec<_>>(), [0, 3]);
    assert!((pulls[0].1.y - 2.0e-3).abs() < 1e-15 && pulls[0].2 == Vec3::y());
    contacts.push_only(&[0, 1]);
    let y: Vec<f64> = contacts.contacts.iter().map(|c| c.y.y).collect();
    assert_eq!(y, [0.0, 1e-3, -1e-9, -2e-3]);
}

#[test]
fn a_particle_crossing_a_face_within_one_step_is_caught_by_the_continuous_test() {
    let (bodies, _, g) = test_bodies(floor());
    let h = 1.0 / 48.0;
    // 5 cm above the floor at 10 m/s downward: the step's predicted end is ~16 cm below
    // it, too deep for the proximity tests (beyond the thickness and `DEEP_PUSH_OUT`).
    let v = vec![Vec3::new(0.0, -10.0, 0.0)];
    let detect = |x: Vec3| {
        let mut c = BodyContacts::default();
        c.detect(
            &bodies,
            &[x],
            &v,
            &[false],
            &NearbyCloth::none(),
            h,
            g,
            None,
        );
        c.contacts
    };
    let over = detect(Vec3::new(0.3, 0.05, -0.2));
    assert_eq!(over.len(), 1, "the path through the floor is a contact");
    assert!(
        (over[0].normal - Vec3::y()).norm() < 1e-12,
        "{:?}",
        over[0].normal
    );
    // Moving out of the floor's reach (past its 1 m edge), and coming up from below the
    // face: no contact.
    assert!(detect(Vec3::new(1.3, 0.05, -0.2)).is_empty());
    let v_up = vec![Vec3::new(0.0, 10.0, 0.0)];
    let mut c = BodyContacts::default();
    let x = [Vec3::new(0.3, -0.15, -0.2)];
    c.detect(
        &bodies,
        &x,
        &v_up,
        &[false],
        &NearbyCloth::none(),
        h,
        g,
        None,
    );
    assert!(c.contacts.is_empty());
}

#[test]
fn the_plane_tests_skip_only_faces_that_give_no_hit_or_are_no_nearer() {
    // Particles around the faceted sphere and over the floor, from inside the body to a
    // few thicknesses out, moving up to a few thicknesses (and some far) in a step.
    let mut rng = crate::forces::tests::Rng::new(17);
    let h = 1.0 / 48.0;
    let (mut hits, mut skipped) = (0, 0);
    for (body, centre) in [(sphere(), true), (floor(), false)] {
        let (bodies, tau, _) = test_bodies(body);
        for case in 0..4000 {
            let dir = rng.vec(1.0).normalize();
            let out = rng.range(-2.0 * tau, 6.0 * tau);
            let x0 = if centre {
                dir * (0.35 + out)
            } else {
                Vec3::new(rng.range(-1.0, 1.0), out, rng.range(-1.0, 1.0))
            };
            let reach = if case % 10 == 0 { 0.1 } else { 3.0 * tau };
            let pred = x0 + rng.vec(reach);
            let fast = find_hit_with(&bodies, x0, pred, h, true, None);
            assert_eq!(
                fast,
                find_hit_with(&bodies, x0, pred, h, false, None),
                "case {case}: x0 {x0:?}, pred {pred:?}"
            );
            hits += usize::from(fast.is_some());
            let mut q = crate::collision::bvh::Aabb::empty();
            q.include(x0);
            q.include(pred);
            bodies[0].candidates(&q.inflate(tau), |t| {
                let (_, c1) = bodies[0].corners(t);
                skipped += usize::from(clear_of_still_face(x0, pred, c1, tau));
                // The penetration check's bound leaves out only faces no nearer than it.
                let full = surface_distance(pred, c1, f64::INFINITY).unwrap();
                let bound = rng.range(0.0, 3.0 * tau);
                match surface_distance(pred, c1, bound) {
                    Some(d) => assert_eq!(d, full),
                    None => assert!(full.0 >= bound * (1.0 - 1e-12), "{full:?} within {bound}"),
                }
            });
        }
    }
    assert!(hits > 1000, "the cases find contacts: {hits}");
    assert!(skipped > 1000, "the plane test skips faces: {skipped}");
}
