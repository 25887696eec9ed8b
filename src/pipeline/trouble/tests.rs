use super::*;
use crate::fixtures::{bodies, sheet, SheetPins, SheetPlane, SheetSpec};
use crate::model::{ClothModel, UvScale};
use crate::pipeline::SolverParams;
use crate::scene::Material;

/// A small free sheet 1 cm above a floor at y = 0 that rises by `rise` (m) over the first
/// frame, with the bodies sampled for a step of `h` = one frame.
fn sheet_over_floor(rise: f64) -> (Simulator, f64) {
    let g = sheet(&SheetSpec {
        n: 5,
        size: 0.2,
        plane: SheetPlane::Horizontal,
        pins: SheetPins::None,
        offset: Vec3::new(0.0, 0.01, 0.0),
        ..SheetSpec::default()
    });
    let mut floor = bodies::inclined_plane(Vec3::zeros(), 1.0, 0.0, 4);
    let still = floor.animation.positions[0].clone();
    let risen = still
        .iter()
        .map(|p| p + Vec3::new(0.0, rise, 0.0))
        .collect();
    floor.animation.frames = vec![1.0, 2.0];
    floor.animation.positions = vec![still, risen];
    let material = Material::preset("cotton").unwrap();
    let model = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
    let params = SolverParams::new(24.0, Vec3::y());
    let mut sim = Simulator::new(model, &material, &g.pin, params)
        .with_bodies(&[floor], &material, 1.0, 24.0)
        .unwrap();
    let h = 1.0 / 24.0;
    sim.sample_bodies(h);
    (sim, h)
}

/// The proposed step: the sheet carried up with the floor to `rise`, but particle 7 ends
/// `depth` below the floor's surface.
fn sunk(sim: &Simulator, rise: f64, depth: f64) -> Vec<Vec3> {
    let mut x: Vec<Vec3> = (sim.positions().iter())
        .map(|p| p + Vec3::new(0.0, rise, 0.0))
        .collect();
    x[7].y = rise - depth;
    x
}

#[test]
fn a_particle_ending_inside_a_still_body_is_named_as_caught() {
    let (mut sim, h) = sheet_over_floor(0.0);
    let x = sunk(&sim, 0.0, 0.002);
    sim.note_trouble(&Rejection::Contact, &x, h);
    let t = sim.trouble().expect("noted").clone();
    assert_eq!(t.cause, "contact");
    assert_eq!(t.particles, vec![7]);
    assert_eq!(t.body.as_deref(), Some("Plane"));
    assert!(t.body_speed.unwrap() < 1e-12);
    let msg = sim.trouble_message(&Rejection::Contact);
    assert!(
        msg.contains("inside body 'Plane' near garment particle 7"),
        "{msg}"
    );
    assert!(msg.contains("caught"), "{msg}");
}

#[test]
fn a_particle_ending_inside_a_body_that_jumps_names_its_speed() {
    // The floor rises 1 m in one frame (24 m/s): the message says the body moves too fast.
    let (mut sim, h) = sheet_over_floor(1.0);
    let x = sunk(&sim, 1.0, 0.002);
    sim.note_trouble(&Rejection::Contact, &x, h);
    let t = sim.trouble().expect("noted").clone();
    assert_eq!(t.particles, vec![7]);
    assert!((t.body_speed.unwrap() - 24.0).abs() < 1e-9, "{t:?}");
    let msg = sim.trouble_message(&Rejection::Contact);
    assert!(msg.contains("moves at 24.0 m/s"), "{msg}");
}

#[test]
fn a_stretch_jump_is_placed_at_the_triangle_that_changed_most() {
    let (mut sim, h) = sheet_over_floor(0.0);
    let mut x = sim.positions().to_vec();
    x[12].x += 0.05;
    sim.note_trouble(&Rejection::Stretch, &x, h);
    let t = sim.trouble().expect("noted").clone();
    assert_eq!(t.cause, "stretch");
    assert!(t.particles.contains(&12), "{t:?}");
    let msg = sim.trouble_message(&Rejection::Stretch);
    assert!(
        msg.starts_with("the cloth stretch kept jumping near garment particle"),
        "{msg}"
    );
}
