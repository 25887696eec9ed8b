//! Command-line flags (clap), as the command reference (`docs/reference.md`) lists them.
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// drape — Baraff–Witkin cloth simulation: garments in, point caches out.
#[derive(Debug, Parser)]
#[command(
    name = "drape",
    // `drape 0.1.0 (3c18a31)`: the commit the binary was built from (build.rs).
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("DRAPE_COMMIT"), ")"),
    about,
    long_about = None,
    after_help = "Exit codes: 0 success, 2 bad input or usage (the message names the file, the \
                  object and the fix), 3 simulation failed or the disk filled (partial cache kept), 130 \
                  interrupted by SIGINT/SIGTERM (partial cache kept), 1 internal error.\n\
                  Run `drape <COMMAND> --help` for every flag and its default."
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate garments and write one point cache per garment.
    Simulate(Box<SimulateArgs>),
    /// Find gentle control forces that make the simulated garment hit keyframe shapes
    /// (adjoint method + L-BFGS) and write the controlled cache.
    Control(Box<ControlArgs>),
    /// Print what drape sees in a scene: garments, panels, seams, pins.
    Inspect(InspectArgs),
    /// Run the standard benchmark scenes (or the given scenes) and print per-frame times.
    Bench(BenchArgs),
    /// Bake the shots of a manifest N at a time, or write them as a render-farm job
    /// (Open Job Description, Slurm, OpenCue).
    Batch(BatchArgs),
    /// Run the standard fabric tests (Cusick drape, cantilever bending, strip tensile) on a
    /// material, or fit a material JSON file to a fabric's measured figures.
    Calibrate(CalibrateArgs),
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// A bar when stderr is a terminal, nothing otherwise.
    Auto,
    /// A progress bar on stderr.
    Bar,
    /// One JSON object per line on stderr (docs/reference.md, "Progress").
    Json,
    /// For render farms: `PROGRESS: N%` per frame and `OUTPUT_FILE:/abs/path;` per cache
    /// written, on stdout; warnings and errors as plain lines on stderr.
    Plain,
    /// Nothing but errors.
    None,
}

/// Axis convention of the written cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UpArg {
    /// Y up.
    Y,
    /// Z up (Y-up → Z-up is (x, y, z) → (x, −z, y)).
    Z,
}

/// Time integrators of `--integrator` (trade-offs: [`crate::pipeline::Integrator`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IntegratorArg {
    /// Linearised backward Euler of Baraff & Witkin (1998): stable at large steps, damps
    /// motion more the larger the step.
    Implicit,
    /// Second-order backward differences: the implicit step's cost, far less damping.
    Bdf2,
    /// Kang–Cho approximate implicit update (a few Jacobi sweeps): several times faster,
    /// less accurate; for look-dev.
    Preview,
    /// Projective dynamics on the spring network (prefactored, local–global iterations):
    /// fast, more damped, no self-collision.
    Projective,
    /// Symplectic Euler with Provot's stretch limit, sub-stepped: slow for stiff cloth.
    Explicit,
}

impl From<IntegratorArg> for crate::pipeline::Integrator {
    fn from(a: IntegratorArg) -> Self {
        use crate::pipeline::Integrator as I;
        match a {
            IntegratorArg::Implicit => I::Implicit,
            IntegratorArg::Bdf2 => I::Bdf2,
            IntegratorArg::Preview => I::Preview,
            IntegratorArg::Projective => I::Projective,
            IntegratorArg::Explicit => I::Explicit,
        }
    }
}

/// Force models of `--model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    /// Triangle stretch / shear and hinge bend conditions (Baraff §4).
    Continuum,
    /// Springs: stretch on edges, shear-and-bend across each hinge (Kang & Cho, Choi & Ko).
    MassSpring,
}

impl From<ModelArg> for crate::pipeline::ForceModel {
    fn from(a: ModelArg) -> Self {
        match a {
            ModelArg::Continuum => crate::pipeline::ForceModel::Continuum,
            ModelArg::MassSpring => crate::pipeline::ForceModel::MassSpring,
        }
    }
}

