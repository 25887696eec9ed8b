//! The stages of one step shared by the integrators (module doc of [`super`]): sampling
//! the bodies, detecting body contacts and self-contacts, and the step of the
//! integrators that solve the linearised system of Baraff's eq. 18 (implicit, BDF2,
//! preview), with its dispatch to the others ([`super::integrators`]), and the checks
//! that accept or reject a proposed step (Baraff §7).
use super::stretch_check::largest_jump;
use super::stretch_limit::Settle;
use super::{integrators, FrameStats, Integrator, Rejection, Simulator};
use crate::collision::layers::NearbyCloth;
use crate::collision::BodyContacts;
use crate::forces::JacobianMode;
use crate::linalg::constraint_forces::constraint_forces;
use crate::{parallel, Vec3};
use std::time::Instant;

impl Simulator {
    /// One implicit step of size `h`; on success the state is advanced. The system is
    /// built with Baraff's Jacobians ([`JacobianMode::System`]); if the PCG meets
    /// non-positive curvature there (an indefinite system under large shear or folds), it is
    /// rebuilt with the positive definite [`JacobianMode::Definite`] ones and solved again.
    pub(super) fn step(&mut self, h: f64, stats: &mut FrameStats) -> Result<(), Rejection> {
        match self.params.integrator {
            Integrator::Implicit | Integrator::Bdf2 | Integrator::Preview => {
                self.step_linearised(h, stats)
            }
            Integrator::Explicit => self.step_explicit(h, stats),
            Integrator::Projective => self.step_projective(h, stats),
        }
    }

    /// One step of the integrators that solve the linearised system of eq. 18:
    /// [`Integrator::Implicit`] (PCG), [`Integrator::Bdf2`] (the same system with `h → 2h/3`
    /// and BDF2's right side, [`integrators::bdf2`]) and [`Integrator::Preview`] (a few
    /// Jacobi sweeps, [`integrators::preview`]).
    pub(super) fn step_linearised(
        &mut self,
        h: f64,
        stats: &mut FrameStats,
    ) -> Result<(), Rejection> {
        let f1 = self.sample_bodies(h);
        self.constraints.clear();
        // BDF2 with a history of the same step size: the system's step is 2h/3.
        let hs = self.begin_bdf2(h);
        match &self.integ.bdf2 {
            None => {
                self.pins
                    .constrain(&self.x, &self.v, h, f1, &self.bodies, &mut self.constraints)
            }
            Some(t) => self.pins.constrain(
                &t.base,
                &self.v,
                hs,
                f1,
                &self.bodies,
                &mut self.constraints,
            ),
        }
        self.detect_collisions(h, stats);
        self.finish_bdf2_terms();
        let result = if self.params.integrator == Integrator::Preview {
            self.solve_preview(hs)
        } else {
            // A replayed schedule (keyframe control) solves with the definite Jacobians
            // from the start: the fallback below is a switch that would make the
            // trajectory jump under small changes of the control forces.
            let first = if self.replaying {
                JacobianMode::Definite
            } else {
                JacobianMode::System
            };
            let mut result = self.solve(hs, first);
            stats.cg_iterations += result.iterations;
            if first == JacobianMode::System
                && !result.converged
                && result.iterations < self.params.cg_max_iterations
            {
                stats.definite_fallbacks += 1;
                result = self.solve(hs, JacobianMode::Definite);
                stats.cg_iterations += result.iterations;
            }
            result
        };
        if !result.converged {
            return Err(Rejection::Solve);
        }
        let record = self.tape.is_some().then(|| self.record(h));
        if !self.contacts.contacts.is_empty() {
            let all = constraint_forces(
                &self.system.matrix,
                &self.system.rhs,
                &self.dv,
                &self.constraints,
            );
            let pins = self.constraints.len() - self.contacts.contacts.len();
            self.impulses = all[pins..].to_vec();
        }
        let tolerate_crossing = h <= self.params.max_step / 256.0;
        let (x0, v0) = (self.integ.keeps_history())
            .then(|| (self.x.clone(), self.v.clone()))
            .unzip();
        let crossed = if self.params.integrator == Integrator::Preview {
            self.limit_and_advance(h, tolerate_crossing)?
        } else {
            self.check_and_advance(h, hs, tolerate_crossing)?
        };
        if crossed {
            stats.self_crossings += 1;
        }
        if let (Some(x0), Some(v0)) = (x0, v0) {
            self.integ.remember(x0, v0, h);
        }
        self.remember_contacts(hs);
        if let (Some(tape), Some(r)) = (&mut self.tape, record) {
            tape.push(r);
        }
        stats.max_residual = stats.max_residual.max(result.relative_residual);
        Ok(())
    }

