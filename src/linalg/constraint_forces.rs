//! Constraint forces of Baraff §5.4: what each constraint of a modified PCG solve
//! ([`pcg`](super::pcg)) had to supply.
use super::pcg::Constraint;
use super::BlockCsr;
use crate::Vec3;

/// Constraint forces of §5.4: for each constraint, `(I − S_i)(A Δv − b)_i`.
///
/// ```text
/// e_i = (A Δv − b)_i = Σ_j A_ij Δv_j − b_i,    force_i = e_i − S_i e_i
/// ```
/// Only the constrained rows are multiplied (O(constraints · row length)). The entry `k`
/// of the result belongs to `constraints[k]`; it is the force (N·s, i.e. `h` times the
/// force in N) the constraint had to supply.
///
/// # Panics
/// If a constraint names a particle out of range or `b`, `dv` are shorter than `A`.
pub fn constraint_forces(
    a: &BlockCsr,
    b: &[Vec3],
    dv: &[Vec3],
    constraints: &[Constraint],
) -> Vec<Vec3> {
    assert_eq!(b.len(), a.n(), "constraint_forces: b has the wrong length");
    assert_eq!(
        dv.len(),
        a.n(),
        "constraint_forces: dv has the wrong length"
    );
    constraints
        .iter()
        .map(|k| {
            assert!(
                k.particle < a.n(),
                "constraint on particle {} of {}",
                k.particle,
                a.n()
            );
            let e = a.mul_row(k.particle, dv) - b[k.particle];
            e - k.filter * e
        })
        .collect()
}