/// `drape simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Scene file: .gltf / .glb, .usda / .usdc / .usd, an Alembic .abc, a Houdini .geo (JSON)
    /// or a .json scene file.
    pub scene: PathBuf,
    /// Node / prim / file-stem name of a garment (repeatable). Default: meshes marked as
    /// garments (glTF extras `drape.role = "garment"` or `drape_role`, USD
    /// `userProperties:drape_role` or customData `drape:role`, Houdini detail `drape_role`).
    #[arg(long = "garment", value_name = "NAME")]
    pub garments: Vec<String>,
    /// Collision body, static or animated (repeatable). Default: every other mesh.
    #[arg(long = "body", value_name = "NAME")]
    pub bodies: Vec<String>,
    /// Inclusive frame range A..B (negative frames too: --frames -5..-3). At most
    /// 1,000,000 frames and 16 GiB of point data (frames × points × 12 bytes, all
    /// garments) per bake. Default: the scene's animation range, else 1..48.
    #[arg(long, value_name = "A..B", allow_hyphen_values = true)]
    pub frames: Option<String>,
    /// Frames per second, 1 to 1000. Default: from the file, else 24.
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub fps: Option<f64>,
    /// The glTF clip, the folders external files may come from and USD variants.
    #[command(flatten)]
    pub input: InputArgs,
    /// Material preset (cotton, silk, denim, jersey, leather) or a JSON file (e.g. one of
    /// the calibrated fabrics in materials/) whose fields (density kg/m², stretch_u/stretch_v/shear N/m, bend_u/bend_v/bend_bias N·m,
    /// their *_damping, bu, bv, drag, friction, thickness m) override those of its "base"
    /// preset (default cotton); docs/reference.md, "Materials".
    #[arg(long, value_name = "M", default_value = "cotton")]
    pub material: String,
    /// Cache path; the extension picks the format: .pc2, .mdd, .usda (or .usd, USD text),
    /// or a Houdini .geo sequence with $F or $F4 in the file name ('shirt.$F4.geo', one file
    /// per frame). `{garment}` expands to each garment's name. Frames are written to
    /// `<PATH>.partial` as they finish and renamed at the end. Default: `<garment>.pc2`
    /// beside the scene.
    #[arg(short = 'o', long = "out", value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Multiply every length of the input by S: `--scale 0.01` reads a scene modelled in
    /// centimetres but exported as metres. Caches are written back in the file's own
    /// units. Default: 1 (a warning names garments and animated bodies wider than 5 m or
    /// smaller than 5 cm).
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub scale: f64,
    /// Axis convention of the written cache. Default: that of the garment's source file.
    #[arg(long, value_enum, value_name = "y|z")]
    pub up: Option<UpArg>,
    /// Metres per UV unit, or `auto`: scale each panel so its UV area equals its 3D area at
    /// the first frame.
    #[arg(long = "uv-scale", value_name = "auto|S", default_value = "auto")]
    pub uv_scale: String,
    /// Rest state: `uv` the UV panels (the UVs are the sewing pattern), `shape` the
    /// modelled shape at the first frame (seams still from the UVs), `auto` each panel's UV
    /// layout where it matches the shape within 15% stretch and the shape elsewhere, with a
    /// warning naming the panels. Use `uv` for a garment modelled stretched on purpose.
    #[arg(long, value_name = "auto|uv|shape", default_value = "auto")]
    pub rest: String,
    /// Largest time step in seconds, 1e-5 to 1; steps adapt below it (Baraff §7). Default:
    /// one frame.
    #[arg(long = "max-step", value_name = "S", allow_negative_numbers = true)]
    pub max_step: Option<f64>,
    /// Time integrator.
    #[arg(long, value_enum, default_value = "implicit")]
    pub integrator: IntegratorArg,
    /// Force model.
    #[arg(long, value_enum, default_value = "continuum")]
    pub model: ModelArg,
    /// Wind velocity X,Y,Z in m/s, seen by air drag and lift (lift is on only with
    /// --wind). Default: none.
    #[arg(long, value_name = "X,Y,Z", allow_hyphen_values = true)]
    pub wind: Option<String>,
    /// Worker threads. Default: every processor this process may use (CPU affinity and
    /// cgroup quotas count); more are capped to that, with a warning. Results are
    /// identical for any count.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Progress display on stderr (stdout stays free for command output). A first
    /// SIGINT/SIGTERM (Ctrl-C) stops at the next frame boundary with exit code 130, a
    /// second at once.
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: ProgressMode,
    /// Write a JSON report to FILE, also when the bake fails or is interrupted: status,
    /// outputs and per frame the steps, CG iterations, residuals, step rejections,
    /// contacts and seconds (summed and per garment). Default: no report.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Overwrite existing outputs. Default: refuse with exit code 2 if any output (for a
    /// .geo sequence: any of its frame files) exists.
    #[arg(long)]
    pub force: bool,
    /// Write the checkpoint `<out>.checkpoint` (beside the first cache) every N simulated
    /// frames; 0: never. It is removed when the bake finishes. Default: whenever the
    /// frames since the last took 50 times as long as writing it (under 2% of the bake).
    #[arg(long = "checkpoint-every", value_name = "N")]
    pub checkpoint_every: Option<usize>,
    /// Continue an interrupted bake (SIGINT, SIGTERM, SIGKILL, power cut) from its
    /// checkpoint and partial caches, byte for byte as if it had never stopped; without a
    /// checkpoint, start from the first frame (so a farm task can always pass it). A
    /// checkpoint of another build, scene or option set is refused (exit 2). Default: off.
    #[arg(long)]
    pub resume: bool,
}

