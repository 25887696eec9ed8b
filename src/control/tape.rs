//! The forward pass of one evaluation of Φ and the backward sweep over it, with
//! checkpointing so that memory stays bounded on long shots.
//!
//! The forward pass simulates the control horizon with the current control forces. It keeps
//! the [`StepRecord`]s of every step when they fit the memory budget; otherwise it keeps a
//! copy of the simulator (a checkpoint) at the start of every segment of `L` frames and the
//! records of the last segment only. The backward sweep walks the segments from the last:
//! a segment without records is simulated again from its checkpoint (bit-identical, the
//! simulation is deterministic) to record its steps, then the adjoint runs through them
//! backwards. Memory: `H/L` checkpoints plus `L` frames of records (`L ≈ √H` at worst);
//! time: at most one extra forward pass.
use super::adjoint::AdjointSolver;
use super::objective::{Breakdown, Objective};
use crate::error::Result;
use crate::pipeline::{FrameStats, Simulator, StepRecord};
use crate::Vec3;

/// What one forward pass leaves for the backward sweep.
#[derive(Debug)]
pub struct Forward {
    /// Φ's keyframe part and the keyframe error (forces not included).
    pub breakdown: Breakdown,
    /// `(interval, ∂Φ/∂x, ∂Φ/∂v)` of each keyframe term in time order (at one interval:
    /// 3D keyframes in key order, then silhouettes).
    seeds: Vec<Seed>,
    /// Segments in time order.
    segments: Vec<Segment>,
    /// Solver figures summed over the pass.
    pub stats: FrameStats,
}

/// One keyframe term's adjoint seeds: `(interval, ∂Φ/∂x, ∂Φ/∂v)` (no `∂Φ/∂v` for a
/// silhouette).
type Seed = (usize, Vec<Vec3>, Option<Vec<Vec3>>);

#[derive(Debug)]
struct Segment {
    start: usize,
    len: usize,
    /// The simulator at the segment's start (absent when `records` are kept).
    checkpoint: Option<Box<Simulator>>,
    /// Step records per interval of the segment, when kept.
    records: Option<Vec<Vec<StepRecord>>>,
}

/// Runs interval `n` of the horizon: control forces of `theta` on, one frame of `1/fps`
/// ([`crate::bake::advance_frame`], the frame step of every bake).
fn advance(
    sim: &mut Simulator,
    objective: &Objective,
    theta: &[f64],
    n: usize,
    fps: f64,
) -> Result<FrameStats> {
    crate::bake::advance_frame(sim, Some(objective.forces(theta, n)), fps)
}

/// Simulates the horizon from `template` with controls `theta`, in segments of
/// `segment` frames (≥ the horizon: every step recorded, no recomputation).
pub fn forward(
    template: &Simulator,
    objective: &Objective,
    theta: &[f64],
    fps: f64,
    segment: usize,
) -> Result<Forward> {
    let horizon = objective.horizon();
    let segment = segment.clamp(1, horizon.max(1));
    let mut sim = template.clone();
    let mut segments = Vec::new();
    let mut seeds = Vec::new();
    let mut breakdown = Breakdown::default();
    let mut error_sum = 0.0;
    let (mut silhouette_sum, mut iou_sum) = (0.0, 0.0);
    let mut stats = FrameStats::default();
    let (mut next_key, mut next_silhouette) = (0, 0);
    for start in (0..horizon).step_by(segment) {
        let len = segment.min(horizon - start);
        let keep = start + len == horizon;
        let checkpoint = (!keep).then(|| Box::new(sim.clone()));
        sim.record_steps(keep);
        let mut records = Vec::new();
        for n in start..start + len {
            let s = advance(&mut sim, objective, theta, n, fps)?;
            stats.steps += s.steps;
            stats.rejections += s.rejections;
            stats.cg_iterations += s.cg_iterations;
            if keep {
                records.push(sim.take_records());
            }
            while next_key < objective.keys.len() && objective.keys[next_key].interval == n {
                let (value, gx, gv, error) =
                    objective.key_term(next_key, sim.positions(), sim.velocities());
                breakdown.keyframes += value;
                error_sum += error;
                seeds.push((n, gx, Some(gv)));
                next_key += 1;
            }
            while (objective.silhouettes.get(next_silhouette)).is_some_and(|k| k.interval == n) {
                let (value, gx, error, iou) =
                    objective.silhouette_term(next_silhouette, sim.positions());
                breakdown.silhouettes += value;
                silhouette_sum += error;
                iou_sum += iou;
                seeds.push((n, gx, None));
                next_silhouette += 1;
            }
        }
        segments.push(Segment {
            start,
            len,
            checkpoint,
            records: keep.then_some(records),
        });
    }
    breakdown.keyframe_error = (error_sum / objective.keys.len().max(1) as f64).sqrt();
    let silhouettes = objective.silhouettes.len().max(1) as f64;
    breakdown.silhouette_error = (silhouette_sum / silhouettes).sqrt();
    breakdown.silhouette_iou = iou_sum / silhouettes;
    Ok(Forward {
        breakdown,
        seeds,
        segments,
        stats,
    })
}

/// The backward sweep over `forward`: `∂Φ_keys/∂θ` (the regularisation is added by the
/// caller).
pub fn backward(
    forward: Forward,
    template: &Simulator,
    objective: &Objective,
    theta: &[f64],
    fps: f64,
    solver: &mut AdjointSolver,
) -> Result<Vec<f64>> {
    let model = template.model();
    let params = template.params();
    let p = model.len();
    let mut gradient = vec![0.0; theta.len()];
    let mut lx = vec![Vec3::zeros(); p];
    let mut lv = vec![Vec3::zeros(); p];
    let mut du = vec![Vec3::zeros(); p];
    let Forward {
        mut seeds,
        segments,
        ..
    } = forward;
    for seg in segments.into_iter().rev() {
        let records = match seg.records {
            Some(r) => r,
            None => {
                let mut sim = *seg.checkpoint.ok_or_else(|| {
                    crate::Error::Internal("control tape: segment without checkpoint".into())
                })?;
                sim.record_steps(true);
                let mut records = Vec::with_capacity(seg.len);
                for n in seg.start..seg.start + seg.len {
                    advance(&mut sim, objective, theta, n, fps)?;
                    records.push(sim.take_records());
                }
                records
            }
        };
        for (k, steps) in records.iter().enumerate().rev() {
            let n = seg.start + k;
            while let Some((_, gx, gv)) = seeds.pop_if(|s| s.0 == n) {
                lx.iter_mut().zip(&gx).for_each(|(l, g)| *l += g);
                if let Some(gv) = gv {
                    lv.iter_mut().zip(&gv).for_each(|(l, g)| *l += g);
                }
            }
            du.iter_mut().for_each(|d| *d = Vec3::zeros());
            // The adjoint of one frame interval is a few solves: a stop waits for no more.
            if template.stop().requested() {
                return Err(crate::Error::Interrupted(
                    "stopped by a request during an adjoint sweep".into(),
                ));
            }
            for rec in steps.iter().rev() {
                solver.step(rec, model, params, &mut lx, &mut lv, &mut du);
            }
            let block = &mut gradient[3 * p * n..3 * p * (n + 1)];
            for ((g, d), unit) in block.chunks_exact_mut(3).zip(&du).zip(&objective.unit) {
                g[0] = d.x * unit;
                g[1] = d.y * unit;
                g[2] = d.z * unit;
            }
        }
    }
    Ok(gradient)
}
