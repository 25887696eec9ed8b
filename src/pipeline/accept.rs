//! The checks that accept or reject a proposed step (Baraff §7): non-finite values, a
//! stretch jump, a particle ending inside a body, the cloth passing through itself; and
//! the limit on the stretch a step adds ([`super::stretch_limit`]), which turns some
//! rejections into acceptances.
use super::stretch_check::largest_jump;
use super::stretch_limit::Settle;
use super::{Rejection, Simulator};
use crate::collision::layers::NearbyCloth;
use crate::collision::BodyContacts;
use crate::{parallel, Vec3};
use std::time::Instant;

impl Simulator {
    /// Proposes `v₁ = v₀ + Δv`, `x₁ = x₀ + h v₁ + y`; accepts it unless a triangle's
    /// stretch jumps (Baraff §7), a value is not finite, a particle ends inside a body, or a
    /// particle passes through the cloth (unless `tolerate_crossing`). Returns whether an
    /// accepted step had a crossing.
    ///
    /// `hs` is the step of the position update (`h`, or BDF2's `2h/3`, which also adds its
    /// history η: `x₁ = x₀ + η + hs v₁ + y`); the clock advances by `h`.
    pub(super) fn check_and_advance(
        &mut self,
        h: f64,
        hs: f64,
        tolerate_crossing: bool,
    ) -> Result<bool, Rejection> {
        let mut x_new = vec![Vec3::zeros(); self.state.x.len()];
        let eta = self.integrator.bdf2_terms().map(|t| &t.eta[..]);
        let (x, v, dv, y) = (
            &self.state.x,
            &self.state.v,
            &self.scratch.dv,
            &self.scratch.y,
        );
        parallel::fill(&mut x_new, PARTICLE_CHUNK, |i| {
            let moved = x[i] + hs * (v[i] + dv[i]) + y[i];
            eta.map_or(moved, |eta| moved + eta[i])
        });
        // The limit only turns a rejection into an acceptance: a limited step that fails
        // its check is judged again as the solve left it, so that a limit that passes
        // cloth through cloth at every step size cannot make the smallest step accept the
        // crossing.
        if !tolerate_crossing {
            if let Some((x_lim, v_lim)) = self.limit_added_stretch(hs, &x_new) {
                if let Ok(crossed) = self.check_and_commit(x_lim, Some(v_lim), h, false) {
                    return Ok(crossed);
                }
            }
        }
        self.check_and_commit(x_new, None, h, tolerate_crossing)
    }

    /// The solve's end `proposed` with the triangles whose stretch the step grew by more
    /// than [`LIMITED_TO`] of the limit pulled back ([`super::stretch_limit`]), and the
    /// velocities `v₀ + Δv + δx/hs` that go with it; `None`
    /// when no triangle needed it, the limit is off ([`SolverParams::stretch_sweeps`] 0,
    /// no stretch check), the cloth touches no body or the run is keyframe control's (its
    /// uncontrolled run that plans the steps, recorded and replayed runs).
    ///
    /// [`SolverParams::stretch_sweeps`]: super::SolverParams::stretch_sweeps
    fn limit_added_stretch(
        &mut self,
        hs: f64,
        proposed: &[Vec3],
    ) -> Option<(Vec<Vec3>, Vec<Vec3>)> {
        let limit = self.params.max_stretch_change;
        if self.params.stretch_sweeps == 0
            || self.collision.contacts.contacts.is_empty()
            || !self.run.is_plain()
            || !limit.is_finite()
            || !self.integrator.checks_stretch_jumps()
        {
            return None;
        }
        let allow = LIMITED_TO * limit;
        let bound = super::stretch_limit::bounds(&self.stretch_at_start(), allow);
        // Cloth within a body's thickness of it is the contact handling's: the limit holds
        // it where the solve left it (moved, cloth swept by a fast limb can end inside the
        // limb a few steps later). So is cloth near cloth, self-collision's: the particles
        // of the triangles around one with a repulsion spring (not only the particles with
        // springs: layers lying on each other would be pushed through each other later),
        // or held for a pull that crossed cloth this frame, and every particle with a
        // position alteration.
        // Built on the first question, so not in the (most) steps that need no sweep.
        let near_cloth = std::cell::OnceCell::new();
        let near_cloth = || {
            near_cloth.get_or_init(|| {
                let mut near = Vec::new();
                if self.collision.self_collision.is_some() {
                    let layers = NearbyCloth::new(proposed.len(), self.scratch.system.repulsions());
                    let layers = layers.holding(&self.collision.held);
                    near = (0..proposed.len()).map(|i| layers.near(i)).collect();
                    super::stretch_limit::spread(&self.model, &mut near);
                }
                near
            })
        };
        let (bodies, y) = (&self.collision.bodies, &self.scratch.y);
        let hold = |i: usize| {
            near_cloth().get(i).is_some_and(|&n| n)
                || y[i] != Vec3::zeros()
                || BodyContacts::near(bodies, proposed[i], NEAR_BODY)
        };
        let mut x_lim = proposed.to_vec();
        let limited = self.scratch.stretch_limit.apply(
            &self.model,
            &bound,
            &self.scratch.constraints,
            hold,
            Settle {
                tolerance: LIMIT_TOLERANCE * allow,
                max_sweeps: self.params.stretch_sweeps,
            },
            &mut x_lim,
        );
        // Sweeps that do not settle mean more than a turning edge: the step is judged
        // as the solve left it.
        if limited.violating == 0 || !limited.converged {
            return None;
        }
        let (v, dv) = (&self.state.v, &self.scratch.dv);
        let mut v_new = vec![Vec3::zeros(); v.len()];
        parallel::fill(&mut v_new, PARTICLE_CHUNK, |i| {
            v[i] + dv[i] + (x_lim[i] - proposed[i]) / hs
        });
        Some((x_lim, v_new))
    }

