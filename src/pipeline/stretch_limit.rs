//! Limit on the stretch a step adds: Provot's correction of over-stretched elements
//! (1995, "Deformation constraints in a mass-spring model to describe rigid cloth
//! behavior", §5), applied after the solve to the triangles whose stretch grew too much.
//!
//! A linearised step moves every particle along a straight line, so a taut edge that
//! turns by φ over the step ends longer by `ℓ (1/cos φ − 1) ≈ ℓ φ²/2`: a second-order
//! stretch that the linear system cannot see. Where it exceeds Baraff's stretch-change
//! limit the step is rejected and halved (§7), and on cloth wrapping over a body that is
//! what holds the step small: the triangles beside the contact zone turn fast. Instead,
//! each triangle whose stretch measure `s = ‖w_u‖` (or `‖w_v‖`, Baraff eq. 9) at the end
//! of the step exceeds `hi = max(s₀, 1) + allow`, with `s₀` its value at the start x₀ of
//! the step, is pulled back to `hi` by the mass-weighted projection of `C = s − hi ≤ 0`:
//!
//! ```text
//! ∂C/∂x_i = c_i ŵ                          c_i = du_i or dv_i (Deformation)
//! δx_i    = −C W_i ∂C/∂x_i / Σ_j c_j ŵᵀ W_j c_j ŵ,   W_i = S_i / m_i
//! ```
//!
//! `S_i` is the particle's constraint filter (Baraff §5.3): a pinned particle does not
//! move, one in body contact only slides along the body. Since `Σ_i c_i = 0` and
//! `Σ_i c_i x_i = w`, a projection among free particles keeps the centre of mass
//! (`Σ_i m_i δx_i = 0`) and adds no angular moment (`Σ_i m_i x_i × δx_i = −λ w × ŵ = 0`);
//! the caller adds `δx/h` to the velocities, as Provot does. Gauss–Seidel sweeps in
//! triangle order (deterministic), first over the violating triangles, then also over
//! the triangles around every particle a sweep moved. Compression is left to the solve:
//! limiting it as well would fight the buckling at the contacts. The step is then checked
//! as before; when the sweeps do not settle, it is checked as the solve left it.
//!
//! The caller holds (`S_i = 0`) what collision handling owns: cloth within a body's
//! thickness of it, particles with a position alteration, and the triangles
//! around every particle with a self-contact spring ([`spread`]): moving layers of cloth
//! lying on each other would leave them where later steps pass cloth through cloth. A
//! limited step that fails its check is judged again as the solve left it. On by default
//! ([`super::SolverParams::stretch_sweeps`] 80).
//!
//! Only in steps where the cloth touches a body, the case it is for: on free cloth
//! Baraff's rejection alone lets hanging cloth come to rest sooner. Nor in keyframe control,
//! whose adjoint pass knows only the solve. (The explicit integrator's edge constraints,
//! `integrators::explicit`, are Provot's original: they cap the strain itself, for a
//! scheme without Baraff's check.)
//!
//! The bound starts from x₀, not from the start after position alteration x₀ + y (from
//! which the jump check also measures, `Simulator::check_and_commit`): an alteration can
//! stretch a small triangle by tens of percent, and a bound from there would let the step
//! keep that stretch.
use crate::forces::deformation::Deformation;
use crate::linalg::pcg::Constraint;
use crate::model::ClothModel;
use crate::{parallel, Mat3, Vec3};

/// Triangles per parallel task of the search for violations.
const CHUNK: usize = 1024;

/// The triangles using each particle (compressed rows), built on first use, and the
/// scratch of the sweeps.
#[derive(Debug, Clone, Default)]
pub struct StretchLimit {
    offsets: Vec<u32>,
    incident: Vec<u32>,
    queued: Vec<bool>,
    /// Particles whose triangles are in the sweep (cleared after each apply, through
    /// `expanded`).
    seen: Vec<bool>,
    expanded: Vec<u32>,
}

/// When [`StretchLimit::apply`] stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settle {
    /// How far past its bound a triangle may stay.
    pub tolerance: f64,
    /// Most Gauss–Seidel sweeps.
    pub max_sweeps: usize,
}

/// What [`StretchLimit::apply`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limited {
    /// Triangles beyond their bound before the sweeps.
    pub violating: usize,
    /// Gauss–Seidel sweeps run.
    pub sweeps: usize,
    /// Whether a sweep found nothing left to move: every triangle within its bound, but
    /// for any whose corners are all held in the direction that would shorten it (the
    /// step's check then judges those).
    pub converged: bool,
}