    /// Samples the bodies for a step of `h` from now (Baraff §6); returns the frame number
    /// at the step's end.
    pub(super) fn sample_bodies(&mut self, h: f64) -> f64 {
        let (start, fps) = self.clock;
        let (f0, f1) = (start + self.time * fps, start + (self.time + h) * fps);
        for b in &mut self.bodies {
            b.advance_to(f0, f1);
        }
        f1
    }

    /// After an accepted step: contact forces `impulses` (N·s over a step `h`, §5.4) decide
    /// release and friction next step; self-collision remembers the accepted state.
    pub(super) fn remember_contacts(&mut self, h: f64) {
        if !self.bodies.is_empty() {
            self.contacts.remember(&self.impulses, &self.v, h);
        }
        if let Some(sc) = &mut self.self_collision {
            sc.accept();
        }
    }

    /// Resets `y`, then finds this step's body contacts (constraints appended to
    /// `constraints`, alterations in `y`) and cloth self-contacts (repulsion springs in the
    /// system, alterations in `y` for free particles).
    pub(super) fn detect_collisions(&mut self, h: f64, stats: &mut FrameStats) {
        // Self-contacts first: the body contacts read which particles have cloth within
        // the repulsion distance (`Simulator::detect_contacts`).
        let mut alterations = Vec::new();
        if let Some(sc) = &mut self.self_collision {
            let clock = Instant::now();
            let (repulsions, found) = sc.detect(&self.x);
            alterations = found;
            stats.self_contacts = stats.self_contacts.max(repulsions.len());
            let d = sc.distance;
            self.system.set_repulsions(repulsions, d);
            self.collision_time[1] += clock.elapsed().as_secs_f64();
        }
        self.detect_body_collisions(h);
        for (i, y) in alterations {
            // Pins and body contacts keep their own exact targets.
            if !self.pinned[i] && self.y[i] == Vec3::zeros() {
                self.y[i] = y;
            }
        }
    }

    /// Clears the position alteration and finds the body contacts of this step (timed as
    /// cloth–solid work); the body part of [`Simulator::detect_collisions`].
    pub(super) fn detect_body_collisions(&mut self, h: f64) {
        self.y.iter_mut().for_each(|y| *y = Vec3::zeros());
        if !self.bodies.is_empty() {
            let clock = Instant::now();
            self.detect_contacts(h);
            self.collision_time[0] += clock.elapsed().as_secs_f64();
        }
    }

    /// Samples the bodies for a step of `h` and clears the constraints; returns where the
    /// pinned particles must be at its end. The start of the integrators that place pins
    /// directly instead of constraining a solve (explicit, projective).
    pub(super) fn begin_pinned_step(&mut self, h: f64) -> Vec<(usize, Vec3)> {
        let f1 = self.sample_bodies(h);
        self.constraints.clear();
        self.pins.targets(&self.x, f1, &self.bodies)
    }