/// `drape control`: every `simulate` flag, plus the keyframes and the optimiser's.
#[derive(Debug, Args)]
pub struct ControlArgs {
    /// Scene, garments, bodies, frames, material, output and the other common options.
    #[command(flatten)]
    pub sim: SimulateArgs,
    /// Keyframe source: the scene itself (glTF morph targets / Blender shape keys named
    /// `key_<frame>`, USD meshes `<garment>_key_<frame>`), another such file, or an MDD
    /// file whose time table gives the frames (frame = time × fps). Default: the scene
    /// file's `keyframes.source`, else the scene itself.
    #[arg(long, value_name = "SOURCE")]
    pub keyframes: Option<PathBuf>,
    /// Silhouette keyframes: a JSON file with a camera and, per keyframe, the target
    /// outline in the camera's image (docs/reference.md, "Keyframe silhouettes"). Without
    /// --keyframes, only the silhouettes are asked for; with it, both. One garment.
    #[arg(long, value_name = "FILE.json")]
    pub silhouettes: Option<PathBuf>,
    /// Price α of control forces against keyframe error: with α = 1e-3, pushing every
    /// particle with its own weight for one frame costs as much as a 3.2 cm RMS miss at one
    /// keyframe. Lower hits the keyframes more exactly with stronger forces. Default: the
    /// scene file's `keyframes.regularization`, else 1e-4.
    #[arg(long, value_name = "ALPHA")]
    pub regularization: Option<f64>,
    /// L-BFGS iterations at most (each is one or a few forward + adjoint simulations of the
    /// frames up to the last keyframe). Default: the scene file's
    /// `keyframes.iterations`, else 40.
    #[arg(long, value_name = "N")]
    pub iterations: Option<usize>,
    /// Weight β (s²) of the garment's speed at the keyframes: > 0 asks it to arrive at
    /// rest. Default 0.
    #[arg(
        long = "key-velocity-weight",
        value_name = "BETA",
        default_value_t = 0.0
    )]
    pub key_velocity_weight: f64,
}

/// `drape inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Scene file: .gltf / .glb, .usda / .usdc / .usd, an Alembic .abc, a Houdini .geo (JSON)
    /// or a .json scene file.
    pub scene: PathBuf,
    /// Print JSON on stdout (docs/reference.md, "inspect --json"). Default: a readable
    /// summary.
    #[arg(long)]
    pub json: bool,
    /// Multiply every length of the input by S, as `simulate --scale` does. Default: 1.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub scale: f64,
    /// The glTF clip, the folders external files may come from and USD variants.
    #[command(flatten)]
    pub input: InputArgs,
}

/// How input files are read (`simulate`, `control`, `inspect`).
#[derive(Debug, Clone, Default, Args)]
pub struct InputArgs {
    /// glTF animation clip to play, by name or index (`drape inspect` lists them). Default:
    /// the file's first clip, the action Blender makes active when it imports the file.
    #[arg(long, value_name = "NAME")]
    pub animation: Option<String>,
    /// A folder glTF buffers and images may also come from (repeatable). Default: only the
    /// glTF file's own folder and those below it.
    #[arg(long = "allow-paths", value_name = "DIR")]
    pub allow_paths: Vec<PathBuf>,
    /// USD variant selection SET=NAME (repeatable), over the one authored in the file, e.g.
    /// `--variant modelVariant=Fancy`. Default: every selection as authored.
    #[arg(long = "variant", value_name = "SET=NAME")]
    pub variants: Vec<String>,
}

