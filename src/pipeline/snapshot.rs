//! The state a simulator carries from one frame to the next, written to and read back
//! from a bake's checkpoint ([`crate::bake`], docs/reference.md "Checkpoints").
//!
//! A resumed bake builds its simulators exactly as the interrupted one did (the same
//! model, bodies, pins and parameters: the checkpoint's fingerprint makes sure of it),
//! then [`Simulator::restore_state`] puts back everything a later step reads that an
//! earlier step wrote:
//!
//! ```text
//! cloth          x, v, time, last accelerations, stretch measured at x
//! drive          pin attachments, applied forces
//! collision      frames the bodies were sampled at (resampled on restore), contact and
//!                friction memory, contact impulses, particles eased out of bodies,
//!                self-contact sides and reused detections, the untangling of crossings
//! solver         last Δv (a warm start's guess), self-contact springs of the system,
//!                the preconditioner's adaptive switch
//! step control   step size, calm steps counted, growth wait (Baraff §7)
//! integrator     BDF2's previous state and step; the step projective dynamics'
//!                factor was built for (steps within rounding of it share it)
//! diagnostics    the last stretch jump (read by step control), the particle last stuck
//! ```
//! What is left out is rebuilt identically from the model or refilled before it is read
//! (the system's matrix, the PCG's vectors and factors, the hierarchies' boxes), so a
//! resumed bake writes the same bytes as one never stopped.
use super::{IntegratorState, Simulator};
use crate::format::binary::{Damaged, Reader, Writer};

impl Simulator {
    /// Writes the state carried between frames (module doc) to `w`; call at a frame
    /// boundary.
    pub fn save_state(&self, w: &mut Writer) {
        let s = &self.state;
        w.put(&s.x.len());
        w.put(&s.x);
        w.put(&s.v);
        w.put(&s.time);
        w.put(&s.accel);
        w.put(&s.stretch_at_x);
        self.drive.pins.save_state(w);
        w.put(&self.drive.applied);
        let c = &self.collision;
        w.put(&c.sampled);
        w.put(&c.contacts);
        w.put(&c.impulses);
        w.put(&c.held);
        w.put(&c.self_collision.is_some());
        if let Some(sc) = &c.self_collision {
            sc.save_state(w);
        }
        w.put(&c.untangle);
        w.put(&self.scratch.dv);
        w.put(&self.scratch.system.repulsions().to_vec());
        w.put(&self.scratch.pcg.factor().switched_to_complete());
        w.put(&self.step_control);
        w.put(&integrator_tag(&self.integrator));
        match &self.integrator {
            IntegratorState::Bdf2(b) => w.put(&b.history),
            IntegratorState::Projective(p) => w.put(&p.factor_step()),
            _ => {}
        }
        w.put(&self.diagnostics.last_jump);
        w.put(&self.diagnostics.stuck);
    }

    /// Reads back what [`Simulator::save_state`] wrote into this simulator, built as the
    /// one that wrote it was; [`Damaged`] if the bytes do not fit it (another garment,
    /// integrator or self-collision setting).
    pub fn restore_state(&mut self, r: &mut Reader) -> Result<(), Damaged> {
        let n: usize = r.get()?;
        if n != self.state.x.len() {
            return Err(Damaged);
        }
        let x: Vec<_> = r.get()?;
        let v: Vec<_> = r.get()?;
        let time = r.get()?;
        let accel: Vec<_> = r.get()?;
        let stretch: Option<Vec<[f64; 2]>> = r.get()?;
        if x.len() != n || v.len() != n || accel.len() != n {
            return Err(Damaged);
        }
        self.state.x = x;
        self.state.v = v;
        self.state.time = time;
        self.state.accel = accel;
        self.state.stretch_at_x = stretch;
        self.drive.pins.load_state(r)?;
        self.drive.applied = r.get()?;
        let c = &mut self.collision;
        c.sampled = r.get()?;
        for b in &mut c.bodies {
            b.advance_to(c.sampled.0, c.sampled.1);
        }
        c.contacts = r.get()?;
        c.impulses = r.get()?;
        c.held = r.get()?;
        let self_collision: bool = r.get()?;
        match (&mut c.self_collision, self_collision) {
            (Some(sc), true) => sc.load_state(r)?,
            (None, false) => {}
            _ => return Err(Damaged),
        }
        c.untangle = r.get()?;
        self.scratch.dv = r.get()?;
        let repulsions = r.get()?;
        let distance = c.self_collision.as_ref().map_or(0.0, |sc| sc.distance);
        self.scratch.system.set_repulsions(repulsions, distance);
        let switched = r.get()?;
        (self.scratch.pcg.factor_mut()).set_switched_to_complete(switched);
        self.step_control = r.get()?;
        if r.get::<u8>()? != integrator_tag(&self.integrator) {
            return Err(Damaged);
        }
        match &mut self.integrator {
            IntegratorState::Bdf2(b) => {
                b.history = r.get()?;
                b.terms = None;
            }
            IntegratorState::Projective(p) => p.restore_factor_step(r.get()?),
            _ => {}
        }
        self.diagnostics.last_jump = r.get()?;
        self.diagnostics.stuck = r.get()?;
        Ok(())
    }
}

/// The integrator as one byte, to refuse a state written by another.
fn integrator_tag(i: &IntegratorState) -> u8 {
    match i {
        IntegratorState::Implicit => 0,
        IntegratorState::Bdf2(_) => 1,
        IntegratorState::Preview(_) => 2,
        IntegratorState::Projective(_) => 3,
        IntegratorState::Explicit(_) => 4,
    }
}
