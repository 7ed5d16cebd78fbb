//! `collect demo`: the whole pipeline against a loopback web started in-process.
//!
//! For machines without internet: search engines, wikis and sites answer on 127.0.0.1 from
//! real captured responses, so a newcomer sees a deduplicated collection and its report.

pub mod loopback;
pub mod web;

use crate::acquire::CrawlConfig;
use crate::build::{self, BuildOptions, BuildSummary};
use crate::filter::FilterSettings;
use crate::relevance::RelevanceSettings;
use crate::sign::DedupSettings;
use crate::topic::{SourceSpec, Topic};
use anyhow::{Context, Result};
use loopback::LOOPBACK_KEY;
use std::path::PathBuf;
use web::DemoWeb;

/// Environment variable the demo's Brave source reads its (loopback) key from.
const DEMO_KEY_ENV: &str = "COLLECT_DEMO_KEY";

/// The demo topic's keywords: its theme, software packaging, in English and Russian.
pub const DEMO_KEYWORDS: &[&str] = &[
    "packaging",
    "Debian package",
    "Python package",
    "пакет",
    "сборка пакета",
];

/// The bundled demo topic, pointed at a running demo web.
pub fn demo_topic(web: &DemoWeb) -> Topic {
    Topic {
        name: "demo".into(),
        title: "Demo: software packaging (Debian, Ubuntu, Python), in English and Russian".into(),
        languages: vec!["en".into(), "ru".into()],
        keywords: DEMO_KEYWORDS.iter().map(|k| k.to_string()).collect(),
        sources: web
            .sources(DEMO_KEY_ENV)
            .into_iter()
            .map(SourceSpec::from_web)
            .collect(),
        filter: FilterSettings::default(),
        dedup: DedupSettings::default(),
        crawl: CrawlConfig {
            allow_private: true,
            resolve: web.resolve(),
            ..CrawlConfig::default()
        },
        relevance: RelevanceSettings::default(),
        review: Default::default(),
        strict: false,
        base_dir: PathBuf::from("."),
        relevance_examples: Vec::new(),
        file: None,
    }
}

/// Starts the demo web, builds the demo collection into `out` (replacing an earlier demo).
pub fn run(out: Option<PathBuf>, progress: bool) -> Result<BuildSummary> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let web = runtime.block_on(DemoWeb::start())?;
    // Only this process reads it, and before any other thread looks at the environment.
    std::env::set_var(DEMO_KEY_ENV, LOOPBACK_KEY);
    let topic = demo_topic(&web);
    // The server keeps running on `runtime`'s threads while the build uses its own runtime.
    let summary = build::build(
        &topic,
        &BuildOptions {
            out,
            force: true,
            progress,
            strict: false,
        },
    )?;
    drop(web);
    Ok(summary)
}
