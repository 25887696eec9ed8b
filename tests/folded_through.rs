//! A garment that starts crossing itself (issue 50): a strip folded back through its own
//! flat part, over a floor (`fixtures/strip_folded_through.gltf`). The bake must go to the
//! end untorn, on the floor, with the strip untangled: measured with the tests' own
//! edge–triangle intersection test (`common::tangle`).
mod common;

use common::tangle::bake;
use drape::Vec3;

/// How deep `p` lies under the floor, the plane y = 0 (m).
fn under_floor(p: Vec3, _frame: f64) -> f64 {
    (-p.y).max(0.0)
}

#[test]
fn a_strip_folded_through_itself_bakes_and_ends_untangled() {
    let scene = drape::io::load_scene(&common::fixture("strip_folded_through.gltf")).unwrap();
    assert_eq!(scene.bodies.len(), 1, "the floor");
    let b = bake(&scene.garments[0], &scene.bodies, 48, under_floor);
    println!(
        "{} edge–triangle intersections at the start, {} at frame 48; {:.1} steps/frame; \
         worst edge stretch {:.1}%; deepest under the floor from frame 10: {:.2} mm",
        b.crossings.0,
        b.crossings.1,
        b.steps_per_frame,
        100.0 * b.worst_stretch,
        1e3 * b.deepest_late
    );
    assert!(b.crossings.0 > 0, "the fixture starts crossing itself");
    assert!(
        (b.warnings.iter()).any(|w| w.contains("crosses itself")),
        "{:?}",
        b.warnings
    );
    assert_eq!(b.crossings.1, 0, "the strip still crosses itself");
    b.assert_untorn_and_out("under the floor");
    // The same strip folded clear of itself: what the tangled start costs.
    let (clear, floor) = drape::fixtures::folded_strip(0.0);
    let c = bake(&clear, &[floor], 48, under_floor);
    println!(
        "folded clear of itself: {:.1} steps/frame, worst edge stretch {:.1}%",
        c.steps_per_frame,
        100.0 * c.worst_stretch
    );
    assert_eq!(c.crossings, (0, 0));
    // The target for the cost: within 3× the steps of the clean start.
    assert!(
        b.steps_per_frame <= 3.0 * c.steps_per_frame,
        "{:.1} steps/frame against {:.1} folded clear",
        b.steps_per_frame,
        c.steps_per_frame
    );
}
