//! Point-cache writers. Frames are appended to `<out>.partial` as they finish, with a header
//! that is valid after every frame; on success the partial file is renamed over `<out>`.
pub mod pc2;
