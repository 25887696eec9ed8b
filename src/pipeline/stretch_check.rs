//! Baraff's stretch check (§7): the stretch measures `(‖w_u‖, ‖w_v‖)` of the triangles
//! (eq. 9), how far a step made them jump, and the largest jump of a proposed step, whose
//! end measures an accepted step keeps as the next one's start.
use crate::forces::deformation::Deformation;
use crate::model::TriangleRest;
use crate::{parallel, Vec3};
use rayon::prelude::*;

/// Triangles per parallel task of [`largest_jump`] (scheduling only).
const CHUNK: usize = 512;

/// `(‖w_u‖, ‖w_v‖)` of every triangle (Baraff eq. 9, [`Deformation`]).
pub(super) fn stretch_measures(
    tris: &[[usize; 3]],
    rest: &[TriangleRest],
    x: &[Vec3],
) -> Vec<[f64; 2]> {
    tris.par_iter()
        .zip(rest.par_iter())
        .map(|(t, r)| stretch_measure(t, r, x))
        .collect()
}

/// `(‖w_u‖, ‖w_v‖)` of triangle `t` at positions `x`.
pub(super) fn stretch_measure(t: &[usize; 3], rest: &TriangleRest, x: &[Vec3]) -> [f64; 2] {
    let d = Deformation::new(&t.map(|i| x[i]), rest);
    [d.wu.norm(), d.wv.norm()]
}

/// The largest [`stretch_jump`] of the triangles `tris` over a step from `x` (altered by
/// `y` to `shifted = x + y`) to `x_new`, and every triangle's measures at `x_new`.
///
/// `start`, the measures at `x` if known (the end measures of the step that ended at `x`),
/// stand in for those at `x` and, for a triangle with no altered corner, at `shifted`
/// (where its corners are those of `x`): the check then evaluates each triangle once
/// instead of twice, and the next step's limit on added stretch
/// ([`super::stretch_limit`]) does not evaluate the start again. The values are the same
/// ones (the same function of the same corners).
pub(super) fn largest_jump(
    (tris, rest): (&[[usize; 3]], &[TriangleRest]),
    (x, y, shifted): (&[Vec3], &[Vec3], &[Vec3]),
    x_new: &[Vec3],
    start: Option<&[[f64; 2]]>,
) -> (f64, Vec<[f64; 2]>) {
    let mut ends = vec![[0.0; 2]; tris.len()];
    let mut partials = Vec::new();
    let jump_of = |k: usize, t: &[usize; 3], r: &TriangleRest, end: &mut [f64; 2]| {
        let altered = t.iter().any(|&i| y[i] != Vec3::zeros());
        let at_x = || start.map_or_else(|| stretch_measure(t, r, x), |s| s[k]);
        let from = match start {
            Some(s) if !altered => s[k],
            _ => stretch_measure(t, r, shifted),
        };
        *end = stretch_measure(t, r, x_new);
        stretch_jump(from, *end, || altered.then(at_x))
    };
    parallel::chunks(
        (&mut ends[..], tris, rest),
        CHUNK,
        &mut partials,
        |c, (ends, t, r)| {
            let mut m: f64 = 0.0;
            for (o, ((end, t), r)) in ends.iter_mut().zip(t).zip(r).enumerate() {
                m = m.max(jump_of(c * CHUNK + o, t, r, end));
            }
            m
        },
    );
    (partials.into_iter().fold(0.0, f64::max), ends)
}

/// How far a triangle's stretch `(‖w_u‖, ‖w_v‖)` jumped (Baraff §7) from `shifted` at the
/// altered start x₀ + y to `after` at the end of the step: the largest over the two
/// components of its [`stretch_excess`] from the altered start and, where a corner was
/// altered, from the start x₀ too (`unaltered`, `None` when no corner was), whichever is
/// smaller. A step jumped when this exceeds the limit for some triangle: from x₀ + y
/// alone, a contact's alteration that drags one corner several centimetres onto the body,
/// and the solve that then brings the rest along, would read as a jump although the step
/// ends near rest.
pub(super) fn stretch_jump(
    shifted: [f64; 2],
    after: [f64; 2],
    unaltered: impl FnOnce() -> Option<[f64; 2]>,
) -> f64 {
    let excess = |from: [f64; 2]| [0, 1].map(|k| stretch_excess(from[k], after[k]));
    let altered_start = excess(shifted);
    if altered_start == [0.0; 2] {
        return 0.0;
    }
    let per_component = match unaltered() {
        None => altered_start,
        Some(start) => {
            let from_start = excess(start);
            [0, 1].map(|k| altered_start[k].min(from_start[k]))
        }
    };
    per_component[0].max(per_component[1])
}

