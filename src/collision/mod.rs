//! Collisions of cloth with animated bodies (Baraff §5–§6, Stuyck §5.6–5.8).
//!
//! * [`bvh`]: a bounding volume hierarchy over triangles, built once, refitted each step.
//! * [`geometry`]: closest points on triangles and segments, continuous point–triangle and
//!   edge–edge hits.
//! * [`body`]: a body's positions at the start and end of the current step.
//! * [`contact`]: contacts as exact PCG constraints with position alteration and friction.
//! * [`overlap`]: cloth that starts inside a body, let through it and eased out.
//! * [`untangle`]: cloth that starts crossing itself, brought back through (Baraff, Witkin
//!   & Kass 2003, global intersection analysis).
//! * [`self_contact`]: cloth self-repulsion and the crossing check.
//! * [`layers`]: which particles have cloth between them and a body.
//! * `pairs`: the point–triangle and edge–edge tests of self-collision.
//! * [`patches`]: the cloth patches that cannot touch themselves in a step (culling).
pub mod body;
pub mod bvh;
pub mod contact;
pub mod geometry;
pub mod layers;
pub mod overlap;
mod pairs;
pub mod patches;
pub mod self_contact;
pub mod untangle;

pub use body::BodyState;
pub use contact::BodyContacts;
