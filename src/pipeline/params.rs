//! Solver parameters: one struct, every field with its unit, default and how to tune it
//! (in the manner of rapier's `IntegrationParameters`).
use crate::Vec3;

/// Time integrator of a step (`--integrator`, docs/reference.md). Every one keeps pins exact, and all but
/// [`Integrator::Projective`] use the same body contacts, self-collision and adaptive step
/// control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Integrator {
    /// Baraff & Witkin's linearised backward Euler, one modified-PCG solve per step
    /// (Baraff §3, §5). Stable at large steps, but first order: it damps motion more the
    /// larger the step. The reference every other integrator is measured against.
    #[default]
    Implicit,
    /// Second-order backward differences (Stuyck §5.10, Choi & Ko 2002): the implicit
    /// system with `h → 2h/3` on the left and a right side carrying the previous step, so
    /// the same cost per step as `Implicit` with far less numerical damping. The first step
    /// after a change of step size (or the very first) is a backward Euler step.
    Bdf2,
    /// Kang & Cho's approximate implicit update (their §4.2–4.4): the implicit system
    /// solved only approximately by a small odd number of block-Jacobi sweeps with 3x3
    /// per-particle solves, O(n) per step. Several times faster than `Implicit` and as
    /// stable at large steps, but stiff cloth moves with visible lag (the solve leaves
    /// stretch to later steps), so Baraff's stretch-jump rejection is off for it. Meant for
    /// interactive look-dev.
    Preview,
    /// Projective dynamics (Liu et al. 2013, Stuyck ch. 6): local–global iterations on the
    /// spring network with one sparse Cholesky factor per topology and step size, reused
    /// by every iteration and step (refactored only when the step size changes). Very
    /// cheap per iteration and unconditionally stable, but more damped than `Implicit`,
    /// springs only (it always uses the mass-spring energies), and contacts are enforced
    /// by projection after the solve; no self-collision.
    Projective,
    /// Symplectic Euler with Provot's deformation constraints (Intel article §3.3), sub-
    /// stepped below its stability limit. The cheapest step but the smallest: stiff cloth
    /// needs thousands of sub-steps per frame. The baseline showing why the others exist.
    Explicit,
}

/// Internal force model (`--model`, docs/reference.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ForceModel {
    /// Baraff & Witkin's continuum conditions: triangle stretch and shear, hinge bend
    /// (Baraff §4). Stiffness follows the material's UV layout (anisotropic, seams).
    #[default]
    Continuum,
    /// Springs (Kang & Cho §3, Choi & Ko 2002): stretch springs on edges, a shear-and-bend
    /// spring across each hinge between its two opposite vertices, with the stabilised
    /// compressed-spring Jacobian (Kang & Cho eq. 22). Cheaper elements, isotropic,
    /// shear and bend coupled; bending resistance is weak at small fold angles.
    MassSpring,
}