/// How far a stretch measure `after` (‖w_u‖ or ‖w_v‖ at the end of a step) lies outside
/// the range between its value `before` the step and rest (1): 0 for a triangle that relaxed
/// toward rest without passing it, the overshoot past rest for one that did, and the whole
/// change for one that moved away from rest. Baraff §7 rejects steps whose stretch changes
/// drastically because instability shows that way; a stiff stretch mode relaxing within one
/// step (a triangle compressed by a contact's position alteration springing back) is the
/// implicit integrator doing its job, and must not halve the step.
fn stretch_excess(before: f64, after: f64) -> f64 {
    let (lo, hi) = if before < 1.0 {
        (before, 1.0)
    } else {
        (1.0, before)
    };
    (lo - after).max(after - hi).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::{largest_jump, stretch_excess, stretch_jump, stretch_measures};
    use crate::fixtures::{sheet, SheetPins, SheetPlane, SheetSpec, SheetUv};
    use crate::model::{ClothModel, UvScale};
    use crate::Vec3;

    #[test]
    fn the_start_measures_kept_from_the_last_step_give_the_same_check() {
        let g = sheet(&SheetSpec {
            n: 9,
            size: 0.5,
            uv: SheetUv::Metres,
            pins: SheetPins::None,
            plane: SheetPlane::Horizontal,
            ..SheetSpec::default()
        });
        let m = ClothModel::build(&g, UvScale::Fixed(1.0), 0.1).unwrap();
        let wave = |i: usize, a: f64| {
            let k = i as f64;
            Vec3::new((0.7 * k).sin(), (1.3 * k).cos(), (0.4 * k).sin()) * a
        };
        let x: Vec<Vec3> = (m.positions.iter().enumerate())
            .map(|(i, p)| p + wave(i, 0.001))
            .collect();
        // Particle 40 lifted 3 cm by the step, all of it its alteration (a contact's push
        // out): no jump from the altered start, a large one from x alone.
        let lift = Vec3::new(0.0, 0.03, 0.0);
        let y: Vec<Vec3> = (0..m.len())
            .map(|i| if i == 40 { lift } else { Vec3::zeros() })
            .collect();
        let shifted: Vec<Vec3> = x.iter().zip(&y).map(|(x, y)| x + y).collect();
        let x_new: Vec<Vec3> = (shifted.iter().enumerate())
            .map(|(i, p)| p + wave(i + 7, 0.001))
            .collect();
        let tris = (&m.triangles[..], &m.rest[..]);
        let kept = stretch_measures(tris.0, tris.1, &x);
        let fresh = largest_jump(tris, (&x, &y, &shifted), &x_new, None);
        let reused = largest_jump(tris, (&x, &y, &shifted), &x_new, Some(&kept));
        assert_eq!(fresh, reused);
        assert_eq!(fresh.1, stretch_measures(tris.0, tris.1, &x_new));
        // Measures at x standing in for the altered triangles' start would see the lift.
        let zero = vec![Vec3::zeros(); m.len()];
        let from_x = largest_jump(tris, (&x, &zero, &x), &x_new, None);
        assert!(fresh.0 > 0.0 && fresh.0 < 0.02, "{}", fresh.0);
        assert!(from_x.0 > 0.1, "{}", from_x.0);
    }

    #[test]
    fn a_jump_must_show_from_both_the_start_and_the_altered_start() {
        let limit = 0.02;
        // (start at x₀ + y, end, start at x₀ if a corner was altered, a jump?)
        type Case = ([f64; 2], [f64; 2], Option<[f64; 2]>, bool);
        let cases: [Case; 5] = [
            // Moving away from rest with nothing altered: a jump.
            ([1.0, 1.0], [1.05, 1.0], None, true),
            // A corner dragged by an alteration (1.0 → 2.06 at x₀ + y) and the solve
            // bringing the triangle back to 1.01: no jump.
            ([1.0, 2.06], [1.0, 1.01], Some([1.0, 1.0]), false),
            // Compressed to 0.90 by the alteration, ending at 1.03 from 1.04 at x₀: 3% past
            // rest from x₀ + y, relaxation from x₀: no jump.
            ([0.90, 1.0], [1.03, 1.0], Some([1.04, 1.0]), false),
            // The same end from an unaltered start at rest: a jump.
            ([0.90, 1.0], [1.03, 1.0], Some([1.0, 1.0]), true),
            // Both starts must agree on the component: u jumps only from x₀ + y, v only
            // from x₀: no jump.
            ([0.95, 1.03], [1.03, 1.03], Some([1.03, 1.0]), false),
        ];
        for (shifted, after, unaltered, jumped) in cases {
            let jump = stretch_jump(shifted, after, || unaltered);
            assert_eq!(jump > limit, jumped, "{shifted:?} → {after:?}: {jump}");
        }
        // The measure itself: the larger component of the smaller excess of both starts.
        let jump = stretch_jump([0.95, 1.03], [1.03, 1.05], || Some([1.04, 1.0]));
        assert!((jump - 0.02).abs() < 1e-12, "{jump}");
        assert!((stretch_jump([1.0, 1.0], [0.99, 1.0], || None) - 0.01).abs() < 1e-12);
        assert_eq!(
            stretch_jump([0.9, 1.0], [0.95, 1.0], || panic!("not needed")),
            0.0
        );
    }

    #[test]
    fn stretch_excess_counts_only_motion_away_from_rest() {
        // Relaxing toward rest, from either side, is free.
        assert_eq!(stretch_excess(0.95, 0.99), 0.0);
        assert_eq!(stretch_excess(1.08, 1.01), 0.0);
        assert_eq!(stretch_excess(1.08, 1.0), 0.0);
        // Moving away from rest counts in full.
        assert!((stretch_excess(1.01, 1.05) - 0.04).abs() < 1e-12);
        assert!((stretch_excess(0.99, 0.96) - 0.03).abs() < 1e-12);
        assert!((stretch_excess(1.0, 0.97) - 0.03).abs() < 1e-12);
        // Passing rest counts by the overshoot.
        assert!((stretch_excess(0.95, 1.03) - 0.03).abs() < 1e-12);
        assert!((stretch_excess(1.10, 0.98) - 0.02).abs() < 1e-12);
    }
}
