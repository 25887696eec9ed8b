//! Solver parameters: one struct, every field with its unit, default and how to tune it
//! (in the manner of rapier's `IntegrationParameters`).
use crate::Vec3;

/// Parameters of the implicit integrator and its adaptive step control.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverParams {
    /// Largest time step h (s). Default: one frame (1/24 s at 24 fps). Baraff §7 used 0.02 s
    /// for characters; smaller values follow fast motion more closely at proportional cost.
    pub max_step: f64,
    /// Smallest time step (s) the adaptive control may reach before the simulation is
    /// declared failed (exit 3). Default 1e-5 s.
    pub min_step: f64,
    /// Relative tolerance ε of the modified PCG (Baraff §5.3: stop when δ ≤ ε² δ₀).
    /// Default 1e-4: on the 2,500-particle two-corner sheet it moves no particle by more
    /// than 0.7 mm against 1e-5 mid-swing, at 0.7× the CG iterations; 1e-3 moves 7 mm.
    pub cg_tolerance: f64,
    /// Start each PCG solve from the previous step's Δv in the free directions. Default
    /// false: on the 2,500-particle two-corner sheet it takes 20% fewer CG iterations (86k
    /// vs 108k over 96 frames) for the same steps and strain, but on a sheet piling up on
    /// the floor it let one step through with a self-crossing (accepted at the smallest
    /// steps), so it stays off until that is understood.
    pub cg_warm_start: bool,
    /// Iteration cap of one PCG solve. Default 5000; a solve that hits it rejects the step
    /// (retried at half the size, where the system is better conditioned).
    pub cg_max_iterations: usize,
    /// Largest change of any triangle's stretch ‖w_u‖ or ‖w_v‖ within one step before the
    /// step is rejected and retried at half the size (Baraff §7). Dimensionless strain;
    /// default 0.02. Besides instability this catches the second-order stretch that a
    /// linearised step cannot see (a taut edge moving sideways): at 0.1 the two-corner
    /// sheet peaks at 9% strain during its fall, at 0.02 at 2% for 20% more steps.
    /// `f64::INFINITY` disables the check (fixed steps).
    pub max_stretch_change: f64,
    /// Successful steps at a reduced size before trying to double it again; doubles after
    /// each failed growth attempt up to [`SolverParams::max_grow_wait`] (Baraff §7). Default 2.
    pub grow_wait: u32,
    /// Cap of the growth wait (steps). Default 40 (Baraff §7).
    pub max_grow_wait: u32,
    /// Gravitational acceleration (m/s²), default 9.81 m/s² against the scene's up axis.
    pub gravity: Vec3,
    /// Wind velocity (m/s) seen by air drag. Default zero.
    pub wind: Vec3,
    /// Cloth self-collision (Baraff §6): repulsion springs between cloth features closer
    /// than `min(thickness, ¼ mean edge length)`, and rejection of steps in which a particle
    /// passes through the cloth. Default on; off saves the detection time on cloth that
    /// cannot fold onto itself.
    pub self_collision: bool,
}

impl SolverParams {
    /// Defaults for a scene at `fps` frames per second with up axis `up`.
    pub fn new(fps: f64, up: Vec3) -> Self {
        SolverParams {
            max_step: 1.0 / fps,
            min_step: 1e-5,
            cg_tolerance: 1e-4,
            cg_max_iterations: 5000,
            cg_warm_start: false,
            max_stretch_change: 0.02,
            grow_wait: 2,
            max_grow_wait: 40,
            gravity: -9.81 * up,
            wind: Vec3::zeros(),
            self_collision: true,
        }
    }
}
