//! One step and its stages shared by the integrators (module doc of [`super`]): sampling
//! the bodies, constraining the pins, detecting body contacts and self-contacts, and
//! remembering contact forces. [`Simulator::step`] dispatches to the integrator's step;
//! the integrators that solve the linearised system of Baraff's eq. 18 (implicit, BDF2,
//! preview) share [`Simulator::step_linearised`], the others live in
//! [`super::integrators`].
use super::{FrameStats, Integrator, Rejection, Simulator};
use crate::collision::layers::NearbyCloth;
use crate::linalg::constraint_forces::constraint_forces;
use crate::Vec3;
use std::time::Instant;

impl Simulator {
    /// One step of size `h` with the simulator's integrator; on success the state is
    /// advanced.
    pub(super) fn step(&mut self, h: f64, stats: &mut FrameStats) -> Result<(), Rejection> {
        match self.integrator.kind() {
            Integrator::Implicit | Integrator::Bdf2 | Integrator::Preview => {
                self.step_linearised(h, stats)
            }
            Integrator::Explicit => self.step_explicit(h, stats),
            Integrator::Projective => self.step_projective(h, stats),
        }
    }

    /// One step of the integrators that solve the linearised system of eq. 18:
    /// [`Integrator::Implicit`] (PCG), [`Integrator::Bdf2`] (the same system with `h → 2h/3`
    /// and BDF2's right side, [`super::integrators::bdf2`]) and [`Integrator::Preview`] (a
    /// few Jacobi sweeps, [`super::integrators::preview`]).
    pub(super) fn step_linearised(
        &mut self,
        h: f64,
        stats: &mut FrameStats,
    ) -> Result<(), Rejection> {
        let f1 = self.sample_bodies(h);
        // BDF2 with a history of the same step size: the system's step is 2h/3.
        let hs = self.begin_bdf2(h);
        self.constrain_pins(h, hs, f1);
        self.detect_collisions(h, stats);
        self.check_stop()?;
        self.finish_bdf2_terms();
        let result = self.solve_step(hs, stats);
        // A stopped PCG returns early, unconverged: never accept its step.
        self.check_stop()?;
        if !result.converged {
            return Err(Rejection::Solve);
        }
        let record = self.run.is_recording().then(|| self.record(h));
        self.measure_contact_forces();
        let start =
            (self.integrator.keeps_history()).then(|| (self.state.x.clone(), self.state.v.clone()));
        // While cloth that started crossing itself is brought back, crossings are expected.
        let tolerate_crossing =
            h <= self.params.max_step / 256.0 || self.collision.untangle.is_some();
        let crossed = if let Integrator::Preview = self.integrator.kind() {
            self.limit_and_advance(h, tolerate_crossing)?
        } else {
            self.check_and_advance(h, hs, tolerate_crossing)?
        };
        if crossed {
            stats.self_crossings += 1;
        }
        if let Some((x0, v0)) = start {
            self.integrator.remember(x0, v0, h);
        }
        self.remember_contacts(hs);
        if let (Some(tape), Some(r)) = (self.run.tape(), record) {
            tape.push(r);
        }
        stats.max_residual = stats.max_residual.max(result.relative_residual);
        Ok(())
    }

    /// Clears the constraints and adds the pins' (`S_i = 0`, `z_i` that takes particle i to
    /// its target at frame `f1`): from `x₀` over `h`, or under BDF2 from `x₀ + η` over the
    /// system's step `hs`.
    fn constrain_pins(&mut self, h: f64, hs: f64, f1: f64) {
        self.scratch.constraints.clear();
        let (x, v) = (&self.state.x, &self.state.v);
        let (bodies, constraints) = (&self.collision.bodies, &mut self.scratch.constraints);
        match self.integrator.bdf2_terms() {
            None => self.drive.pins.constrain(x, v, h, f1, bodies, constraints),
            Some(t) => self
                .drive
                .pins
                .constrain(&t.base, v, hs, f1, bodies, constraints),
        }
    }

    /// The forces the body-contact constraints exerted in the solve (§5.4), kept in
    /// `impulses` for release and friction next step.
    fn measure_contact_forces(&mut self) {
        if !self.collision.contacts.contacts.is_empty() {
            let all = constraint_forces(
                &self.scratch.system.matrix,
                &self.scratch.system.rhs,
                &self.scratch.dv,
                &self.scratch.constraints,
            );
            let pins = self.scratch.constraints.len() - self.collision.contacts.contacts.len();
            self.collision.impulses = all[pins..].to_vec();
        }
    }

    /// Samples the bodies for a step of `h` from now (Baraff §6); returns the frame number
    /// at the step's end.
    pub(super) fn sample_bodies(&mut self, h: f64) -> f64 {
        let (start, fps) = self.drive.clock;
        let (f0, f1) = (
            start + self.state.time * fps,
            start + (self.state.time + h) * fps,
        );
        for b in &mut self.collision.bodies {
            b.advance_to(f0, f1);
        }
        self.collision.sampled = (f0, f1);
        f1
    }