impl StretchLimit {
    /// Projects `x` until no triangle of `model` exceeds its bound `bound[t]` (per measure
    /// `(‖w_u‖, ‖w_v‖)`, see [`bounds`]) by more than `settle.tolerance` (converged), or
    /// `settle.max_sweeps` sweeps have run; `constraints` hold the filters `S_i` of the
    /// constrained particles, and a particle for which `hold(i)` is true does not move
    /// (`S_i = 0`, whatever its constraint). `hold` is asked only about the corners of
    /// the triangles the sweeps visit. Leaves `x` untouched when nothing exceeds its bound.
    pub fn apply(
        &mut self,
        model: &ClothModel,
        bound: &[[f64; 2]],
        constraints: &[Constraint],
        hold: impl Fn(usize) -> bool,
        settle: Settle,
        x: &mut [Vec3],
    ) -> Limited {
        let Settle {
            tolerance,
            max_sweeps,
        } = settle;
        let excess = |t: usize, x: &[Vec3]| {
            let d = Deformation::new(&model.triangles[t].map(|i| x[i]), &model.rest[t]);
            (d.wu.norm() - bound[t][0]).max(d.wv.norm() - bound[t][1])
        };
        let mut parts: Vec<Vec<u32>> = Vec::new();
        let xs = &*x;
        parallel::chunks(0..model.triangles.len(), CHUNK, &mut parts, |_, range| {
            range
                .filter(|&t| excess(t, xs) > tolerance)
                .map(|t| t as u32)
                .collect()
        });
        let mut sweep: Vec<u32> = parts.into_iter().flatten().collect();
        let mut out = Limited {
            violating: sweep.len(),
            sweeps: 0,
            converged: sweep.is_empty(),
        };
        if out.converged {
            return out;
        }
        self.index(model);
        for &t in &sweep {
            self.queued[t as usize] = true;
        }
        let mut filters = Filters::new(x.len(), constraints);
        let mut moved = Vec::new();
        // The triangles whose corners `hold` has not been asked about yet.
        let mut fresh = sweep.clone();
        while out.sweeps < max_sweeps {
            out.sweeps += 1;
            filters.resolve(model, &fresh, &hold);
            let weighted = |i: usize, g: Vec3| filters.apply(i, g) / model.mass[i];
            moved.clear();
            for &t in &sweep {
                let t = t as usize;
                if project(model, t, bound[t], tolerance, &weighted, x) {
                    moved.push(t);
                }
            }
            if moved.is_empty() {
                out.converged = true;
                break;
            }
            fresh = self.widen(model, &moved, &mut sweep);
        }
        for &t in &sweep {
            self.queued[t as usize] = false;
        }
        for i in self.expanded.drain(..) {
            self.seen[i as usize] = false;
        }
        out
    }

