//! Cloth against animated bodies (issue 3, "[2 of 7] Collisions"): exact contact
//! constraints, friction, fast bodies.
use drape::fixtures::{bodies, sheet, SheetPins, SheetPlane, SheetSpec, SheetUv};
use drape::model::{ClothModel, UvScale};
use drape::pipeline::{Simulator, SolverParams};
use drape::scene::{Body, Garment, Material};
use drape::Vec3;

fn simulator(g: &Garment, material: &Material, bodies: &[Body], params: SolverParams) -> Simulator {
    let model = ClothModel::build(g, UvScale::Auto, material.density).unwrap();
    Simulator::new(model, material, &g.pin, params)
        .with_bodies(bodies, material, 0.0, 24.0)
        .unwrap()
}

fn params() -> SolverParams {
    SolverParams::new(24.0, Vec3::y())
}

#[test]
fn sheet_drapes_over_a_sphere_without_sinking_in() {
    // Baraff fig. 1: a square sheet of 2,601 particles falls onto a sphere and settles.
    let (g, sphere) = drape::bench::drape_over_sphere(51);
    let radius = 0.35;
    let material = Material::preset("cotton").unwrap();
    let mut sim = simulator(&g, &material, &[sphere], params());
    let mut worst: f64 = 0.0;
    for frame in 0..72 {
        let stats = sim.advance(1.0 / 24.0).unwrap();
        let pen = sim.max_penetration();
        worst = worst.max(pen);
        if frame % 12 == 0 {
            println!(
                "frame {frame}: {} contacts, {} steps, penetration {pen:.3} τ",
                stats.contacts, stats.steps
            );
        }
    }
    println!("deepest penetration over 72 frames: {worst:.4} of the thickness");
    assert!(
        worst <= 0.1,
        "no particle deeper than 10% of the thickness: {worst}"
    );
    // Draped: the top of the sphere carries the sheet's centre; the rim hangs below.
    let centre = sim.positions()[25 * 51 + 25];
    assert!(
        (centre.y - (radius + material.thickness)).abs() < 0.01,
        "centre rests on the sphere: {centre}"
    );
    let corner = sim.positions()[0];
    assert!(corner.y < 0.0, "corners hang down: {corner}");
    assert!(
        sim.contacts().len() > 100,
        "many contacts: {}",
        sim.contacts().len()
    );
}

fn slide_on_incline(angle_deg: f64, friction: f64) -> f64 {
    let angle = angle_deg.to_radians();
    let g = sheet(&SheetSpec {
        name: "Patch".into(),
        n: 10,
        size: 0.3,
        plane: SheetPlane::Horizontal,
        uv: SheetUv::Unit,
        pins: SheetPins::None,
        seam: false,
        offset: Vec3::zeros(),
    });
    // Tilt the patch onto the plane, resting at the thickness above it.
    let material = Material {
        friction,
        ..Material::preset("cotton").unwrap()
    };
    let (s, c) = angle.sin_cos();
    let normal = Vec3::new(0.0, c, -s);
    let mut g = g;
    for p in &mut g.positions {
        *p = Vec3::new(p.x, p.z * s, p.z * c) + normal * material.thickness;
    }
    let plane = bodies::inclined_plane(Vec3::zeros(), 3.0, angle, 6);
    let mut sim = simulator(&g, &material, &[plane], params());
    let start: Vec3 = sim.positions().iter().sum::<Vec3>() / sim.positions().len() as f64;
    for _ in 0..24 {
        sim.advance(1.0 / 24.0).unwrap();
        assert!(sim.max_penetration() <= 0.1);
    }
    let end: Vec3 = sim.positions().iter().sum::<Vec3>() / sim.positions().len() as f64;
    (end - start).norm()
}

