//! The tuning knobs of the benchmarks (`benches/`) and the profiling harnesses
//! (`linalg::tests::perf`): environment variables, all read here by one parser, so that
//! runs can compare settings without a rebuild.
//!
//! Each struct below reads one harness's variables; each field names its variable, its
//! default and what it changes. A variable that is unset, or whose value does not parse
//! as the field's type (or is out of its range), keeps the default. Lists are
//! comma-separated.
//!
//! | variable | read by |
//! |---|---|
//! | `DRAPE_BENCH_PRECONDITIONER`, `DRAPE_BENCH_CG_TOLERANCE`, `DRAPE_BENCH_DEFLATION`, `DRAPE_BENCH_WARM_START`, `DRAPE_BENCH_MAX_STRETCH_CHANGE`, `DRAPE_BENCH_STRETCH_SWEEPS`, `DRAPE_BENCH_GROW_WAIT`, `DRAPE_BENCH_MAX_GROW_WAIT` | [`SolverKnobs`]: every bench and perf harness |
//! | `DRAPE_BENCH_FRAMES`, `DRAPE_BENCH_SCENES` | [`BenchKnobs`]: `cargo bench --bench sheet`, `--bench integrators` |
//! | `DRAPE_CONTROL_SIDE`, `DRAPE_CONTROL_FRAMES`, `DRAPE_CONTROL_ITERATIONS`, `DRAPE_CONTROL_FULL`, `DRAPE_CONTROL_FROZEN` | [`ControlKnobs`]: `cargo bench --bench control` |
//! | `DRAPE_SCALING_FRAMES`, `DRAPE_SCALING_BUDGET_S`, `DRAPE_SCALING_SIDES` | [`ScalingKnobs`]: `cargo bench --bench scaling` |
//! | `DRAPE_PERF_SCENE`, `DRAPE_PERF_SIDE`, `DRAPE_PERF_SIDES`, `DRAPE_PERF_FRAMES`, `DRAPE_PERF_MATERIAL`, `DRAPE_PERF_THREADS`, `DRAPE_PERF_VERBOSE`, `DRAPE_PERF_DUMP`, `DRAPE_PERF_ASSEMBLIES`, `DRAPE_PERF_REPS`, `DRAPE_PERF_ROUNDS` | [`PerfKnobs`]: `cargo test --release --lib linalg::tests::perf -- --ignored` |
use crate::linalg::Preconditioner;
use crate::pipeline::SolverParams;
use std::str::FromStr;

/// The value of environment variable `name` parsed as `T`; `None` when unset or not
/// parsable. The one parser of every knob.
fn var<T: FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// A positive finite number from `name`.
fn positive(name: &str) -> Option<f64> {
    var::<f64>(name).filter(|x| x.is_finite() && *x > 0.0)
}

/// A comma-separated list from `name`; items that do not parse are skipped; `None` when
/// unset or empty.
fn list<T: FromStr>(name: &str) -> Option<Vec<T>> {
    let items: Vec<T> = std::env::var(name)
        .ok()?
        .split(',')
        .filter_map(|w| w.trim().parse().ok())
        .collect();
    (!items.is_empty()).then_some(items)
}

/// A flag from `name`: `1` or `true` set it.
fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|s| matches!(s.trim(), "1" | "true"))
}

/// The preconditioner named `name` (`jacobi`, `gauss-seidel`, `ic0`, `cholesky`, `auto`,
/// or their short forms `gs`, `ic`), if any.
pub fn parse_preconditioner(name: &str) -> Option<Preconditioner> {
    match name.trim().to_ascii_lowercase().as_str() {
        "jacobi" | "block-jacobi" => Some(Preconditioner::BlockJacobi),
        "gauss-seidel" | "gs" => Some(Preconditioner::BlockGaussSeidel),
        "ic0" | "ic" => Some(Preconditioner::BlockIncompleteCholesky),
        "cholesky" | "sparse-cholesky" => Some(Preconditioner::SparseCholesky),
        "auto" => Some(Preconditioner::Auto),
        _ => None,
    }
}

