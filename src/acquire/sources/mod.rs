//! Web sources: one trait, one file per kind, plus the shared page pipeline.

pub mod brave;
pub mod duckduckgo;
pub mod mediawiki;
pub mod searxng;
pub mod sites;
pub mod yandex;

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::StreamExt;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use url::Url;

use super::config::{TuplesConfig, WebSourceConfig};
use super::fetcher::{FetchKind, Fetcher, PageOutcome};
use super::frontier::{lock, FetchedPage, Frontier, UrlRecord, UrlState};
use super::report::{AcquireEvents, PlannedQuery, SourceReport};
use super::urls::normalize_str;

/// One configured source, ready to run.
#[async_trait]
pub trait Source: Send + Sync {
    /// Name in reports and records.
    fn name(&self) -> &str;
    /// Planned queries and request counts, nothing fetched.
    fn plan(&self, queries: &[String]) -> Vec<PlannedQuery>;
    /// Runs the source; documents go to the frontier through `ctx`.
    async fn run(&self, ctx: &RunCtx<'_>, queries: &[String]) -> anyhow::Result<()>;
}

/// Everything a running source shares with the others.
pub struct RunCtx<'a> {
    /// Shared HTTP machinery.
    pub fetcher: &'a Fetcher,
    /// Durable URL states.
    pub frontier: &'a dyn Frontier,
    /// Progress and warnings.
    pub events: &'a dyn AcquireEvents,
    /// URLs already taken by some source in this run (cross-source dedup).
    pub claimed: &'a Mutex<HashSet<String>>,
    /// This source's counters.
    pub report: &'a Mutex<SourceReport>,
}

impl RunCtx<'_> {
    /// Raises a warning for this source.
    pub fn warn(&self, msg: impl Into<String>) {
        let msg = msg.into();
        let mut r = lock(self.report);
        self.events.warning(&r.source, &msg);
        r.warnings.push(msg);
    }

    fn source(&self) -> String {
        lock(self.report).source.clone()
    }

    /// Stores a record; a failing store is a hard error (resume would lie otherwise).
    pub fn record(&self, rec: &UrlRecord) -> anyhow::Result<()> {
        self.frontier.record(rec)?;
        if rec.state.is_final() && !matches!(rec.state, UrlState::Listed { .. }) {
            lock(self.report).count_state(&rec.state);
            self.events.url_done(&rec.source, &rec.url, &rec.state);
        }
        Ok(())
    }

    /// Counts a query and its results.
    pub fn query_done(&self, query: &str, results: usize) {
        let mut r = lock(self.report);
        r.queries += 1;
        r.results += results;
        self.events.query_done(&r.source, query, results);
    }

    /// Cached search/API listing: a resumed run reuses an answered request.
    pub fn listing(&self, key: &str) -> Option<(Vec<String>, Option<String>)> {
        match self.frontier.seen(key)?.state {
            UrlState::Listed { items, next } => Some((items, next)),
            _ => None,
        }
    }

    /// Stores a listing answer.
    pub fn store_listing(
        &self,
        key: &str,
        query: &str,
        items: &[String],
        next: Option<String>,
    ) -> anyhow::Result<()> {
        self.record(&UrlRecord {
            url: key.to_string(),
            source: self.source(),
            query: Some(query.to_string()),
            state: UrlState::Listed {
                items: items.to_vec(),
                next,
            },
            fetched: None,
        })
    }

    /// Claims a URL for this run; false when it is done already or taken by
    /// another source. Final records from earlier runs count as resumed.
    pub fn claim(&self, url: &str, query: Option<&str>) -> anyhow::Result<Claim> {
        if !lock(self.claimed).insert(url.to_string()) {
            return Ok(Claim::Taken);
        }
        if let Some(prev) = self.frontier.seen(url) {
            if prev.state.is_final() {
                lock(self.report).resumed += 1;
                return Ok(Claim::Done(Box::new(prev)));
            }
            return Ok(Claim::New);
        }
        self.record(&UrlRecord {
            url: url.to_string(),
            source: self.source(),
            query: query.map(str::to_string),
            state: UrlState::Discovered,
            fetched: None,
        })?;
        Ok(Claim::New)
    }

    /// The final record of a URL another source of this run has claimed, once that source
    /// has fetched it (or given up); `None` if it is not final within the time one fetch may
    /// take with its retries.
    pub async fn settled(&self, url: &str) -> Option<UrlRecord> {
        let cfg = self.fetcher.config();
        let patience = Duration::from_secs_f64(
            (cfg.timeout_secs + cfg.max_retry_after_secs) * (f64::from(cfg.retries) + 1.0) + 1.0,
        );
        let started = Instant::now();
        loop {
            match self.frontier.seen(url) {
                Some(r) if r.state.is_final() && !matches!(r.state, UrlState::Listed { .. }) => {
                    return Some(r)
                }
                _ if started.elapsed() > patience => return None,
                _ => tokio::time::sleep(Duration::from_millis(25)).await,
            }
        }
    }

    /// Fetches result URLs of search sources (normalised, deduplicated, concurrent).
    pub async fn fetch_results(&self, items: Vec<(String, Option<String>)>) -> anyhow::Result<()> {
        let mut todo = Vec::new();
        for (raw, query) in items {
            let u = match normalize_str(&raw) {
                Ok(u) => u,
                Err(m) => {
                    self.warn(m);
                    continue;
                }
            };
            if let Claim::New = self.claim(u.as_str(), query.as_deref())? {
                todo.push((u, query));
            }
        }
        let conc = self.fetcher.config().concurrency.max(1);
        let mut stream = futures::stream::iter(todo)
            .map(|(u, q)| async move {
                let out = self.fetcher.fetch(&u, FetchKind::Page).await;
                (u, q, out)
            })
            .buffer_unordered(conc);
        while let Some((u, q, out)) = stream.next().await {
            self.finish_page(&u, q.as_deref(), out)?;
        }
        Ok(())
    }

    /// Records the outcome of a page fetch; returns the page when fetched.
    pub fn finish_page(
        &self,
        u: &Url,
        query: Option<&str>,
        out: PageOutcome,
    ) -> anyhow::Result<Option<FetchedPage>> {
        let (state, page) = match out {
            PageOutcome::Fetched(p) => {
                if let Some(note) = &p.charset_note {
                    self.warn(format!("{u}: {note}"));
                }
                (UrlState::Fetched, Some(p))
            }
            PageOutcome::Skipped(r, _m) => (UrlState::Skipped(r), None),
            PageOutcome::Failed(m) => (UrlState::Failed(m), None),
        };
        self.record(&UrlRecord {
            url: u.to_string(),
            source: self.source(),
            query: query.map(str::to_string),
            state,
            fetched: page.clone(),
        })?;
        Ok(page)
    }
}

