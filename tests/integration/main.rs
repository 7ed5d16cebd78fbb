//! The integration tests, as one binary: the crate is linked once, not once per file.
//! One module per area; what they share is in `common`.
//!
//! `cargo test --test integration AREA::` runs one area, e.g. `acquire::sites::` or `grow::`.

mod common;

mod acquire;
mod build_cli;
mod cli_ergonomics;
mod cli_new;
mod curation;
mod demo_cli;
mod documents;
mod eval_cli;
mod fault_zoo;
mod grow;
mod html_stress;
mod kept_texts;
mod local_inputs;
mod mediawiki_build;
mod multi_topic;
mod postings_vs_naive;
mod relevance;
mod resume_cli;
mod review_page;
mod spark;
mod store_damage;
mod update_web;
mod warc;
mod wikitext_articles;
mod wikitext_stress;
mod worker;