    /// Accepts the proposed positions `x_new` and velocities (`v_new`, or `v₀ + Δv` when
    /// `None`) unless a value is not finite, a triangle's stretch jumps (Baraff §7; not for
    /// the explicit, projective and preview integrators, see
    /// [`super::integrators::IntegratorState::checks_stretch_jumps`]), a particle ends
    /// inside a body, or a particle passes through the cloth (unless `tolerate_crossing`).
    /// Returns whether an accepted step had a crossing.
    ///
    /// The crossing check follows each particle from `x₀ + y` to `x₁`, except that a
    /// particle in body contact starts at `x₀`: its alteration `y = (τ − d₀) n` (§6.2) can
    /// pull it down onto the body through cloth already lying there, and such a step is
    /// rejected. It is retried smaller, and the particles of the crossing pairs that their
    /// contact pulled down are held (`Simulator::held`) for the rest of the frame: their
    /// contacts only push out ([`NearbyCloth::holding`]). Shrinking the step alone does not
    /// shrink that alteration: a pull-down onto a layer too far under the particle for a
    /// repulsion spring to tell would put two layers in one plane at every step size.
    pub(super) fn check_and_commit(
        &mut self,
        x_new: Vec<Vec3>,
        v_new: Option<Vec<Vec3>>,
        h: f64,
        tolerate_crossing: bool,
    ) -> Result<bool, Rejection> {
        let finite = |p: &Vec3| p.iter().all(|c| c.is_finite());
        if !x_new.iter().all(finite) || !v_new.as_ref().is_none_or(|v| v.iter().all(finite)) {
            self.note_trouble(&Rejection::Stretch, &x_new, h);
            return Err(Rejection::Stretch);
        }
        // A replayed schedule already reflects where the stretch was hard (see [`schedule`]).
        let limit = if self.run.replaying() || !self.integrator.checks_stretch_jumps() {
            f64::INFINITY
        } else {
            self.params.max_stretch_change
        };
        // Position alteration (§6.2) is a deliberate displacement, and the check judges
        // the solve's own motion: a jump is a change beyond the limit from both the start
        // x₀ and the altered start x₀ + y (see [`stretch_jump`]).
        let shifted: Vec<Vec3> = self
            .state
            .x
            .iter()
            .zip(&self.scratch.y)
            .map(|(x, y)| x + y)
            .collect();
        let (tris, rest) = (&self.model.triangles[..], &self.model.rest[..]);
        let (jump, ends) = if limit.is_finite() {
            let (jump, ends) = largest_jump(
                (tris, rest),
                (&self.state.x, &self.scratch.y, &shifted),
                &x_new,
                self.state.stretch_at_x.as_deref(),
            );
            (jump, Some(ends))
        } else {
            (0.0, None)
        };
        if jump > limit {
            self.note_trouble(&Rejection::Stretch, &x_new, h);
            return Err(Rejection::Stretch);
        }
        let mut crossed = false;
        if let Some(sc) = &mut self.collision.self_collision {
            let clock = Instant::now();
            // The path of a body contact starts before its alteration: `y = (τ − d₀) n`
            // also pulls a particle approaching the body down onto it, and in a pile of
            // cloth on the floor that can pass through the layer already lying there.
            // (A self-collision alteration is itself the repair of a crossing, so the
            // path starts after it.)
            let mut start = shifted;
            for c in &self.collision.contacts.contacts {
                start[c.particle] = self.state.x[c.particle];
            }
            let crossing = sc.crossings(&start, &x_new);
            self.diagnostics.collision_time[1] += clock.elapsed().as_secs_f64();
            if !crossing.is_empty() {
                if !tolerate_crossing {
                    // Retried smaller, and for the rest of the frame the particles of the
                    // crossing pairs that their body contact pulled down are not pulled
                    // down again: of all a step does, that alteration alone does not
                    // shrink with the step.
                    let pulled = (self.collision.contacts.contacts.iter()).filter(|c| {
                        c.y.dot(&c.normal) < 0.0 && crossing.binary_search(&c.particle).is_ok()
                    });
                    self.collision.held.extend(pulled.map(|c| c.particle));
                    self.collision.held.sort_unstable();
                    self.collision.held.dedup();
                    self.note_crossing(&crossing);
                    return Err(Rejection::SelfCrossing);
                }
                crossed = true;
            }
        }
        if !self.collision.bodies.is_empty() {
            let clock = Instant::now();
            let overlaps = &self.collision.contacts.overlaps;
            let (bodies, pinned) = (&self.collision.bodies, &self.drive.pinned);
            let after = BodyContacts::max_penetration(bodies, &x_new, overlaps, |i| !pinned[i]);
            // Pins go where they are led, also into a body (a waist ring bound inside the
            // hips), and pull the cloth around them in: free cloth may go as deep as they.
            let pins = BodyContacts::max_penetration(bodies, &x_new, overlaps, |i| pinned[i]);
            let worse = after > 0.1 && after > self.max_penetration().max(pins);
            self.diagnostics.collision_time[0] += clock.elapsed().as_secs_f64();
            if worse {
                self.note_trouble(&Rejection::Contact, &x_new, h);
                return Err(Rejection::Contact);
            }
        }
        match v_new {
            Some(v) => {
                for ((a, v0), v1) in self.state.accel.iter_mut().zip(&self.state.v).zip(&v) {
                    *a = (v1 - v0) / h;
                }
                self.state.v = v;
            }
            // Pinned particles: Δv = z exactly (S = 0), so a pin at rest keeps v = 0 exactly.
            None => {
                for ((v, a), dv) in self
                    .state
                    .v
                    .iter_mut()
                    .zip(&mut self.state.accel)
                    .zip(&self.scratch.dv)
                {
                    *v += dv;
                    *a = dv / h;
                }
            }
        }
        self.state.x = x_new;
        self.state.stretch_at_x = ends;
        self.state.time += h;
        self.diagnostics.last_jump = if limit.is_finite() { jump / limit } else { 0.0 };
        Ok(crossed)
    }
}

/// Share of [`super::SolverParams::max_stretch_change`] that the stretch a step adds is
/// limited to. A step that needed the limit thus reports a jump of just over
/// [`super::step_control::GROW_BELOW`] (also ½) and is not followed by a doubled one.
const LIMITED_TO: f64 = 0.5;

/// Distance from a body, in its thicknesses, within which the limit does not move cloth.
const NEAR_BODY: f64 = 1.0;

/// Share of the allowed change by which a limited triangle may still exceed it.
const LIMIT_TOLERANCE: f64 = 0.02;

/// Particles (or triangles) per parallel task of the position update and the stretch
/// check (scheduling only: element-wise work, maxima).
const PARTICLE_CHUNK: usize = 512;
