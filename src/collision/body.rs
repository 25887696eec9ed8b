//! Collision bodies during a step: positions at the step's start and end (sampled from the
//! body's animation), per-vertex velocities from the two, and a BVH over the triangles'
//! swept boxes, refitted every step.
use super::bvh::{Aabb, Bvh};
use crate::error::{Error, Result};
use crate::scene::Body;
use crate::Vec3;

/// One body as the contact stage sees it during the current step.
#[derive(Debug, Clone)]
pub struct BodyState {
    /// Body name (for messages).
    pub name: String,
    /// Triangles with non-zero area (degenerate faces are dropped at load).
    pub triangles: Vec<[usize; 3]>,
    /// Collision thickness (m): cloth particles are kept this far outside the surface.
    pub thickness: f64,
    /// Coulomb friction coefficient.
    pub friction: f64,
    /// Vertex positions at the start of the step (m).
    pub x0: Vec<Vec3>,
    /// Vertex positions at the end of the step (m).
    pub x1: Vec<Vec3>,
    animation: crate::scene::Animation,
    boxes: Vec<Aabb>,
    bvh: Bvh,
}

impl BodyState {
    /// Prepares `body` with defaults for thickness and friction from the material. Bodies
    /// with non-finite positions or no usable triangles are input errors.
    pub fn new(body: &Body, thickness: f64, friction: f64) -> Result<Self> {
        let anim = &body.animation;
        let nv = anim.positions.first().map_or(0, Vec::len);
        for (k, frame) in anim.positions.iter().enumerate() {
            if frame.len() != nv {
                return Err(Error::input(&body.source, Some(&body.name), format!(
                    "animation sample {k} has {} vertices, the first has {nv}; re-export the body with a fixed topology", frame.len()
                )));
            }
            if let Some(i) = frame.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
                return Err(Error::input(&body.source, Some(&body.name), format!(
                    "vertex {i} has a non-finite position at animation sample {k}; fix the mesh or its animation"
                )));
            }
        }
        let first = anim.positions.first().cloned().unwrap_or_default();
        let mut triangles = Vec::with_capacity(body.triangles.len());
        for (k, t) in body.triangles.iter().enumerate() {
            if t.iter().any(|&i| i >= nv) {
                return Err(Error::input(&body.source, Some(&body.name), format!(
                    "triangle {k} refers to a vertex beyond the mesh's {nv} vertices; re-export the mesh"
                )));
            }
            let n = (first[t[1]] - first[t[0]]).cross(&(first[t[2]] - first[t[0]]));
            if n.norm() > 1e-14 {
                triangles.push(*t);
            }
        }
        if triangles.is_empty() {
            return Err(Error::input(&body.source, Some(&body.name), "the body has no triangle with non-zero area; give it faces or leave it out with --body"));
        }
        let mut state = BodyState {
            name: body.name.clone(),
            thickness: body.thickness.unwrap_or(thickness),
            friction: body.friction.unwrap_or(friction),
            x0: first.clone(),
            x1: first,
            animation: anim.clone(),
            boxes: Vec::new(),
            bvh: Bvh::build(&[]),
            triangles,
        };
        state.boxes = state.swept_boxes();
        state.bvh = Bvh::build(&state.boxes);
        Ok(state)
    }

    /// Samples the body at the start and end frames of a step and refits the BVH to the
    /// triangles swept between them, inflated by the thickness.
    pub fn advance_to(&mut self, frame0: f64, frame1: f64) {
        self.x0 = self.animation.sample(frame0);
        self.x1 = self.animation.sample(frame1);
        self.boxes = self.swept_boxes();
        self.bvh.refit(&self.boxes);
    }

    /// The body's whole animation (world-space vertex positions over time).
    pub fn animation(&self) -> &crate::scene::Animation {
        &self.animation
    }

    /// True if the body never moves.
    pub fn is_static(&self) -> bool {
        self.animation.frames.len() == 1
    }

    fn swept_boxes(&self) -> Vec<Aabb> {
        self.triangles
            .iter()
            .map(|t| {
                let mut b = Aabb::empty();
                for &i in t {
                    b.include(self.x0[i]);
                    b.include(self.x1[i]);
                }
                b.inflate(self.thickness)
            })
            .collect()
    }

    /// Triangles whose swept box overlaps `query`.
    pub fn candidates(&self, query: &Aabb, f: impl FnMut(usize)) {
        self.bvh.query(query, f)
    }

    /// Corners of triangle `t` at the step's start and end.
    pub fn corners(&self, t: usize) -> ([Vec3; 3], [Vec3; 3]) {
        let tri = self.triangles[t];
        (tri.map(|i| self.x0[i]), tri.map(|i| self.x1[i]))
    }
}