/// `drape bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Scenes to time; default: the two-corner sheet of Baraff fig. 2 at 500, 900, 2,600
    /// and 7,400 particles.
    pub scenes: Vec<PathBuf>,
    /// Frames to simulate per scene.
    #[arg(long, default_value_t = 24)]
    pub frames: usize,
    /// Print JSON on stdout. Default: a readable table.
    #[arg(long)]
    pub json: bool,
    /// Worker threads. Default: every processor this process may use; more are capped.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// `drape batch`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 every shot finished; 130 the batch was stopped \
    (SIGINT/SIGTERM: running shots stop within a second and keep their partial caches); \
    otherwise the most severe code of a failed shot: 1 (internal error, or a shot killed \
    by a signal), then 3 (simulation failed), then 2 (bad input), then 130."
)]
pub struct BatchArgs {
    /// The batch manifest: {"shots": [{"name", "scene", "out", "frames", "options"}]},
    /// paths relative to it (docs/reference.md, "Batch manifest").
    pub manifest: PathBuf,
    /// Shots baked at once; each gets max(1, processors / N) worker threads.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "emit")]
    pub jobs: usize,
    /// Write the job for a scheduler into DIR instead of baking: `openjd` (an Open Job
    /// Description template), `slurm` (a job array script) or `opencue` (a pyoutline
    /// submission script); one task per shot, each continuing an interrupted bake.
    #[arg(long, num_args = 2, value_names = ["ENGINE", "DIR"])]
    pub emit: Option<Vec<String>>,
    /// Bake every shot again from its first frame. Default: shots whose cache exists are
    /// reported as done and not run; unfinished ones continue.
    #[arg(long, conflicts_with = "emit")]
    pub force: bool,
    /// Where the JSON summary goes. Default: `<manifest stem>.summary.json` beside the
    /// manifest (the shots' logs and reports go to `<manifest stem>.logs/`).
    #[arg(long, value_name = "FILE", conflicts_with = "emit")]
    pub summary: Option<PathBuf>,
}

/// `drape calibrate`.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --bending-length: measures --material (default cotton) in \
    the simulated tests and prints the figures. With --density and --bending-length: fits \
    bending rigidities (and, with --drape-coefficient, the shear modulus) so that the \
    simulated tests give the measured figures, and writes the material JSON to -o. \
    Lengths take a unit: 2.1cm, 21mm or 0.021 (metres). See docs/materials.md."
)]
pub struct CalibrateArgs {
    /// The material to measure, or the base of the fit (its stretch, damping, friction and
    /// thickness are kept): a preset or a JSON file.
    #[arg(long, default_value = "cotton", value_name = "M")]
    pub material: String,
    /// Measured areal density, kg/m² (e.g. 0.12 for 120 g/m²).
    #[arg(long, value_name = "KG_PER_M2", requires = "bending_length")]
    pub density: Option<f64>,
    /// Measured cantilever bending length (ASTM D1388) of the weft, or of both directions.
    #[arg(long, value_name = "LENGTH", requires = "density")]
    pub bending_length: Option<String>,
    /// Measured cantilever bending length of the warp. Default: as --bending-length.
    #[arg(long, value_name = "LENGTH", requires = "bending_length")]
    pub bending_length_warp: Option<String>,
    /// Measured Cusick drape coefficient (0 … 1, or a percentage such as 45%).
    #[arg(long, value_name = "DC", requires = "bending_length")]
    pub drape_coefficient: Option<String>,
    /// Particle spacing of the simulated specimens: the spacing of the garments the
    /// material is for.
    #[arg(long, value_name = "LENGTH", default_value = "1cm")]
    pub spacing: String,
    /// Where the fitted material JSON goes (required with --bending-length).
    #[arg(short, long, value_name = "FILE.json", requires = "bending_length")]
    pub output: Option<PathBuf>,
    /// Replace an existing -o file.
    #[arg(long)]
    pub force: bool,
    /// Print JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
}