/// Solver overrides, to compare settings on the same scenes; each `None` keeps the
/// harness's own value ([`SolverKnobs::apply`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SolverKnobs {
    /// `DRAPE_BENCH_PRECONDITIONER`: `jacobi`, `gauss-seidel` (`gs`), `ic0` (`ic`),
    /// `cholesky` or `auto` ([`SolverParams::preconditioner`]).
    pub preconditioner: Option<Preconditioner>,
    /// `DRAPE_BENCH_CG_TOLERANCE`: relative residual ε of every PCG solve, deflated or
    /// not (> 0; [`SolverParams::cg_tolerance`], [`SolverParams::cg_deflated_tolerance`]).
    pub cg_tolerance: Option<f64>,
    /// `DRAPE_BENCH_DEFLATION`: `true` or `false`, coarse-space deflation of the PCG
    /// ([`SolverParams::cg_deflation`]).
    pub deflation: Option<bool>,
    /// `DRAPE_BENCH_WARM_START`: `true` or `false`, start each PCG from the previous
    /// step's Δv ([`SolverParams::cg_warm_start`]).
    pub warm_start: Option<bool>,
    /// `DRAPE_BENCH_MAX_STRETCH_CHANGE`: the stretch jump a step may make before it is
    /// retried smaller (> 0; [`SolverParams::max_stretch_change`]).
    pub max_stretch_change: Option<f64>,
    /// `DRAPE_BENCH_STRETCH_SWEEPS`: sweeps of the limit on the stretch a step adds, 0 for
    /// none ([`SolverParams::stretch_sweeps`]).
    pub stretch_sweeps: Option<usize>,
    /// `DRAPE_BENCH_GROW_WAIT`: accepted steps before the step may grow again
    /// ([`SolverParams::grow_wait`]).
    pub grow_wait: Option<u32>,
    /// `DRAPE_BENCH_MAX_GROW_WAIT`: the longest that wait becomes after repeated
    /// rejections ([`SolverParams::max_grow_wait`]).
    pub max_grow_wait: Option<u32>,
}

impl SolverKnobs {
    /// Reads the variables.
    pub fn from_env() -> Self {
        SolverKnobs {
            preconditioner: std::env::var("DRAPE_BENCH_PRECONDITIONER")
                .ok()
                .and_then(|s| parse_preconditioner(&s)),
            cg_tolerance: positive("DRAPE_BENCH_CG_TOLERANCE"),
            deflation: var("DRAPE_BENCH_DEFLATION"),
            warm_start: var("DRAPE_BENCH_WARM_START"),
            max_stretch_change: positive("DRAPE_BENCH_MAX_STRETCH_CHANGE"),
            stretch_sweeps: var("DRAPE_BENCH_STRETCH_SWEEPS"),
            grow_wait: var("DRAPE_BENCH_GROW_WAIT"),
            max_grow_wait: var("DRAPE_BENCH_MAX_GROW_WAIT"),
        }
    }

    /// `params` with every override that is set.
    pub fn apply(&self, mut params: SolverParams) -> SolverParams {
        if let Some(kind) = self.preconditioner {
            params.preconditioner = kind;
        }
        if let Some(eps) = self.cg_tolerance {
            params.cg_tolerance = eps;
            params.cg_deflated_tolerance = eps;
        }
        if let Some(on) = self.deflation {
            params.cg_deflation = on;
        }
        if let Some(on) = self.warm_start {
            params.cg_warm_start = on;
        }
        if let Some(limit) = self.max_stretch_change {
            params.max_stretch_change = limit;
        }
        if let Some(sweeps) = self.stretch_sweeps {
            params.stretch_sweeps = sweeps;
        }
        if let Some(wait) = self.grow_wait {
            params.grow_wait = wait;
        }
        if let Some(wait) = self.max_grow_wait {
            params.max_grow_wait = wait;
        }
        params
    }
}

