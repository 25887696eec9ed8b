//! Tests of the patch hierarchy and its cones and contours ([`super`]).
use super::*;
use crate::fixtures::{sheet, SheetPins, SheetPlane, SheetSpec};
use crate::model::{ClothModel, UvScale};

/// A horizontal sheet of `n × n` particles: its positions and triangles.
fn sheet_mesh(n: usize) -> (Vec<Vec3>, Vec<[usize; 3]>) {
    let g = sheet(&SheetSpec {
        n,
        size: 1.0,
        plane: SheetPlane::Horizontal,
        pins: SheetPins::None,
        ..SheetSpec::default()
    });
    let model = ClothModel::build(&g, UvScale::Auto, 0.1).unwrap();
    (model.positions, model.triangles)
}

/// The directed edges of `tris` whose reverse none of them holds, sorted.
fn boundary_of(tris: &[[usize; 3]]) -> Vec<(usize, usize)> {
    let edges: Vec<(usize, usize)> = (tris.iter())
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .collect();
    let mut open: Vec<(usize, usize)> = (edges.iter())
        .filter(|&&(a, b)| !edges.contains(&(b, a)))
        .copied()
        .collect();
    open.sort_unstable();
    open
}

#[test]
fn every_patch_is_a_disc_whose_boundary_is_kept() {
    // One sheet, and two sheets side by side (two pieces: two roots).
    let (_, one) = sheet_mesh(9);
    let two: Vec<[usize; 3]> = (one.iter().copied())
        .chain(one.iter().map(|t| t.map(|p| p + 81)))
        .collect();
    for (tris, roots) in [(one, 1), (two, 2)] {
        let tree = Tree::build(&tris);
        assert_eq!(tree.roots.len(), roots);
        let mut order = tree.order.clone();
        order.sort_unstable();
        assert_eq!(
            order,
            (0..tris.len()).collect::<Vec<_>>(),
            "each triangle once"
        );
        let mut tested = 0;
        for (n, node) in tree.nodes.iter().enumerate() {
            let mine: Vec<[usize; 3]> = tree.order[node.triangles.clone()]
                .iter()
                .map(|&t| tris[t])
                .collect();
            if let Some((l, r)) = node.children {
                assert!(l < n && r < n, "children first");
                let (a, b) = (&tree.nodes[l].triangles, &tree.nodes[r].triangles);
                assert_eq!(
                    (a.start, a.end, b.end),
                    (node.triangles.start, b.start, node.triangles.end)
                );
            }
            // A disc: V − E + F = 1, and the boundary one loop through distinct particles.
            let mut vertices: Vec<usize> = mine.iter().flatten().copied().collect();
            vertices.sort_unstable();
            vertices.dedup();
            let mut undirected: Vec<(usize, usize)> = (mine.iter())
                .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
                .map(|(a, b)| (a.min(b), a.max(b)))
                .collect();
            undirected.sort_unstable();
            undirected.dedup();
            assert_eq!(
                vertices.len() + mine.len(),
                undirected.len() + 1,
                "patch {n}"
            );
            let open = boundary_of(&mine);
            let starts: Vec<usize> = open.iter().map(|e| e.0).collect();
            assert!(starts.windows(2).all(|w| w[0] != w[1]), "patch {n} pinched");
            if tree.kinds[n] != Kind::Small {
                let mut kept = tree.edges[node.boundary.clone()].to_vec();
                kept.sort_unstable();
                assert_eq!(kept, open, "patch {n}");
                tested += 1;
            } else {
                assert!(node.boundary.is_empty());
            }
        }
        assert!(tested > 10);
    }
}

#[test]
fn a_cone_holds_every_normal_of_its_patch_over_the_step() {
    let (rest, tris) = sheet_mesh(13);
    // Waves that grow, turn and move during the step.
    let wave = |a: f64, k: f64| -> Vec<Vec3> {
        (rest.iter())
            .map(|p| {
                p + Vec3::new(
                    0.1 * a * (k * p.z).sin(),
                    a * (k * p.x).sin() * (3.0 * p.z).cos(),
                    0.0,
                )
            })
            .collect()
    };
    let (x0, x1) = (wave(0.05, 4.0), wave(0.12, 6.0));
    let mut patches = Patches::new(&tris, Vec::new(), rest.len());
    patches.update(&tris, &x0, &x1);
    let tree = &patches.tree;
    let mut culling = 0;
    for (n, node) in tree.nodes.iter().enumerate() {
        let cone = patches.cones[n];
        if tree.kinds[n] == Kind::Small || !cone.culls() {
            continue;
        }
        culling += 1;
        for &t in &tree.order[node.triangles.clone()] {
            let [a, b, c] = tris[t];
            for k in 0..=20 {
                let tau = k as f64 / 20.0;
                let x = |p: usize| x0[p] + tau * (x1[p] - x0[p]);
                let normal = (x(b) - x(a)).cross(&(x(c) - x(a))).normalize();
                assert!(
                    normal.dot(&cone.axis) >= cone.cos - 1e-12,
                    "patch {n} at τ = {tau}"
                );
            }
        }
    }
    assert!(culling > 10, "{culling} cones narrow enough to test");
}

#[test]
fn a_contour_that_winds_twice_or_turns_back_is_not_star_shaped() {
    // A square around the origin, counter-clockwise about +z, and its particles.
    let square = [
        Vec3::new(1.0, -1.0, 0.0),
        Vec3::new(1.0, 1.0, 0.0),
        Vec3::new(-1.0, 1.0, 0.0),
        Vec3::new(-1.0, -1.0, 0.0),
    ];
    let mut x: Vec<Vec3> = square.to_vec();
    let once = [(0, 1), (1, 2), (2, 3), (3, 0)];
    assert!(star_shaped(&once, Vec3::z(), &x, &x));
    // Seen from below, the same loop turns clockwise.
    assert!(!star_shaped(&once, -Vec3::z(), &x, &x));
    // Twice around (a second square, the loop through both).
    x.extend(square.map(|p| 1.5 * p));
    let twice = [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (5, 6),
        (6, 7),
        (7, 0),
    ];
    assert!(!star_shaped(&twice, Vec3::z(), &x, &x));
    // Star-shaped at both ends of the step, turned half a turn, but the corners meet in
    // the middle on the way (each passes the centre at τ = ½): only the quadratic in τ,
    // not its ends, shows it.
    let x0 = square.to_vec();
    let x1: Vec<Vec3> = square.iter().map(|p| -p).collect();
    assert!(star_shaped(&once, Vec3::z(), &x0, &x0));
    assert!(star_shaped(&once, Vec3::z(), &x1, &x1));
    assert!(!star_shaped(&once, Vec3::z(), &x0, &x1));
}