    /// After an accepted step: contact forces `impulses` (N·s over a step `h`, §5.4) decide
    /// release and friction next step; self-collision remembers the accepted state.
    pub(super) fn remember_contacts(&mut self, h: f64) {
        if !self.collision.bodies.is_empty() {
            let contacts = &mut self.collision.contacts;
            contacts.remember(&self.collision.impulses, &self.state.v, h);
            contacts
                .overlaps
                .release(&self.collision.bodies, &self.state.x);
        }
        if let Some(sc) = &mut self.collision.self_collision {
            sc.accept();
        }
        if let Some(u) = &mut self.collision.untangle {
            u.update(&self.state.x, &self.model.triangles);
            if u.is_done() {
                self.collision.untangle = None;
                if let Some(sc) = &mut self.collision.self_collision {
                    sc.forget_sides();
                }
            }
        }
    }

    /// Resets `y`, then finds this step's body contacts (constraints appended to
    /// `constraints`, alterations in `y`) and cloth self-contacts (repulsion springs in the
    /// system, alterations in `y` for free particles).
    pub(super) fn detect_collisions(&mut self, h: f64, stats: &mut FrameStats) {
        // Self-contacts first: the body contacts read which particles have cloth within
        // the repulsion distance (`Simulator::detect_contacts`).
        let mut alterations = Vec::new();
        if let Some(sc) = &mut self.collision.self_collision {
            let clock = Instant::now();
            let (mut repulsions, mut found) = sc.detect(&self.state.x);
            // The piece brought back through the cloth is not held on its side.
            if let Some(u) = &self.collision.untangle {
                let wrong = |i: &usize| u.wrong().binary_search(i).is_ok();
                repulsions.retain(|r| !r.nodes.iter().any(wrong));
                found.retain(|(i, _)| !wrong(i));
            }
            alterations = found;
            stats.self_contacts = stats.self_contacts.max(repulsions.len());
            let d = sc.distance;
            self.scratch.system.set_repulsions(repulsions, d);
            self.diagnostics.collision_time[1] += clock.elapsed().as_secs_f64();
        }
        self.detect_body_collisions(h);
        if let Some(u) = &self.collision.untangle {
            let (x, tris) = (&self.state.x, &self.model.triangles);
            u.ease(x, tris, h, &mut self.scratch.y);
        }
        for (i, y) in alterations {
            // Pins and body contacts keep their own exact targets.
            if !self.drive.pinned[i] && self.scratch.y[i] == Vec3::zeros() {
                self.scratch.y[i] = y;
            }
        }
    }

    /// Clears the position alteration and finds the body contacts of this step (timed as
    /// cloth–solid work); the body part of [`Simulator::detect_collisions`].
    pub(super) fn detect_body_collisions(&mut self, h: f64) {
        self.scratch.y.iter_mut().for_each(|y| *y = Vec3::zeros());
        if !self.collision.bodies.is_empty() {
            let clock = Instant::now();
            self.detect_contacts(h);
            self.diagnostics.collision_time[0] += clock.elapsed().as_secs_f64();
        }
    }

    /// Samples the bodies for a step of `h` and clears the constraints; returns where the
    /// pinned particles must be at its end. The start of the integrators that place pins
    /// directly instead of constraining a solve (explicit, projective).
    pub(super) fn begin_pinned_step(&mut self, h: f64) -> Vec<(usize, Vec3)> {
        let f1 = self.sample_bodies(h);
        self.scratch.constraints.clear();
        self.drive
            .pins
            .targets(&self.state.x, f1, &self.collision.bodies)
    }

    /// Finds contacts with the bodies (sampled for this step, Baraff §6) and turns them into
    /// constraints and position alterations.
    pub(super) fn detect_contacts(&mut self, h: f64) {
        // The cloth near each particle: this step's self-contact springs under
        // `detect_collisions`, the last step's otherwise.
        let layers = NearbyCloth::new(self.state.x.len(), self.scratch.system.repulsions())
            .holding(&self.collision.held);
        self.collision.contacts.detect(
            &self.collision.bodies,
            &self.state.x,
            &self.state.v,
            &self.drive.pinned,
            &layers,
            h,
            self.params.gravity,
            Some(&self.state.accel),
        );
        // Pulls down onto cloth too far below for a spring to tell (collision::layers):
        // such a contact only pushes out, as one over cloth.
        if let Some(sc) = &mut self.collision.self_collision {
            let pulls = self
                .collision
                .contacts
                .pulls(&self.state.x, PULL_CHECKED_FROM * sc.distance);
            let blocked = sc.pulls_onto_cloth(&self.state.x, &pulls);
            self.collision.contacts.push_only(&blocked);
        }
        self.collision.contacts.constrain(
            &self.state.v,
            &mut self.scratch.constraints,
            &mut self.scratch.y,
        );
        // Cloth that started inside a body is eased out of it (collision::overlap).
        self.collision.contacts.overlaps.ease(
            &self.collision.bodies,
            &self.state.x,
            &self.model.triangles,
            h,
            &mut self.scratch.y,
        );
    }
}

/// Share of the repulsion distance below which a body contact's pull down is rounding (a
/// particle resting at the thickness) and is not checked against the cloth under it.
const PULL_CHECKED_FROM: f64 = 1e-3;