/// The standard scenes' benchmarks (`benches/sheet.rs`, `benches/integrators.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchKnobs {
    /// `DRAPE_BENCH_FRAMES`: frames simulated per scene. Default 24 (one second).
    pub frames: usize,
    /// `DRAPE_BENCH_SCENES`: which parts of `benches/sheet.rs` run, a subset of
    /// `sheets,drape,bend`. Default: all three.
    pub scenes: Vec<String>,
}

impl BenchKnobs {
    /// Reads the variables.
    pub fn from_env() -> Self {
        BenchKnobs {
            frames: var("DRAPE_BENCH_FRAMES").unwrap_or(24),
            scenes: list("DRAPE_BENCH_SCENES")
                .unwrap_or_else(|| ["sheets", "drape", "bend"].map(String::from).to_vec()),
        }
    }

    /// True if scene part `name` is to run.
    pub fn wants(&self, name: &str) -> bool {
        self.scenes.iter().any(|s| s == name)
    }
}

/// The keyframe-control benchmark (`benches/control.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct ControlKnobs {
    /// `DRAPE_CONTROL_SIDE`: particles per side of the sheet. Default 50 (2,500
    /// particles).
    pub side: usize,
    /// `DRAPE_CONTROL_FRAMES`: frames up to the keyframe. Default 60.
    pub frames: usize,
    /// `DRAPE_CONTROL_ITERATIONS`: L-BFGS iterations at most. Default 30.
    pub iterations: usize,
    /// `DRAPE_CONTROL_FULL=1`: run every iteration instead of stopping at the first with
    /// 95% less keyframe error. Default off.
    pub full: bool,
    /// `DRAPE_CONTROL_FROZEN=1`: Wojtan's frozen-Jacobian adjoint instead of the exact
    /// one. Default off.
    pub frozen: bool,
}

impl ControlKnobs {
    /// Reads the variables.
    pub fn from_env() -> Self {
        ControlKnobs {
            side: var("DRAPE_CONTROL_SIDE").unwrap_or(50),
            frames: var("DRAPE_CONTROL_FRAMES").unwrap_or(60),
            iterations: var("DRAPE_CONTROL_ITERATIONS").unwrap_or(30),
            full: flag("DRAPE_CONTROL_FULL"),
            frozen: flag("DRAPE_CONTROL_FROZEN"),
        }
    }
}

/// The scaling benchmark (`benches/scaling.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingKnobs {
    /// `DRAPE_SCALING_FRAMES`: frames per size, at 24 fps from rest (> 0). Default 6.
    pub frames: usize,
    /// `DRAPE_SCALING_BUDGET_S`: seconds per size; a size stops at the first frame
    /// boundary after it (> 0). Default 120.
    pub budget_s: f64,
    /// `DRAPE_SCALING_SIDES`: particles per side of each size (each ≥ 2). Default
    /// [`super::SCALING_SIDES`].
    pub sides: Vec<usize>,
}

impl ScalingKnobs {
    /// Reads the variables.
    pub fn from_env() -> Self {
        let sides: Vec<usize> = list("DRAPE_SCALING_SIDES")
            .unwrap_or_default()
            .into_iter()
            .filter(|&n| n >= 2)
            .collect();
        ScalingKnobs {
            frames: var("DRAPE_SCALING_FRAMES").filter(|&f| f > 0).unwrap_or(6),
            budget_s: positive("DRAPE_SCALING_BUDGET_S").unwrap_or(120.0),
            sides: if sides.is_empty() {
                super::SCALING_SIDES.to_vec()
            } else {
                sides
            },
        }
    }
}