/// Answer of `RunCtx::claim`.
pub enum Claim {
    /// Fetch it.
    New,
    /// Final from an earlier run; the record is returned.
    Done(Box<UrlRecord>),
    /// Already handled in this run.
    Taken,
}

/// The keyword list plus BootCaT-style random tuples for one source.
pub fn expand_queries(keywords: &[String], tuples: Option<&TuplesConfig>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for k in keywords {
        let k = k.trim();
        if !k.is_empty() && seen.insert(k.to_string()) {
            out.push(k.to_string());
        }
    }
    if let Some(t) = tuples {
        let pool = out.clone();
        let size = t.size.min(pool.len());
        if size >= 2 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(t.seed);
            let mut made = 0;
            // Bounded attempts: few keywords allow few distinct tuples.
            for _ in 0..t.count.saturating_mul(20) {
                if made >= t.count {
                    break;
                }
                let mut pick: Vec<&String> = pool.choose_multiple(&mut rng, size).collect();
                pick.sort();
                let q = pick
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                if seen.insert(q.clone()) {
                    out.push(q);
                    made += 1;
                }
            }
        }
    }
    out
}

/// Builds the runnable source, or says why it is skipped (missing key or URL).
pub fn build(cfg: &WebSourceConfig) -> Result<Box<dyn Source>, String> {
    let name = cfg.display_name();
    match cfg {
        WebSourceConfig::Mediawiki(c) => {
            mediawiki::MediaWiki::new(name, c.clone()).map(|s| Box::new(s) as _)
        }
        WebSourceConfig::Searxng(c) => {
            searxng::Searxng::new(name, c.clone()).map(|s| Box::new(s) as _)
        }
        WebSourceConfig::Brave(c) => brave::Brave::new(name, c.clone()).map(|s| Box::new(s) as _),
        WebSourceConfig::Yandex(c) => {
            yandex::Yandex::new(name, c.clone()).map(|s| Box::new(s) as _)
        }
        WebSourceConfig::Duckduckgo(c) => {
            duckduckgo::DuckDuckGo::new(name, c.clone()).map(|s| Box::new(s) as _)
        }
        WebSourceConfig::Sites(c) => sites::Sites::new(name, c.clone()).map(|s| Box::new(s) as _),
    }
}

/// Reads an API key from the named environment variable.
pub(crate) fn env_key(var: &str) -> Result<String, String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_string()),
        _ => Err(format!(
            "environment variable {var} is not set; source skipped"
        )),
    }
}

/// Parses a configured endpoint; the error names the key and the URL.
pub(crate) fn endpoint(what: &str, s: Option<&str>) -> Result<Url, String> {
    match s.map(str::trim).filter(|s| !s.is_empty()) {
        None => Err(format!("no `{what}` configured; source skipped")),
        Some(s) => Url::parse(s).map_err(|e| format!("bad `{what}` URL {s}: {e}; source skipped")),
    }
}

/// Simple plan for sources with one request per page.
pub(crate) fn paged_plan(
    name: &str,
    kind: &str,
    queries: &[String],
    pages: usize,
) -> Vec<PlannedQuery> {
    queries
        .iter()
        .map(|q| PlannedQuery {
            source: name.to_string(),
            kind: kind.to_string(),
            query: q.clone(),
            requests: pages.max(1),
            skipped: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_are_deterministic() {
        let kw: Vec<String> = ["собака", "щенок", "порода", "лайка", "овчарка"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = TuplesConfig {
            size: 3,
            count: 4,
            seed: 1,
        };
        let a = expand_queries(&kw, Some(&t));
        let b = expand_queries(&kw, Some(&t));
        assert_eq!(a, b);
        assert_eq!(a.len(), 9);
        assert!(a[5..].iter().all(|q| q.split(' ').count() == 3));
        let c = expand_queries(
            &kw,
            Some(&TuplesConfig {
                seed: 2,
                ..t.clone()
            }),
        );
        assert_ne!(a, c);
        assert_eq!(expand_queries(&kw[..1], Some(&t)).len(), 1);
    }
}
