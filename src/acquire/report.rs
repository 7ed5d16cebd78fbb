//! Progress callbacks and the per-source summary of a run.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::frontier::{lock, SkipReason, UrlState};

/// Progress and warning callbacks (the CLI prints them).
pub trait AcquireEvents: Send + Sync {
    /// Something the curator should know (skipped source, failing engine, rate limit).
    fn warning(&self, source: &str, message: &str);
    /// A query was answered with this many result URLs/titles.
    fn query_done(&self, _source: &str, _query: &str, _results: usize) {}
    /// A URL reached a final state.
    fn url_done(&self, _source: &str, _url: &str, _state: &UrlState) {}
}

/// Events sink that ignores everything.
#[derive(Debug, Default)]
pub struct NoEvents;

impl AcquireEvents for NoEvents {
    fn warning(&self, _source: &str, _message: &str) {}
}

/// Events sink that keeps warnings (tests, demo).
#[derive(Debug, Default)]
pub struct CollectEvents {
    warnings: std::sync::Mutex<Vec<(String, String)>>,
}

impl CollectEvents {
    /// Warnings so far as (source, message).
    pub fn warnings(&self) -> Vec<(String, String)> {
        lock(&self.warnings).clone()
    }
}

impl AcquireEvents for CollectEvents {
    fn warning(&self, source: &str, message: &str) {
        lock(&self.warnings).push((source.to_string(), message.to_string()));
    }
}

/// Counts for one source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceReport {
    /// Source name.
    pub source: String,
    /// Source kind (`mediawiki`, `sites`, ...).
    pub kind: String,
    /// Queries asked (search sources) or start URLs (sites).
    pub queries: usize,
    /// Result URLs/titles returned by the queries.
    pub results: usize,
    /// Documents fetched in this run.
    pub fetched: usize,
    /// Documents already final from an earlier run, not requested again.
    pub resumed: usize,
    /// Failures by cause.
    pub failed: BTreeMap<String, usize>,
    /// URLs refused by robots.txt.
    pub robots_blocked: usize,
    /// Skipped URLs by reason (robots included).
    pub skipped: BTreeMap<String, usize>,
    /// The source was not run (missing key or URL), with why.
    pub not_run: Option<String>,
    /// Warnings raised for this source.
    pub warnings: Vec<String>,
}

impl SourceReport {
    pub(crate) fn count_state(&mut self, state: &UrlState) {
        match state {
            UrlState::Fetched => self.fetched += 1,
            UrlState::Failed(msg) => *self.failed.entry(failure_class(msg)).or_default() += 1,
            UrlState::Skipped(r) => {
                if *r == SkipReason::Robots {
                    self.robots_blocked += 1;
                }
                *self.skipped.entry(r.to_string()).or_default() += 1;
            }
            UrlState::Discovered | UrlState::Listed { .. } => {}
        }
    }
}

/// Failure messages start with a short class then `:`; that class keys the report.
fn failure_class(msg: &str) -> String {
    msg.split(':').next().unwrap_or("error").trim().to_string()
}

/// Summary of one `acquire` run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AcquireReport {
    /// One entry per configured source, in order.
    pub sources: Vec<SourceReport>,
}

impl AcquireReport {
    /// Documents fetched in this run over all sources.
    pub fn fetched(&self) -> usize {
        self.sources.iter().map(|s| s.fetched).sum()
    }
}

/// One planned query for `--dry-run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedQuery {
    /// Source name.
    pub source: String,
    /// Source kind.
    pub kind: String,
    /// Query text (search sources) or start URL (sites).
    pub query: String,
    /// Upper bound of API/search requests for this query (documents not counted
    /// for search engines; for wikis content batches are included; for sites
    /// the page limit).
    pub requests: usize,
    /// Why the source would be skipped, if it would.
    pub skipped: Option<String>,
}