    /// Builds the particle–triangle incidence of `model` unless already built.
    fn index(&mut self, model: &ClothModel) {
        let n = model.len();
        if self.offsets.len() == n + 1 {
            return;
        }
        let mut offsets = vec![0u32; n + 1];
        for t in &model.triangles {
            for &i in t {
                offsets[i + 1] += 1;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut incident = vec![0u32; offsets[n] as usize];
        for (k, t) in model.triangles.iter().enumerate() {
            for &i in t {
                incident[fill[i] as usize] = k as u32;
                fill[i] += 1;
            }
        }
        self.offsets = offsets;
        self.incident = incident;
        self.queued = vec![false; model.triangles.len()];
        self.seen = vec![false; n];
    }

    /// Adds to `sweep` (kept ascending) every triangle around a corner of `moved`; returns
    /// the triangles added (ascending). `queued` marks the triangles of `sweep` for the
    /// whole of [`StretchLimit::apply`], and a corner is expanded once: the sweep only
    /// grows, so the triangles around a corner expanded before are in it already, and a
    /// sweep is never marked and sorted anew.
    fn widen(&mut self, model: &ClothModel, moved: &[usize], sweep: &mut Vec<u32>) -> Vec<u32> {
        let mut added = Vec::new();
        for &t in moved {
            for &i in &model.triangles[t] {
                if std::mem::replace(&mut self.seen[i], true) {
                    continue;
                }
                self.expanded.push(i as u32);
                let around = &self.incident[self.offsets[i] as usize..self.offsets[i + 1] as usize];
                for &n in around {
                    if !std::mem::replace(&mut self.queued[n as usize], true) {
                        added.push(n);
                    }
                }
            }
        }
        if !added.is_empty() {
            added.sort_unstable();
            let old = std::mem::take(sweep);
            sweep.reserve(old.len() + added.len());
            let (mut a, mut b) = (old.iter().peekable(), added.iter().peekable());
            while let (Some(&&p), Some(&&q)) = (a.peek(), b.peek()) {
                if p < q {
                    sweep.push(p);
                    a.next();
                } else {
                    sweep.push(q);
                    b.next();
                }
            }
            sweep.extend(a);
            sweep.extend(b);
        }
        added
    }
}

/// The filters `S_i` of the sweeps: a constraint's, or `0` for a held particle, asked
/// about once, when a sweep first reaches it.
struct Filters {
    filter: Vec<Option<Mat3>>,
    resolved: Vec<bool>,
}

impl Filters {
    fn new(particles: usize, constraints: &[Constraint]) -> Self {
        let mut filter = vec![None; particles];
        for c in constraints {
            filter[c.particle] = Some(c.filter);
        }
        Filters {
            filter,
            resolved: vec![false; particles],
        }
    }

    /// Asks `hold` about every corner of the triangles `sweep` not yet asked about.
    fn resolve(&mut self, model: &ClothModel, sweep: &[u32], hold: &impl Fn(usize) -> bool) {
        for &t in sweep {
            for i in model.triangles[t as usize] {
                if !std::mem::replace(&mut self.resolved[i], true) && hold(i) {
                    self.filter[i] = Some(Mat3::zeros());
                }
            }
        }
    }

    /// `S_i g`.
    fn apply(&self, i: usize, g: Vec3) -> Vec3 {
        self.filter[i].map_or(g, |s| s * g)
    }
}

/// One projection of each measure of triangle `t` that exceeds `bound` by more than
/// `tolerance` (module doc); `weighted(i, g)` is `W_i g`. Whether a particle moved.
///
/// The deformation is evaluated once, and again for the second measure only if the first
/// one moved the corners: most triangles of a sweep are within their bounds.
fn project(
    model: &ClothModel,
    t: usize,
    bound: [f64; 2],
    tolerance: f64,
    weighted: &impl Fn(usize, Vec3) -> Vec3,
    x: &mut [Vec3],
) -> bool {
    let tri = model.triangles[t];
    let deformation = |x: &[Vec3]| Deformation::new(&tri.map(|i| x[i]), &model.rest[t]);
    let mut d = deformation(x);
    let mut moved = false;
    for (k, hi) in bound.into_iter().enumerate() {
        // The second measure sees the first one's projection (Gauss–Seidel).
        if moved {
            d = deformation(x);
        }
        let (w, c) = if k == 0 { (d.wu, d.du) } else { (d.wv, d.dv) };
        let s = w.norm();
        if s - hi <= tolerance {
            continue;
        }
        let dir = w / s;
        let step = [0, 1, 2].map(|a| weighted(tri[a], c[a] * dir));
        let denom: f64 = (0..3).map(|a| c[a] * dir.dot(&step[a])).sum();
        // Every corner held in this direction: nothing can move.
        if denom <= f64::MIN_POSITIVE {
            continue;
        }
        let lambda = (s - hi) / denom;
        for (a, step) in step.iter().enumerate() {
            x[tri[a]] -= lambda * step;
        }
        moved = true;
    }
    moved
}

/// Marks also the corners of every triangle with a marked corner.
pub fn spread(model: &ClothModel, marked: &mut [bool]) {
    let seeds = marked.to_vec();
    for t in &model.triangles {
        if t.iter().any(|&i| seeds[i]) {
            t.iter().for_each(|&i| marked[i] = true);
        }
    }
}

/// Each triangle's bounds `max(s₀, 1) + allow` from its measures `start = (‖w_u‖, ‖w_v‖)`
/// at the start of the step.
pub fn bounds(start: &[[f64; 2]], allow: f64) -> Vec<[f64; 2]> {
    start
        .iter()
        .map(|s| s.map(|v| v.max(1.0) + allow))
        .collect()
}

#[cfg(test)]
#[path = "stretch_limit_tests.rs"]
mod tests;
