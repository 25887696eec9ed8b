//! The plan's construction.
use super::*;
use crate::linalg::tests::{grid_hinges, grid_triangles, Rng};

/// Extending the plan of a 2,500-particle grid's triangles and hinges (two ranges of
/// the split) by springs of four particles anywhere, some within a range and some
/// across, gives the plan built from scratch: pattern, slots, splits, diagonal.
#[test]
fn extended_plan_is_the_plan_of_all_sets() {
    let (nx, ny) = (50, 50);
    let n = nx * ny;
    let base = [grid_triangles(nx, ny), grid_hinges(nx, ny)];
    let plan = AssemblyPlan::new(n, &base);
    let mut rng = Rng::new(7);
    for count in [1, 40, 400] {
        let nodes: Vec<usize> = (0..count)
            .flat_map(|e| {
                let p = rng.below(n);
                // Every other spring local (within a few rows), the rest anywhere.
                let near = |rng: &mut Rng| (p + rng.below(3 * nx)).min(n - 1);
                if e % 2 == 0 {
                    [p, near(&mut rng), near(&mut rng), near(&mut rng)]
                } else {
                    [p, rng.below(n), rng.below(n), rng.below(n)]
                }
            })
            .collect();
        let springs = ElementSet { arity: 4, nodes };
        let extended = plan.extended(&springs);
        let mut all = base.to_vec();
        all.push(springs);
        let fresh = AssemblyPlan::new(n, &all);
        assert!(
            extended.pattern.nnz() > plan.pattern.nnz(),
            "{count} springs couple"
        );
        assert_eq!(extended.pattern, fresh.pattern, "{count} springs");
        assert_eq!(extended.sets, fresh.sets, "{count} springs");
        assert_eq!(extended.diagonal_slots, fresh.diagonal_slots);
        assert_eq!(extended.shapes, fresh.shapes);
    }
}
