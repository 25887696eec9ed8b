//! File-format details shared by the readers ([`crate::io`]) and the cache writers
//! ([`crate::cache`]), so that neither depends on the other: frame-number fields in file
//! names ([`FramePattern`]), the text of f32 values ([`text`]), the MDD byte layout
//! ([`mdd`]) and the binary encoding of checkpoints ([`binary`]).
pub mod binary;
pub mod frame_pattern;
pub mod mdd;
pub mod text;

pub use frame_pattern::FramePattern;

/// The points of one frame of a point cache, in file order, as stored (f32).
pub type Sample = Vec<[f32; 3]>;
