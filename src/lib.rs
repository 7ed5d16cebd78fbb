//! collect: thematic text collections from the web, cleaned and deduplicated.
//!
//! The modules follow the pipeline; ARCHITECTURE.md has the code map.

pub mod error;
pub mod progress;
pub mod testhooks;
pub mod topic;

pub mod acquire;
pub mod build;
pub mod canon;
pub mod clean;
pub mod collection;
pub mod dedup;
pub mod filter;
pub mod markup;
pub mod readers;
pub mod relevance;
pub mod review;
pub mod rule;
pub mod sign;
pub mod store;

pub mod cli;
pub mod demo;
pub mod workbench;
