//! Measures of garments that start tangled (issue 50): how deep cloth lies inside a body
//! (a point-in-solid test of this file's own: the winding number of a ray to infinity),
//! how far its edges stretch, how often it crosses itself, and a bake of a scene's first
//! garment that records them every frame.
use drape::collision::geometry::closest_point_barycentric;
use drape::model::{ClothModel, UvScale};
use drape::pipeline::{Simulator, SolverParams};
use drape::scene::{Body, Garment, Material};
use drape::Vec3;

/// Winding number of the solid `tris` around `p`, from a ray along a direction no mesh
/// edge of the fixtures lies along: the crossings of faces seen from behind minus those
/// seen from the front (positive inside a union of closed, outward-wound shells).
pub fn winding(p: Vec3, x: &[Vec3], tris: &[[usize; 3]]) -> i32 {
    let d = Vec3::new(0.5771, 0.5813, 0.5737).normalize();
    let mut w = 0;
    for t in tris {
        let [a, b, c] = t.map(|i| x[i]);
        let (e1, e2) = (b - a, c - a);
        let q = d.cross(&e2);
        let det = e1.dot(&q);
        if det.abs() < 1e-300 {
            continue;
        }
        let s = p - a;
        let u = s.dot(&q) / det;
        let r = s.cross(&e1);
        let v = d.dot(&r) / det;
        if u < 0.0 || v < 0.0 || u + v > 1.0 || e2.dot(&r) / det < 0.0 {
            continue;
        }
        w += if e1.cross(&e2).dot(&d) > 0.0 { 1 } else { -1 };
    }
    w
}

/// How deep `p` lies inside the body `x`, `tris` (m; 0 outside): its distance to the
/// surface when its winding number is positive.
pub fn depth(p: Vec3, x: &[Vec3], tris: &[[usize; 3]]) -> f64 {
    if winding(p, x, tris) <= 0 {
        return 0.0;
    }
    (tris.iter())
        .map(|t| {
            let [a, b, c] = t.map(|i| x[i]);
            let w = closest_point_barycentric(p, a, b, c);
            (p - (a * w[0] + b * w[1] + c * w[2])).norm()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Body positions at an integer frame (a sample of its animation).
pub fn body_at(body: &Body, frame: f64) -> &[Vec3] {
    let k = (body.animation.frames.iter())
        .position(|&f| (f - frame).abs() < 1e-9)
        .expect("the body is sampled at every frame");
    &body.animation.positions[k]
}

/// Edge–triangle intersections of the mesh `x`, `tris` (edges and triangles sharing no
/// particle): the segment meets the triangle's interior.
pub fn intersections(x: &[Vec3], tris: &[[usize; 3]]) -> usize {
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

/// What [`bake`] measured over frames 2..=`last`.
#[derive(Debug)]
pub struct Baked {
    /// Deepest particle inside a body at the first frame (m).
    pub deepest_start: f64,
    /// Deepest particle inside a body from frame 10 on (m).
    pub deepest_late: f64,
    /// Largest edge strain `ℓ/ℓ₀ − 1` at any frame, `ℓ₀` the first frame's length.
    pub worst_stretch: f64,
    /// Solver steps per simulated frame.
    pub steps_per_frame: f64,
    /// The initial-state warnings.
    pub warnings: Vec<String>,
    /// Edge–triangle intersections at the first and at the last frame.
    pub crossings: (usize, usize),
}

impl Baked {
    /// The bounds on a garment started tangled: no edge stretched more than 20% at
    /// any frame, no particle deeper than 2 mm `inside` (what it may not be in: "inside
    /// the body", "under the floor") from the tenth frame on.
    pub fn assert_untorn_and_out(&self, inside: &str) {
        assert!(
            self.worst_stretch <= 0.20,
            "an edge stretched {:.1}%",
            100.0 * self.worst_stretch
        );
        assert!(
            self.deepest_late <= 0.002,
            "{:.2} mm {inside} after frame 10",
            1e3 * self.deepest_late
        );
    }
}

/// Bakes `garment` among `bodies` (cotton, 24 fps, the frame loop of the library) from
/// frame 1 to `last`, every frame asserted to succeed; `inside(p, frame)` says how deep
/// the particle at `p` lies inside a body at `frame` (m).
pub fn bake(
    garment: &Garment,
    bodies: &[Body],
    last: i32,
    inside: impl Fn(Vec3, f64) -> f64,
) -> Baked {
    let material = Material::preset("cotton").unwrap();
    let model = ClothModel::build(garment, UvScale::Auto, material.density).unwrap();
    let tris = model.triangles.clone();
    let edges: Vec<(usize, usize, f64)> = (tris.iter())
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a, b, (model.positions[a] - model.positions[b]).norm()))
        .collect();
    let start = model.positions.clone();
    let mut sim = Simulator::new(
        model,
        &material,
        &garment.pin,
        SolverParams::new(24.0, Vec3::y()),
    )
    .with_bodies(bodies, &material, 1.0, 24.0)
    .unwrap();
    let deepest = |x: &[Vec3], frame: f64| x.iter().map(|&p| inside(p, frame)).fold(0.0, f64::max);
    let mut baked = Baked {
        deepest_start: deepest(&start, 1.0),
        deepest_late: 0.0,
        worst_stretch: 0.0,
        steps_per_frame: 0.0,
        warnings: sim.initial_warnings(),
        crossings: (intersections(&start, &tris), 0),
    };
    let mut steps = 0;
    for frame in 2..=last {
        let stats = sim
            .advance(1.0 / 24.0)
            .unwrap_or_else(|e| panic!("frame {frame}: {e}"));
        steps += stats.steps;
        let x = sim.positions();
        let stretch = (edges.iter())
            .map(|&(a, b, rest)| (x[a] - x[b]).norm() / rest - 1.0)
            .fold(0.0, f64::max);
        baked.worst_stretch = baked.worst_stretch.max(stretch);
        if frame >= 10 {
            baked.deepest_late = baked.deepest_late.max(deepest(x, f64::from(frame)));
        }
    }
    baked.steps_per_frame = steps as f64 / f64::from(last - 1);
    baked.crossings.1 = intersections(sim.positions(), &tris);
    baked
}