    /// Finds contacts with the bodies (sampled for this step, Baraff §6) and turns them into
    /// constraints and position alterations.
    pub(super) fn detect_contacts(&mut self, h: f64) {
        // The cloth near each particle: this step's self-contact springs under
        // `detect_collisions`, the last step's otherwise.
        let layers = NearbyCloth::new(self.x.len(), self.system.repulsions()).holding(&self.held);
        self.contacts.detect(
            &self.bodies,
            &self.x,
            &self.v,
            &self.pinned,
            &layers,
            h,
            self.params.gravity,
            Some(&self.accel),
        );
        // Pulls down onto cloth too far below for a spring to tell (collision::layers):
        // such a contact only pushes out, as one over cloth.
        if let Some(sc) = &mut self.self_collision {
            let pulls = self
                .contacts
                .pulls(&self.x, PULL_CHECKED_FROM * sc.distance);
            let blocked = sc.pulls_onto_cloth(&self.x, &pulls);
            self.contacts.push_only(&blocked);
        }
        self.contacts
            .constrain(&self.v, &mut self.constraints, &mut self.y);
    }

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
        let mut x_new = vec![Vec3::zeros(); self.x.len()];
        let eta = self.integ.bdf2.as_ref().map(|t| &t.eta[..]);
        let (x, v, dv, y) = (&self.x, &self.v, &self.dv, &self.y);
        parallel::fill(&mut x_new, PARTICLE_CHUNK, |i| {
            let moved = x[i] + hs * (v[i] + dv[i]) + y[i];
            eta.map_or(moved, |eta| moved + eta[i])
        });
        // The limit only turns a rejection into an acceptance: a limited step that fails
        // its check is judged again as the solve left it. (Limited steps of the floor
        // pile-up of tests/self_collision.rs passed cloth through cloth at every step
        // size, and the smallest then accepted the crossing.)
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
        let controlled = self.tape.is_some() || self.replay.is_some() || self.step_log.is_some();
        if self.params.stretch_sweeps == 0
            || self.contacts.contacts.is_empty()
            || controlled
            || !limit.is_finite()
            || !integrators::checks_stretch_jumps(self.params.integrator)
        {
            return None;
        }
        let allow = LIMITED_TO * limit;
        let bound = super::stretch_limit::bounds(&self.stretch_at_start(), allow);
        // Cloth within a body's thickness of it is the contact handling's: the limit holds
        // it where the solve left it. (Moved, the curtain swept by a fast limb in
        // tests/collisions.rs ended 0.73 of the thickness inside the limb a few steps
        // later; held within two thicknesses, the 10,000-vertex sheet on a sphere took 6%
        // more instructions.) So is cloth near cloth, self-collision's: the particles of
        // the triangles around one with a repulsion spring, or held for a pull that
        // crossed cloth this frame, and every particle with a position alteration.
        // (Holding only the particles with springs, later steps of the floor pile-up of
        // tests/self_collision.rs passed layers through each other down to the smallest
        // step; holding none, from frame 10.)
        // Built on the first question, so not in the (most) steps that need no sweep.
        let near_cloth = std::cell::OnceCell::new();
        let near_cloth = || {
            near_cloth.get_or_init(|| {
                let mut near = Vec::new();
                if self.self_collision.is_some() {
                    let layers = NearbyCloth::new(proposed.len(), self.system.repulsions());
                    let layers = layers.holding(&self.held);
                    near = (0..proposed.len()).map(|i| layers.near(i)).collect();
                    super::stretch_limit::spread(&self.model, &mut near);
                }
                near
            })
        };
        let (bodies, y) = (&self.bodies, &self.y);
        let hold = |i: usize| {
            near_cloth().get(i).is_some_and(|&n| n)
                || y[i] != Vec3::zeros()
                || BodyContacts::near(bodies, proposed[i], NEAR_BODY)
        };
        let mut x_lim = proposed.to_vec();
        let limited = self.stretch_limit.apply(
            &self.model,
            &bound,
            &self.constraints,
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
        let (v, dv) = (&self.v, &self.dv);
        let mut v_new = vec![Vec3::zeros(); v.len()];
        parallel::fill(&mut v_new, PARTICLE_CHUNK, |i| {
            v[i] + dv[i] + (x_lim[i] - proposed[i]) / hs
        });
        Some((x_lim, v_new))
    }

