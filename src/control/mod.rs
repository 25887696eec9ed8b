//! Keyframe control (Wojtan et al. 2006; Stuyck, *Cloth Simulation for Computer Graphics*,
//! ch. 8): per-frame control forces found by L-BFGS on keyframe error plus force
//! regularisation (3D shapes or silhouettes seen by a camera), with gradients from an
//! adjoint pass backwards in time.
pub mod adjoint;
pub mod keyframes;
pub mod lbfgs;
pub mod objective;
pub mod problem;
pub mod silhouette;
pub mod tape;