#[test]
fn cloth_on_an_incline_sticks_below_the_friction_angle_and_slides_above() {
    // μ = 0.4: friction angle atan(0.4) = 21.8°.
    let below = slide_on_incline(15.0, 0.4);
    let above = slide_on_incline(30.0, 0.4);
    println!("moved {below:.4} m at 15°, {above:.4} m at 30° in one second");
    assert!(
        below < 0.005,
        "stays put below the friction angle: moved {below} m"
    );
    // Sliding under g (sin 30° − 0.4 cos 30°) = 1.5 m/s² for 1 s covers about 0.75 m.
    assert!(
        above > 0.3,
        "slides above the friction angle: moved {above} m"
    );
}

#[test]
fn fast_limb_pushes_a_hanging_sheet_without_passing_through() {
    // A 0.5 m curtain hanging from its top edge in the plane z = 0; a limb (a bar along x,
    // longer than the curtain is wide) sweeps through its middle along +z at 5 m/s: about
    // 0.21 m per frame, 50 times the thickness.
    let g = sheet(&SheetSpec {
        name: "Curtain".into(),
        n: 26,
        size: 0.5,
        plane: SheetPlane::Vertical,
        uv: SheetUv::Unit,
        pins: SheetPins::TopEdge,
        seam: false,
        offset: Vec3::zeros(),
    });
    let material = Material::preset("cotton").unwrap();
    let (radius, speed, z0) = (0.04, 5.0, -0.3);
    let limb = bodies::moving_limb(
        Vec3::new(0.0, 0.25, z0),
        Vec3::x(),
        radius,
        1.0,
        Vec3::new(0.0, 0.0, speed),
        24.0,
        48,
    );
    let mut sim = simulator(&g, &material, &[limb], params());
    let mut pushed = 0;
    let mut touched = 0;
    for frame in 1..=5 {
        let stats = sim.advance(1.0 / 24.0).unwrap();
        let limb_z = z0 + speed * frame as f64 / 24.0;
        // Cloth in line with the bar's core cannot get behind it without passing through.
        for p in sim.positions() {
            if (p.y - 0.25).abs() < 0.5 * radius && p.x.abs() < 0.2 {
                assert!(
                    p.z > limb_z,
                    "frame {frame}: particle {:?} behind the limb at z = {limb_z}",
                    p.as_slice()
                );
                pushed += 1;
            }
        }
        touched += stats.contacts;
        println!(
            "frame {frame}: {} steps, {} contacts, penetration {:.3} τ",
            stats.steps,
            stats.contacts,
            sim.max_penetration()
        );
        assert!(
            sim.max_penetration() <= 0.1,
            "frame {frame}: penetration {}",
            sim.max_penetration()
        );
    }
    assert!(pushed > 0 && touched > 0, "the bar reached the curtain");
    // The bar carried the curtain forward (it then slides off under the bar, since the
    // pins hold its top 0.25 m above the bar).
    let ahead = sim.positions().iter().map(|p| p.z).fold(f64::MIN, f64::max);
    assert!(
        ahead > 0.3,
        "the curtain was carried forward: max z {ahead}"
    );
}

#[test]
fn garment_starting_inside_a_body_is_eased_out_with_a_warning() {
    // The drape sheet placed 1 cm below the top of the sphere: its middle starts inside.
    let (mut g, sphere) = drape::bench::drape_over_sphere(31);
    for p in &mut g.positions {
        p.y = 0.34;
    }
    let material = Material::preset("cotton").unwrap();
    let mut sim = simulator(&g, &material, &[sphere], params());
    let warnings = sim.initial_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("start inside body 'Sphere'"),
        "{warnings:?}"
    );
    let inside = sim.particles_inside_bodies();
    assert!(inside > 0);
    for _ in 0..6 {
        sim.advance(1.0 / 24.0).unwrap();
        assert!(sim
            .positions()
            .iter()
            .all(|p| p.iter().all(|c| c.is_finite())));
    }
    assert!(
        sim.max_penetration() <= 0.1,
        "pushed out: {}",
        sim.max_penetration()
    );
    assert_eq!(sim.particles_inside_bodies(), 0, "{inside} started inside");
    let top = sim.positions().iter().map(|p| p.y).fold(f64::MIN, f64::max);
    assert!(top < 0.5, "no explosion: highest particle at {top} m");
}
