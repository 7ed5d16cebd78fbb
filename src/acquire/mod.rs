//! Web acquisition: search engines, wiki APIs and site crawls feeding a
//! durable frontier, fetched politely (robots.txt, per-host pacing).

pub mod charset;
pub mod config;
pub mod fetcher;
pub mod frontier;
pub mod policy;
pub mod report;
pub mod sources;
pub mod urls;

use std::collections::HashSet;
use std::sync::Mutex;

pub use config::{
    BraveConfig, CrawlConfig, DuckDuckGoConfig, MediaWikiConfig, SearxngConfig, SitesConfig,
    TuplesConfig, WebSourceConfig, WikiText, YandexConfig, DEFAULT_USER_AGENT,
};
pub use fetcher::{FetchKind, Fetcher, PageOutcome};
pub use frontier::{
    FetchedPage, Frontier, MemoryFrontier, Payload, SkipReason, UrlRecord, UrlState, DOCUMENT_TYPES,
};
pub use report::{
    AcquireEvents, AcquireReport, CollectEvents, NoEvents, PlannedQuery, SourceReport,
};

use frontier::lock;
use sources::{build, expand_queries, RunCtx};

/// Runs every source concurrently and delivers documents through `frontier`.
/// Safe to call again with the same frontier after an interruption: final
/// URLs and answered listings are not requested again.
pub async fn acquire(
    sources: &[WebSourceConfig],
    keywords: &[String],
    crawl: &CrawlConfig,
    frontier: &dyn Frontier,
    events: &dyn AcquireEvents,
) -> anyhow::Result<AcquireReport> {
    acquire_with(&Fetcher::new(crawl)?, sources, keywords, frontier, events).await
}

/// [`acquire`] through a fetcher the caller holds, so that several runs (the topics of one
/// `collect build A.yaml B.yaml`) share its per-host pacing, robots.txt and page cache.
pub async fn acquire_with(
    fetcher: &Fetcher,
    sources: &[WebSourceConfig],
    keywords: &[String],
    frontier: &dyn Frontier,
    events: &dyn AcquireEvents,
) -> anyhow::Result<AcquireReport> {
    let claimed = Mutex::new(HashSet::new());
    let mut built = Vec::new();
    let mut reports: Vec<Mutex<SourceReport>> = Vec::new();
    for cfg in sources {
        let name = cfg.display_name();
        let mut rep = SourceReport {
            source: name.clone(),
            kind: cfg.kind().to_string(),
            ..Default::default()
        };
        match build(cfg) {
            Ok(s) => built.push(Some((s, expand_queries(keywords, cfg.tuples())))),
            Err(why) => {
                events.warning(&name, &why);
                rep.warnings.push(why.clone());
                rep.not_run = Some(why);
                built.push(None);
            }
        }
        reports.push(Mutex::new(rep));
    }
    let runs = built.iter().zip(reports.iter()).filter_map(|(b, rep)| {
        let (src, queries) = b.as_ref()?;
        let ctx = RunCtx {
            fetcher,
            frontier,
            events,
            claimed: &claimed,
            report: rep,
        };
        Some(async move { src.run(&ctx, queries).await })
    });
    // Sources run side by side; the fetcher's per-host and global limits keep them polite.
    for r in futures::future::join_all(runs).await {
        r?;
    }
    Ok(AcquireReport {
        sources: reports.iter().map(|r| lock(r).clone()).collect(),
    })
}

/// Planned queries and request counts for `--dry-run`; nothing is fetched.
pub fn plan(sources: &[WebSourceConfig], keywords: &[String]) -> Vec<PlannedQuery> {
    let mut out = Vec::new();
    for cfg in sources {
        let queries = expand_queries(keywords, cfg.tuples());
        match build(cfg) {
            Ok(s) => out.extend(s.plan(&queries)),
            Err(why) => out.push(PlannedQuery {
                source: cfg.display_name(),
                kind: cfg.kind().to_string(),
                query: String::new(),
                requests: 0,
                skipped: Some(why),
            }),
        }
    }
    out
}