/// Parameters of the integrators, the linear solve and the adaptive step control.
///
/// [`SolverParams::new`] gives the defaults for a frame rate and up axis; each field says
/// its default, its unit and when to change it. The defaults suit garments from a few
/// hundred to tens of thousands of particles at film frame rates.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverParams {
    /// Largest time step h (s). Default: one frame (1/24 s at 24 fps). Baraff §7 used 0.02 s
    /// for characters. Lower it to follow fast motion (a whipping limb, a flag in strong
    /// wind) more closely, at a cost proportional to the steps taken.
    pub max_step: f64,
    /// Smallest time step (s) the adaptive control may reach before the simulation is
    /// declared failed (exit 3). Default 1e-5 s. Lower it only for scenes that legitimately
    /// need tiny steps; a run that reaches it usually has a problem in its input.
    pub min_step: f64,
    /// Relative tolerance ε of the modified PCG for solves that are not deflated
    /// (dimensionless; Baraff §5.3: stop when δ ≤ ε² δ₀, δ in the block-Jacobi norm whatever
    /// the preconditioner, see [`crate::linalg::pcg`]). Default 1e-5. An undeflated solve
    /// stopped early leaves its error in the smooth, mesh-wide modes, where it shows as slow
    /// creep of cloth at rest and more rejected steps; raise it only for previews, lower it
    /// when resting cloth must stay still to a fraction of a millimetre.
    /// [`SolverParams::tolerance`] picks between this and
    /// [`SolverParams::cg_deflated_tolerance`].
    pub cg_tolerance: f64,
    /// Relative tolerance ε of the deflated solves (dimensionless;
    /// [`SolverParams::cg_deflation`], garments of at least
    /// [`MIN_PARTICLES`](crate::linalg::deflation::MIN_PARTICLES) particles). Default 1e-2.
    /// The coarse space solves the smooth, mesh-wide modes exactly at every iteration, so
    /// what a looser stop leaves is local and the next steps solve it. Lower it (toward
    /// 1e-3) when large garments show more peak stretch than wanted, at the cost of more
    /// iterations. Recorded and replayed runs of keyframe control solve to at most
    /// [`CONTROL_CG_TOLERANCE`] whatever this says.
    pub cg_deflated_tolerance: f64,
    /// Start each PCG solve from the previous step's Δv in the free directions. Default
    /// false. It saves iterations on free-hanging cloth whose motion changes slowly, but
    /// nothing where contacts come and go; turn it on for flags and curtains without
    /// bodies.
    pub cg_warm_start: bool,
    /// Deflate the PCG by a coarse space of particle aggregates
    /// ([`crate::linalg::deflation`]) on garments of at least
    /// [`MIN_PARTICLES`](crate::linalg::deflation::MIN_PARTICLES) particles: the conjugate
    /// gradient skips the smooth, mesh-wide modes IC(0) leaves, solved exactly on the
    /// aggregates instead, and the solves stop at
    /// [`SolverParams::cg_deflated_tolerance`]. Default true. The iteration count then grows
    /// far slower with the particle count; turn it off only to compare against the plain
    /// solve.
    pub cg_deflation: bool,
    /// Iteration cap of one PCG solve. Default 5000; a solve that hits it rejects the step
    /// (retried at half the size, where the system is better conditioned). Raise it only if
    /// very large, stiff garments fail with "the linear solve did not converge".
    pub cg_max_iterations: usize,
    /// Preconditioner of the PCG ([`crate::linalg::precond`]). Default
    /// [`Preconditioner::Auto`](crate::linalg::Preconditioner::Auto): block incomplete
    /// Cholesky IC(0); on a garment of at most
    /// [`DIRECT_MAX_PARTICLES`](crate::linalg::precond::DIRECT_MAX_PARTICLES) particles,
    /// once a solve would take more than
    /// [`AUTO_SWITCH`](crate::linalg::precond::AUTO_SWITCH)` · √n` IC(0) iterations, the
    /// complete sparse Cholesky factor of the filtered matrix for the rest of the run
    /// (recorded and replayed runs of keyframe control use the complete factor up to that
    /// size from the start). The switch does not change the result beyond the solve's
    /// tolerance. Pick [`SparseCholesky`](crate::linalg::Preconditioner::SparseCholesky) to
    /// factor small, stiff garments from the first step,
    /// [`BlockIncompleteCholesky`](crate::linalg::Preconditioner::BlockIncompleteCholesky)
    /// to keep IC(0) throughout, and
    /// [`BlockJacobi`](crate::linalg::Preconditioner::BlockJacobi) (Baraff §5.3) or
    /// [`BlockGaussSeidel`](crate::linalg::Preconditioner::BlockGaussSeidel) only for
    /// comparison: they need several times more iterations.
    pub preconditioner: crate::linalg::Preconditioner,
    /// Largest change of any triangle's stretch ‖w_u‖ or ‖w_v‖ within one step before the
    /// step is rejected and retried at half the size (Baraff §7). Dimensionless strain;
    /// default 0.02. Besides instability this catches the second-order stretch that a
    /// linearised step cannot see (a taut edge moving sideways). Only a change away from
    /// rest counts (a stretch that relaxes toward 1 within one step is accepted, up to an
    /// overshoot past 1 of this size), measured from the start of the step with or without
    /// its position alteration, whichever is closer; see `Simulator::check_and_commit`.
    /// Raise it (to 0.05–0.1) for faster, stretchier previews; `f64::INFINITY` disables the
    /// check (fixed steps).
    pub max_stretch_change: f64,
    /// Gauss–Seidel sweeps of the limit on the stretch a step adds ([`super::stretch_limit`],
    /// Provot 1995): triangles whose stretch grew by more than half of
    /// [`SolverParams::max_stretch_change`] are projected back to that before the step is
    /// checked, instead of the step being rejected for the second-order stretch of a
    /// turning edge. Only in steps with body contact, and not in keyframe control (whose
    /// adjoint pass knows only the solve); cloth near a body or near other cloth is held.
    /// Default 80. Set 0 for Baraff's rejection alone (more, smaller steps where cloth wraps
    /// over a body).
    pub stretch_sweeps: usize,
    /// Successful steps at a reduced size before trying to double it again; doubles after
    /// each failed growth attempt up to [`SolverParams::max_grow_wait`] (Baraff §7).
    /// Default 2 (steps). Raise it if a scene keeps growing its step only to have it
    /// rejected.
    pub grow_wait: u32,
    /// Cap of the growth wait (steps). Default 40 (Baraff §7). Lower it to let a scene that
    /// calmed down return to large steps sooner.
    pub max_grow_wait: u32,
    /// Gravitational acceleration (m/s²). Default 9.81 m/s² against the scene's up axis.
    /// Change it for stylised motion or scenes in other units.
    pub gravity: Vec3,
    /// Wind velocity (m/s) seen by air drag and lift. Default zero (still air).
    pub wind: Vec3,
    /// Cloth self-collision (Baraff §6): repulsion springs between cloth features closer
    /// than `min(thickness, ¼ mean edge length)`, and rejection of steps in which a particle
    /// passes through the cloth. Default on; turn it off to save the detection time on
    /// cloth that cannot fold onto itself.
    pub self_collision: bool,
    /// Time integrator. Default [`Integrator::Implicit`]; see [`Integrator`] for when to
    /// pick another.
    pub integrator: Integrator,
    /// Internal force model. Default [`ForceModel::Continuum`]; see [`ForceModel`].
    pub model: ForceModel,
    /// Aerodynamic lift coefficient `c_L` (kg/m³, Kang & Cho §5 eq. 34: `f = c_L a (1 −
    /// |n̂·r̂|) ‖r‖² U`, see [`crate::forces::external::lift`]). Default 0 (off); the CLI
    /// sets [`DEFAULT_LIFT`] with `--wind`. About ½ ρ_air C_L: 0.1–0.5 for cloth; raise it
    /// for cloth that should billow more in wind.
    pub lift: f64,
    /// Block-Jacobi sweeps after the first of the [`Integrator::Preview`] update (Kang &
    /// Cho's k, eq. 19). Default 1 (their eq. 20); must be odd (an even k is unstable at
    /// small k, their §4.2), so an even value is raised by one. Raise it to reduce the
    /// preview's lag on stiff cloth, at a cost linear in the sweeps.
    pub preview_iterations: usize,
    /// Largest edge strain Provot's constraints allow under [`Integrator::Explicit`] and
    /// [`Integrator::Preview`] (dimensionless; Provot used 0.1). Default 0.1. Lower it for
    /// less stretchy cloth, at the cost of more correction.
    pub provot_limit: f64,
    /// Local–global iterations per step of [`Integrator::Projective`]. Default 10; more
    /// converge toward the backward Euler solution of the spring network, at a cost linear
    /// in the iterations.
    pub projective_iterations: usize,
}

