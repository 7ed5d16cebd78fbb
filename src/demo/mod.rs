//! `collect demo`: the whole pipeline against a loopback web started in-process.
//!
//! For machines without internet: search engines, wikis and sites answer on 127.0.0.1 from
//! real captured responses, so a newcomer sees a deduplicated collection and its report.

pub mod loopback;

use crate::acquire::CrawlConfig;
use crate::build::{self, BuildOptions, BuildSummary};
use crate::filter::FilterSettings;
use crate::relevance::RelevanceSettings;
use crate::sign::DedupSettings;
use crate::topic::{SourceSpec, Topic};
use anyhow::{Context, Result};
use loopback::{LoopbackWeb, DEMO_KEYWORDS, LOOPBACK_KEY};
use std::path::PathBuf;

/// Environment variable the demo's Brave and Yandex sources read their (loopback) key from.
const DEMO_KEY_ENV: &str = "COLLECT_DEMO_KEY";

/// The bundled demo topic, pointed at a running loopback web.
pub fn demo_topic(web: &LoopbackWeb) -> Topic {
    Topic {
        name: "demo".into(),
        title: "Demo: every source kind on a loopback web".into(),
        languages: vec!["ru".into(), "en".into()],
        keywords: DEMO_KEYWORDS.iter().map(|k| k.to_string()).collect(),
        sources: web
            .source_configs(DEMO_KEY_ENV)
            .into_iter()
            .map(SourceSpec::from_web)
            .collect(),
        // The captured pages are short; the paper's 100-word floor would leave too few.
        filter: FilterSettings {
            min_words: 30,
            ..FilterSettings::default()
        },
        dedup: DedupSettings::default(),
        crawl: CrawlConfig {
            allow_private: true,
            ..CrawlConfig::default()
        },
        // The keywords are the queries the captured search responses answer ("foo", "hello
        // world"), not a theme the pages share: scoring against them would keep out most of the
        // demo's pages for no reason a newcomer could see.
        relevance: RelevanceSettings {
            enabled: false,
            ..RelevanceSettings::default()
        },
        strict: false,
        base_dir: PathBuf::from("."),
        relevance_examples: Vec::new(),
        file: None,
    }
}

/// Starts the loopback web, builds the demo collection into `out` (replacing an earlier demo).
pub fn run(out: Option<PathBuf>, progress: bool) -> Result<BuildSummary> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let web = runtime
        .block_on(LoopbackWeb::start())
        .context("cannot start the loopback web on 127.0.0.1")?;
    // Only this process reads it, and before any other thread looks at the environment.
    std::env::set_var(DEMO_KEY_ENV, LOOPBACK_KEY);
    let topic = demo_topic(&web);
    // The servers keep running on `runtime`'s threads while the build uses its own runtime.
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
