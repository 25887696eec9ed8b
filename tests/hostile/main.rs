//! Hostile inputs and environments: what users, careless pipelines and crafted files do to
//! drape, one module per topic, each case a regression test (issue 52).
#[path = "../common/mod.rs"]
mod common;
mod support;

mod alembic_files;
mod cli_budgets;
mod gltf_budgets;
mod gltf_content;
mod gltf_files;
mod gltf_paths;
mod outputs_kill;
mod outputs_lock;
mod outputs_names;
mod outputs_sequence;
mod process_streams;
mod usdc_files;