/// Largest PCG tolerance of the recorded and replayed runs of keyframe control: their
/// objective must be a smooth function of the control forces (L-BFGS, the adjoint's
/// gradient against finite differences), and where a loose solve stops moves in jumps
/// with them.
pub const CONTROL_CG_TOLERANCE: f64 = 1e-5;

/// Lift coefficient (kg/m³) the CLI uses when `--wind` is given: ½ ρ_air C_L with
/// ρ_air = 1.2 kg/m³ and C_L ≈ 0.25.
pub const DEFAULT_LIFT: f64 = 0.15;

impl SolverParams {
    /// Whether the solves of a garment of `particles` particles are deflated
    /// ([`SolverParams::cg_deflation`]).
    pub fn deflates(&self, particles: usize) -> bool {
        self.cg_deflation && particles >= crate::linalg::deflation::MIN_PARTICLES
    }

    /// The PCG tolerance of a garment of `particles` particles:
    /// [`SolverParams::cg_deflated_tolerance`] where its solves are deflated
    /// ([`SolverParams::deflates`]), [`SolverParams::cg_tolerance`] elsewhere.
    pub fn tolerance(&self, particles: usize) -> f64 {
        if self.deflates(particles) {
            self.cg_deflated_tolerance
        } else {
            self.cg_tolerance
        }
    }

    /// Defaults for a scene at `fps` frames per second with up axis `up`.
    pub fn new(fps: f64, up: Vec3) -> Self {
        SolverParams {
            max_step: 1.0 / fps,
            min_step: 1e-5,
            cg_tolerance: 1e-5,
            cg_deflated_tolerance: 1e-2,
            cg_max_iterations: 5000,
            cg_warm_start: false,
            cg_deflation: true,
            preconditioner: crate::linalg::Preconditioner::default(),
            max_stretch_change: 0.02,
            stretch_sweeps: 80,
            grow_wait: 2,
            max_grow_wait: 40,
            gravity: -9.81 * up,
            wind: Vec3::zeros(),
            self_collision: true,
            integrator: Integrator::Implicit,
            model: ForceModel::Continuum,
            lift: 0.0,
            preview_iterations: 1,
            provot_limit: 0.1,
            projective_iterations: 10,
        }
    }
}
