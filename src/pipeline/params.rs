//! Solver parameters: one struct, every field with its unit, default and how to tune it
//! (in the manner of rapier's `IntegrationParameters`).
use crate::Vec3;

/// Time integrator of a step (SPEC `--integrator`). Every one keeps pins exact, and all but
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

/// Internal force model (SPEC `--model`).
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

/// Parameters of the implicit integrator and its adaptive step control.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverParams {
    /// Largest time step h (s). Default: one frame (1/24 s at 24 fps). Baraff §7 used 0.02 s
    /// for characters; smaller values follow fast motion more closely at proportional cost.
    pub max_step: f64,
    /// Smallest time step (s) the adaptive control may reach before the simulation is
    /// declared failed (exit 3). Default 1e-5 s.
    pub min_step: f64,
    /// Relative tolerance ε of the modified PCG (Baraff §5.3: stop when δ ≤ ε² δ₀, δ in the
    /// block-Jacobi norm whatever the preconditioner, see [`crate::linalg::pcg`]). Default
    /// 1e-5. On the 2,601-particle two-corner sheet, deflated IC(0) (measured when deflated
    /// solves used this tolerance too) ends 12 frames within 0.023 mm of a 1e-9 solve at
    /// 57.0 CG per step; 3e-5 within 0.056 mm at 47.9, 5e-5 0.135 mm at 44.4, 1e-4 0.36 mm
    /// at 39.4, 1e-3 2.6 mm. Undeflated IC(0) (the default below 2,000 particles) drifted
    /// 0.116 mm at 1e-5 and 3.0 mm at 1e-4, block Jacobi (the default before that) 0.10 mm
    /// at 1e-4: the coarse space solves the smooth modes, whose error a small residual
    /// hides, exactly. 3e-5 would keep the old accuracy for 16% fewer iterations per step,
    /// but the looser solves fail Baraff's stretch check more often: on the 2,500-vertex
    /// sheet resting on a sphere (60 frames, undeflated) 73.6 → 56.8 CG per step but 2.78 →
    /// 3.27 steps per frame (24 → 31 rejections), no faster. So the default stays 1e-5 for
    /// the solves that are not deflated: an undeflated IC(0) solve stopped early leaves its
    /// error in the smooth modes, and at 3e-3 the 2,500-particle two-corner sheet,
    /// undeflated, still crept 0.33 mm in its ninth second (0.1 mm allowed,
    /// `tests/sheet_physics.rs`). Deflated solves stop at
    /// [`SolverParams::cg_deflated_tolerance`]; [`SolverParams::tolerance`] picks.
    pub cg_tolerance: f64,
    /// Relative tolerance ε of the deflated solves ([`SolverParams::cg_deflation`],
    /// garments of at least [`MIN_PARTICLES`](crate::linalg::deflation::MIN_PARTICLES)
    /// particles; its doc has the figures at 1,296–2,601 particles). Default 1e-2. The
    /// coarse space solves the smooth, mesh-wide modes exactly at every iteration, so what
    /// a looser stop leaves is local and the next steps solve it: the 4,900-particle
    /// two-corner sheet settles as still at 3e-3 as at 1e-5 (0.028 against 0.026 mm moved
    /// in its ninth second, the same 1.71% peak strain and 256 steps) for 2.4× fewer CG
    /// iterations and 1.7× less time, and the 2,500-particle one (`tests/sheet_physics.rs`)
    /// ends its eighth second with a kinetic energy of 1.3e-10 J at 1e-2 against 1.6e-9 J
    /// at 3e-3 (peak strain 2.21 against 2.07%). Recorded and replayed runs of keyframe
    /// control solve to at most [`CONTROL_CG_TOLERANCE`] whatever this says.
    ///
    /// 3e-3 against 1e-2 (2026-11-26, the code of the growth veto; two runs each): the
    /// sheets on the sphere (60 frames, max edge stretch as `scripts/bench-vs-blender.sh`
    /// measures it) 19.7 / 21.1 → 17.3 / 18.5 ms/frame at 2,500 vertices (1.81 → 1.93%),
    /// 119.9 / 133.6 → 89.0 / 91.6 at 10,000 (2.24 → 2.80%); the fig.-1 drape
    /// (`perf_report`, 24 frames) 38.6 / 40.1 → 34.7 / 33.7 (12.2 → 9.3 CG per step, peak
    /// strain 1.99 → 3.13%), at 10,000 particles 172.6 → 166.1; the two-corner sheet of
    /// `cargo bench --bench scaling` at 2,601 … 29,929 particles 27.8 … 515.0 → 23.9 …
    /// 390.7 ms/frame (n^1.18 → n^1.13, the same final strain). At 6e-3 (one run each)
    /// 18.5 / 106.2 / 30.4 ms/frame, stretch 2.34 / 3.77%. The
    /// older measurement below (before the contact and step-control changes of
    /// 2026-11-25/26) already found 1e-2 fastest:
    ///
    /// the 10,000-vertex sheet falling onto a sphere (`scripts/bench-vs-blender.sh`'s
    /// scene, first 30 frames; max edge stretch over the run; no penetration in any):
    ///
    /// ```text
    /// ε      CG per solve  steps/frame  rejections  max stretch  ms/frame
    /// 1e-5       89.6          4.13         17          4.03%      1,067
    /// 1e-3       53.2          4.43         18          2.64%      1,049
    /// 3e-3       25.5          4.40         23          2.47%        642
    /// 1e-2       15.7          4.23         21          1.99%        577
    /// ```
    pub cg_deflated_tolerance: f64,
    /// Start each PCG solve from the previous step's Δv in the free directions. Default
    /// false: on the 2,500-particle two-corner sheet it takes 20% fewer CG iterations (86k
    /// vs 108k over 96 frames) for the same steps and strain, but where contacts come and
    /// go it saves nothing: the 2,500-vertex sheet resting on a sphere 73.6 → 74.7 CG per
    /// step (60 frames), the skirt on the character under IC(0) 125 → 135.
    pub cg_warm_start: bool,
    /// Deflate the PCG by a coarse space of particle aggregates
    /// ([`crate::linalg::deflation`]) on garments of at least
    /// [`MIN_PARTICLES`](crate::linalg::deflation::MIN_PARTICLES) particles: the conjugate
    /// gradient skips the smooth, mesh-wide modes IC(0) leaves, solved exactly on the
    /// aggregates instead. Default true.
    /// Measured back to back with the commit before (same machine, noisy to ±20%): the
    /// two-corner sheet (`cargo bench --bench scaling`, 4 frames) 151 → 54 CG per step at
    /// 2,601 particles and 580 → 97 at 29,929 (4,036 → 1,248–1,398 ms/frame; exponent of
    /// ms/frame against particles n^1.72 → n^1.22–1.26); the 10,000-vertex sheet resting on
    /// a sphere (60 frames) 194 → 85 CG per step, 710–757 → 560–631 ms/frame; the
    /// 2,500-vertex one 73.6 → 54.5 CG per step but 54–57 → 60–65 ms/frame, and the
    /// fig.-1 drape (2,601) 55 → 47 CG per step, 66 → 70 ms/frame: there the coarse work
    /// of every iteration outweighed the iterations saved at 1e-5. Since deflated solves
    /// stop at [`SolverParams::cg_deflated_tolerance`] they pay from about 2,000
    /// particles (the threshold's doc).
    pub cg_deflation: bool,
    /// Iteration cap of one PCG solve. Default 5000; a solve that hits it rejects the step
    /// (retried at half the size, where the system is better conditioned).
    pub cg_max_iterations: usize,
    /// Preconditioner of the PCG ([`crate::linalg::precond`]). Default
    /// [`Preconditioner::Auto`](crate::linalg::Preconditioner::Auto): block incomplete
    /// Cholesky IC(0); on a garment of at most
    /// [`DIRECT_MAX_PARTICLES`](crate::linalg::precond::DIRECT_MAX_PARTICLES) particles,
    /// once a solve would take more than
    /// [`AUTO_SWITCH`](crate::linalg::precond::AUTO_SWITCH)` · √n` IC(0) iterations, the
    /// complete sparse Cholesky factor of the filtered matrix for the rest of the run
    /// (recorded and replayed runs of keyframe control use the complete factor up to
    /// that size from the start). On the 416-particle skirt the factor takes
    /// 1 CG per step instead of IC(0)'s 125, 5.0–6.6 → 3.2–4.0 ms per frame (3 runs each),
    /// and is also more accurate: after 60 frames 0.0006 mm from a solve at ε = 1e-9,
    /// against 1.9 mm for IC(0) at the default ε; the switch happens in its first step (50
    /// abandoned IC(0) iterations) and the cache is bit-identical to one factored from the
    /// start. On the fig.-1 drape at 441 and 961 particles IC(0) needs only 25 and 33
    /// iterations per step and stays: 11.9 → 7.0 and 36.2 → 24.4 ms per frame against the
    /// complete factor from the start (measured again, 2 runs each: 9.9, 8.8 → 7.0, 5.9
    /// and 41.5, 39.9 → 20.7, 18.7). (It waited for `tests/self_collision.rs` to pass
    /// with IC(0), warm starts and ε = 1e-4, which meant IC(0) under this `Auto`; see
    /// `contact::ON_BODY` and `self_contact::FLAT`.) IC(0) was
    /// measured against block Jacobi (Baraff §5.3, the default before) on
    /// the two-corner sheet (4 frames from rest, 2.25 steps per frame for both, machine
    /// shared with another engineer's builds):
    ///
    /// ```text
    /// particles                     2,601   5,041   10,000   19,881   29,929
    /// IC(0), ε = 1e-5   CG/step       159     203      308      437      557
    ///                   ms/frame      158     263    1,054    4,295    8,125
    /// IC(0), ε = 1e-4   CG/step        89     130      186      267      333
    ///                   ms/frame      100     229      611    2,260    4,568
    /// Jacobi, ε = 1e-4  CG/step       567     828    1,210    1,837    2,359
    ///                   ms/frame      199     448    1,165    5,410   12,126
    /// ```
    /// At the default ε the error after 12 frames is that of block Jacobi at 1e-4 (see
    /// [`SolverParams::cg_tolerance`]). IC(0) costs about 3x more per iteration (triangular
    /// sweeps of single-precision factors, two mesh domains in parallel and
    /// their separator after them) but needs 3.5-4x fewer iterations; its count
    /// still grows about as √n. On the fig.-1 drape over a sphere it takes 40 CG per step
    /// against 399 (23 at ε = 1e-4). Symmetric block Gauss–Seidel lies between. (The floor pile-up of
    /// tests/self_collision.rs, which failed with IC(0) before, failed because a body
    /// contact's position alteration could pull a particle through cloth lying on the body
    /// without the crossing check seeing it; see `Simulator::check_and_commit`.)
    pub preconditioner: crate::linalg::Preconditioner,
    /// Largest change of any triangle's stretch ‖w_u‖ or ‖w_v‖ within one step before the
    /// step is rejected and retried at half the size (Baraff §7). Dimensionless strain;
    /// default 0.02. Besides instability this catches the second-order stretch that a
    /// linearised step cannot see (a taut edge moving sideways): at 0.1 the two-corner
    /// sheet peaks at 9% strain during its fall, at 0.02 at 2% for 20% more steps.
    /// Only a change away from rest counts (a stretch that relaxes toward 1 within one
    /// step is accepted, up to an overshoot past 1 of this size), measured from the start
    /// of the step with or without its position alteration, whichever is closer; see
    /// `Simulator::check_and_commit`. `f64::INFINITY` disables the check (fixed steps).
    pub max_stretch_change: f64,
    /// Gauss–Seidel sweeps of the limit on the stretch a step adds ([`super::stretch_limit`],
    /// Provot 1995): triangles whose stretch grew by more than half of
    /// [`SolverParams::max_stretch_change`] are projected back to that before the step is
    /// checked, instead of the step being rejected for the second-order stretch of a
    /// turning edge. Only in steps with body contact, and not in keyframe control (whose
    /// adjoint pass knows only the solve); cloth near a body or near other cloth is held.
    /// Default 80 (0 turns it off, Baraff's rejection alone): it saves 10–12% of the
    /// instructions on sheets falling onto a sphere and 24% on the fig.-1 drape.
    pub stretch_sweeps: usize,
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
    /// Time integrator. Default [`Integrator::Implicit`].
    pub integrator: Integrator,
    /// Internal force model. Default [`ForceModel::Continuum`].
    pub model: ForceModel,
    /// Aerodynamic lift coefficient `c_L` (kg/m³, Kang & Cho §5 eq. 34: `f = c_L a (1 −
    /// |n̂·r̂|) ‖r‖² U`, see [`crate::forces::external::lift`]). Default 0 (off); the CLI
    /// sets [`DEFAULT_LIFT`] with `--wind`. About ½ ρ_air C_L: 0.1–0.5 for cloth.
    pub lift: f64,
    /// Block-Jacobi sweeps after the first of the [`Integrator::Preview`] update (Kang &
    /// Cho's k, eq. 19). Default 1 (their eq. 20); must be odd (an even k is unstable at
    /// small k, their §4.2), so an even value is raised by one.
    pub preview_iterations: usize,
    /// Largest edge strain Provot's constraints allow under [`Integrator::Explicit`]
    /// (dimensionless; Provot used 0.1). Default 0.1.
    pub provot_limit: f64,
    /// Local–global iterations per step of [`Integrator::Projective`]. Default 10; more
    /// converge toward the backward Euler solution of the spring network.
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