    /// Accepts the proposed positions `x_new` and velocities (`v_new`, or `v₀ + Δv` when
    /// `None`) unless a value is not finite, a triangle's stretch jumps (Baraff §7; not for
    /// the explicit, projective and preview integrators, see
    /// `integrators::checks_stretch_jumps`), a
    /// particle ends inside a body, or a particle passes through the cloth (unless
    /// `tolerate_crossing`). Returns whether an accepted step had a crossing.
    ///
    /// The crossing check follows each particle from `x₀ + y` to `x₁`, except that a
    /// particle in body contact starts at `x₀`: its alteration `y = (τ − d₀) n` (§6.2) can
    /// pull it down onto the body through cloth already lying there, and such a step is
    /// rejected. It is retried smaller, and the particles of the crossing pairs that their
    /// contact pulled down are held (`Simulator::held`) for the rest of the frame: their
    /// contacts only push out ([`NearbyCloth::holding`]). Shrinking the step alone does not
    /// shrink that alteration: the pull-down onto a layer 2.8 mm under the particle, too
    /// far for a repulsion spring to tell, put two layers of the floor pile-up of
    /// tests/self_collision.rs in one plane, and at least 2 of its 13 solver settings
    /// accepted a crossing at the smallest step before the hold.
    pub(super) fn check_and_commit(
        &mut self,
        x_new: Vec<Vec3>,
        v_new: Option<Vec<Vec3>>,
        h: f64,
        tolerate_crossing: bool,
    ) -> Result<bool, Rejection> {
        let finite = |p: &Vec3| p.iter().all(|c| c.is_finite());
        if !x_new.iter().all(finite) || !v_new.as_ref().is_none_or(|v| v.iter().all(finite)) {
            return Err(Rejection::Stretch);
        }
        // A replayed schedule already reflects where the stretch was hard (see [`schedule`]).
        let limit = if self.replaying || !integrators::checks_stretch_jumps(self.params.integrator)
        {
            f64::INFINITY
        } else {
            self.params.max_stretch_change
        };
        // Position alteration (§6.2) is a deliberate displacement, and the check judges
        // the solve's own motion: a jump is a change beyond the limit from both the start
        // x₀ and the altered start x₀ + y (see [`stretch_jump`]).
        let shifted: Vec<Vec3> = self.x.iter().zip(&self.y).map(|(x, y)| x + y).collect();
        let (tris, rest) = (&self.model.triangles[..], &self.model.rest[..]);
        let (jump, ends) = if limit.is_finite() {
            let (jump, ends) = largest_jump(
                (tris, rest),
                (&self.x, &self.y, &shifted),
                &x_new,
                self.stretch_at_x.as_deref(),
            );
            (jump, Some(ends))
        } else {
            (0.0, None)
        };
        if jump > limit {
            return Err(Rejection::Stretch);
        }
        let mut crossed = false;
        if let Some(sc) = &mut self.self_collision {
            let clock = Instant::now();
            // The path of a body contact starts before its alteration: `y = (τ − d₀) n`
            // also pulls a particle approaching the body down onto it, and in a pile of
            // cloth on the floor that can pass through the layer already lying there.
            // (A self-collision alteration is itself the repair of a crossing, so the
            // path starts after it.)
            let mut start = shifted;
            for c in &self.contacts.contacts {
                start[c.particle] = self.x[c.particle];
            }
            let crossing = sc.crossings(&start, &x_new);
            self.collision_time[1] += clock.elapsed().as_secs_f64();
            if !crossing.is_empty() {
                if !tolerate_crossing {
                    // Retried smaller, and for the rest of the frame the particles of the
                    // crossing pairs that their body contact pulled down are not pulled
                    // down again: of all a step does, that alteration alone does not
                    // shrink with the step.
                    let pulled = (self.contacts.contacts.iter()).filter(|c| {
                        c.y.dot(&c.normal) < 0.0 && crossing.binary_search(&c.particle).is_ok()
                    });
                    self.held.extend(pulled.map(|c| c.particle));
                    self.held.sort_unstable();
                    self.held.dedup();
                    return Err(Rejection::SelfCrossing);
                }
                crossed = true;
            }
        }
        if !self.bodies.is_empty() {
            let clock = Instant::now();
            let after = BodyContacts::max_penetration(&self.bodies, &x_new);
            let worse = after > 0.1 && after > self.max_penetration();
            self.collision_time[0] += clock.elapsed().as_secs_f64();
            if worse {
                return Err(Rejection::Contact);
            }
        }
        match v_new {
            Some(v) => {
                for ((a, v0), v1) in self.accel.iter_mut().zip(&self.v).zip(&v) {
                    *a = (v1 - v0) / h;
                }
                self.v = v;
            }
            // Pinned particles: Δv = z exactly (S = 0), so a pin at rest keeps v = 0 exactly.
            None => {
                for ((v, a), dv) in self.v.iter_mut().zip(&mut self.accel).zip(&self.dv) {
                    *v += dv;
                    *a = dv / h;
                }
            }
        }
        self.x = x_new;
        self.stretch_at_x = ends;
        self.time += h;
        self.last_jump = if limit.is_finite() { jump / limit } else { 0.0 };
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

/// Share of the repulsion distance below which a body contact's pull down is rounding (a
/// particle resting at the thickness) and is not checked against the cloth under it.
const PULL_CHECKED_FROM: f64 = 1e-3;
