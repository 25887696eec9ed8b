//! A garment that starts crossing itself (issue 50): a strip folded back through its own
//! lower layer. The bake must end with the strip untangled, measured with this file's own
//! edge–triangle intersection test.
use drape::fixtures::{bodies, sheet, SheetPins, SheetPlane, SheetSpec, SheetUv};
use drape::model::{ClothModel, UvScale};
use drape::pipeline::{Simulator, SolverParams};
use drape::scene::Material;
use drape::Vec3;

/// The point at arc length `s` (m) of the fold's profile in the x–y plane: flat for 0.5 m,
/// up 0.15 m, then back down at 35° through the flat part (which it crosses at
/// s ≈ 0.91; the bends lie on grid lines, the crossing between them).
fn profile(s: f64) -> (f64, f64) {
    let (c, d) = (35f64.to_radians().cos(), 35f64.to_radians().sin());
    if s <= 0.5 {
        (s, 0.0)
    } else if s <= 0.65 {
        (0.5, s - 0.5)
    } else {
        (0.5 - (s - 0.65) * c, 0.15 - (s - 0.65) * d)
    }
}

/// Edge–triangle intersections of the mesh `x`, `tris` (edges and triangles sharing no
/// particle): the segment meets the triangle's interior.
fn intersections(x: &[Vec3], tris: &[[usize; 3]]) -> usize {
    let mut edges: Vec<(usize, usize)> = tris
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let mut count = 0;
    for &(p, q) in &edges {
        for t in tris {
            if t.contains(&p) || t.contains(&q) {
                continue;
            }
            let [a, b, c] = t.map(|i| x[i]);
            let n = (b - a).cross(&(c - a));
            let (sp, sq) = ((x[p] - a).dot(&n), (x[q] - a).dot(&n));
            if sp * sq >= 0.0 {
                continue;
            }
            let hit = x[p] + (x[q] - x[p]) * (sp / (sp - sq));
            let inside = [(a, b), (b, c), (c, a)]
                .iter()
                .all(|&(u, v)| (v - u).cross(&(hit - u)).dot(&n) > 0.0);
            count += usize::from(inside);
        }
    }
    count
}

#[test]
fn a_strip_folded_through_itself_bakes_and_ends_untangled() {
    let mut g = sheet(&SheetSpec {
        n: 21,
        size: 1.0,
        plane: SheetPlane::Horizontal,
        uv: SheetUv::Metres,
        pins: SheetPins::None,
        ..SheetSpec::default()
    });
    let xmin = g
        .positions
        .iter()
        .map(|p| p.x)
        .fold(f64::INFINITY, f64::min);
    for p in &mut g.positions {
        let (x, y) = profile(p.x - xmin);
        *p = Vec3::new(x, 0.3 + y, p.z);
    }
    let floor = bodies::inclined_plane(Vec3::new(0.3, 0.0, 0.0), 2.0, 0.0, 8);
    let material = Material::preset("cotton").unwrap();
    let model = ClothModel::build(&g, UvScale::Fixed(1.0), material.density).unwrap();
    let tris = model.triangles.clone();
    let before = intersections(&model.positions, &tris);
    assert!(before > 0, "the fixture starts crossing itself");
    let mut sim = Simulator::new(model, &material, &g.pin, SolverParams::new(24.0, Vec3::y()))
        .with_bodies(&[floor], &material, 1.0, 24.0)
        .unwrap();
    let warnings = sim.initial_warnings();
    assert!(
        warnings.iter().any(|w| w.contains("crosses itself")),
        "{warnings:?}"
    );
    let mut steps = 0;
    for frame in 2..=48 {
        let s = sim
            .advance(1.0 / 24.0)
            .unwrap_or_else(|e| panic!("frame {frame}: {e}"));
        steps += s.steps;
        if frame % 8 == 0 {
            println!(
                "frame {frame}: {} steps, {} intersections",
                s.steps,
                intersections(sim.positions(), &tris)
            );
        }
    }
    let after = intersections(sim.positions(), &tris);
    println!(
        "{before} edge–triangle intersections at the start, {after} at frame 48; {steps} steps"
    );
    assert_eq!(after, 0, "the strip still crosses itself");
}