/// The profiling harnesses of `linalg::tests::perf` (with [`SolverKnobs`] for the
/// solver).
#[derive(Debug, Clone, PartialEq)]
pub struct PerfKnobs {
    /// `DRAPE_PERF_SCENE`: `drape` (Baraff fig. 1, the sheet over a sphere), `sheet` (the
    /// two-corner sheet) or `drop` (a sheet piling up on the floor). Default `drape`.
    pub scene: String,
    /// `DRAPE_PERF_SIDE`: particles per side of the scene. Default 51.
    pub side: usize,
    /// `DRAPE_PERF_SIDES`: the sides the kernel reports run through. Default `51,100`.
    pub sides: Vec<usize>,
    /// `DRAPE_PERF_FRAMES`: frames simulated. Default 24.
    pub frames: usize,
    /// `DRAPE_PERF_MATERIAL`: material preset (`cotton`, `silk`, …). Default cotton.
    pub material: Option<String>,
    /// `DRAPE_PERF_THREADS`: worker threads. Default: each report's own (2 for the
    /// simulation, 1 for the assembly).
    pub threads: Option<usize>,
    /// `DRAPE_PERF_VERBOSE`: set (any value) to print every frame's figures.
    pub verbose: bool,
    /// `DRAPE_PERF_DUMP`: a path to write the final positions to as text, to compare
    /// runs. Default: none.
    pub dump: Option<String>,
    /// `DRAPE_PERF_ASSEMBLIES`: timed assemblies of the assembly report. Default 200.
    pub assemblies: usize,
    /// `DRAPE_PERF_REPS`: calls per round of the kernel reports. Default: each report's
    /// own (100 for the preconditioner, 200 for deflation).
    pub reps: Option<usize>,
    /// `DRAPE_PERF_ROUNDS`: rounds whose median a kernel report gives. Default 9.
    pub rounds: usize,
}

impl PerfKnobs {
    /// Reads the variables.
    pub fn from_env() -> Self {
        PerfKnobs {
            scene: var("DRAPE_PERF_SCENE").unwrap_or_else(|| "drape".into()),
            side: var("DRAPE_PERF_SIDE").unwrap_or(51),
            sides: list("DRAPE_PERF_SIDES").unwrap_or_else(|| vec![51, 100]),
            frames: var("DRAPE_PERF_FRAMES").unwrap_or(24),
            material: var("DRAPE_PERF_MATERIAL"),
            threads: var("DRAPE_PERF_THREADS"),
            verbose: std::env::var_os("DRAPE_PERF_VERBOSE").is_some(),
            dump: var("DRAPE_PERF_DUMP"),
            assemblies: var("DRAPE_PERF_ASSEMBLIES").unwrap_or(200),
            reps: var("DRAPE_PERF_REPS"),
            rounds: var("DRAPE_PERF_ROUNDS").unwrap_or(9),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preconditioner_names_and_short_forms_parse() {
        assert_eq!(
            parse_preconditioner(" IC "),
            Some(Preconditioner::BlockIncompleteCholesky)
        );
        assert_eq!(
            parse_preconditioner("gs"),
            Some(Preconditioner::BlockGaussSeidel)
        );
        assert_eq!(
            parse_preconditioner("cholesky"),
            Some(Preconditioner::SparseCholesky)
        );
        assert_eq!(parse_preconditioner("fast"), None);
    }

    #[test]
    fn unset_knobs_keep_the_solver_parameters() {
        let params = super::super::default_params();
        let kept = SolverKnobs::default().apply(params.clone());
        assert_eq!(format!("{kept:?}"), format!("{params:?}"));
        let set = SolverKnobs {
            cg_tolerance: Some(1e-3),
            stretch_sweeps: Some(0),
            ..SolverKnobs::default()
        }
        .apply(params);
        assert_eq!((set.cg_tolerance, set.cg_deflated_tolerance), (1e-3, 1e-3));
        assert_eq!(set.stretch_sweeps, 0);
    }
}
