//! collect: thematic text collections from the web, cleaned and deduplicated.
//!
//! The pipeline's stages each live in one module; see ARCHITECTURE.md.

pub mod acquire;
pub mod canon;
pub mod clean;
pub mod cli;
pub mod dedup;
pub mod error;
pub mod eval;
pub mod export;
pub mod learned;
pub mod pipeline;
pub mod progress;
pub mod relation;
pub mod review;
pub mod serve;
pub mod signature;
pub mod sources;
pub mod stats;
pub mod store;
pub mod store_ext;
pub mod topic;
pub mod update;
