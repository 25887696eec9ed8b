//! Hostile inputs and careless pipelines (issue 52): each case a regression test that runs
//! the real binary and expects a clear exit 2 (or success), never a hang or a panic.
#[path = "../common/mod.rs"]
mod common;
mod gltf_budgets;
mod gltf_content;
mod gltf_files;
mod gltf_paths;
