//! Several topics in one run (`collect build A.yaml B.yaml …`): each collection is built in
//! turn into its own `collections/<name>`, all through one fetcher, so politeness holds across
//! the topics (one per-host pace, one robots.txt fetch per origin) and a page two topics want
//! is fetched once (the fetcher's run-wide page cache; each topic's frontier still records
//! the page as fetched in its own store).
//!
//! One fetcher needs one crawl configuration. The topics' `crawl` sections are merged into
//! the strictest of them (see [`merged_crawl`]) rather than one fetcher per distinct section:
//! two fetchers would pace a host two topics share twice over and read its robots.txt twice,
//! which is what sharing is for.

use super::{build_in, default_out_dir, BuildOptions, BuildSummary};
use crate::acquire::{CrawlConfig, Fetcher};
use crate::error::bad_input;
use crate::topic::Topic;
use anyhow::{Context, Result};
use std::collections::HashMap;

/// Bytes of fetched pages the run keeps for the topics after the one that fetched them.
pub const PAGE_CACHE_BYTES: u64 = 64 << 20;

/// The async runtime and the fetcher all topics of one run acquire through.
pub struct SharedWeb {
    /// The runtime the fetcher's connections live on (one for the whole run).
    pub runtime: tokio::runtime::Runtime,
    /// The one fetcher: per-host pacing, robots.txt and fetched pages shared by the topics.
    pub fetcher: Fetcher,
}

/// The crawl configuration of a run over `topics`: per field the strictest (the lowest
/// `per_host_rps`, `concurrency`, `per_host_concurrency`, `retries`, `max_redirects` and
/// `max_body_bytes`; the longest `backoff_ms`; every topic's `resolve` pins), everything else
/// (user agent, timeouts) from the first topic. Topics that disagree on `allow_private` are refused (bad input): one
/// fetcher either reaches private addresses or does not. Differing user agents are named in
/// the returned warnings.
pub fn merged_crawl(topics: &[Topic]) -> Result<(CrawlConfig, Vec<String>)> {
    let first = topics
        .first()
        .ok_or_else(|| bad_input("no topic file given"))?;
    let mut c = first.crawl.clone();
    let mut warnings = Vec::new();
    for t in &topics[1..] {
        let o = &t.crawl;
        if o.allow_private != c.allow_private {
            return Err(bad_input(format!(
                "topics {} and {} disagree on crawl.allow_private; the topics of one run share \
                 one fetcher: set it alike in both, or pass --allow-private",
                first.name, t.name
            )));
        }
        if o.user_agent != c.user_agent {
            warnings.push(format!(
                "topic {}: crawl.user_agent {:?} differs; the run uses the first topic's ({:?})",
                t.name, o.user_agent, c.user_agent
            ));
        }
        c.per_host_rps = c.per_host_rps.min(o.per_host_rps);
        c.concurrency = c.concurrency.min(o.concurrency);
        c.per_host_concurrency = c.per_host_concurrency.min(o.per_host_concurrency);
        c.retries = c.retries.min(o.retries);
        c.max_redirects = c.max_redirects.min(o.max_redirects);
        c.max_body_bytes = c.max_body_bytes.min(o.max_body_bytes);
        c.backoff_ms = c.backoff_ms.max(o.backoff_ms);
        for (host, ip) in &o.resolve {
            match c.resolve.insert(host.clone(), *ip) {
                Some(before) if before != *ip => {
                    return Err(bad_input(format!(
                        "topics {} and {} pin {host} to different addresses ({before} and {ip}) \
                         in crawl.resolve; the topics of one run share one fetcher",
                        first.name, t.name
                    )))
                }
                _ => {}
            }
        }
    }
    Ok((c, warnings))
}

/// Refuses (bad input) a run whose topics would write into the same directory.
pub fn check_distinct_outputs(topics: &[Topic]) -> Result<()> {
    let mut seen: HashMap<std::path::PathBuf, &str> = HashMap::new();
    for t in topics {
        let out = default_out_dir(t);
        if let Some(other) = seen.insert(out.clone(), &t.name) {
            return Err(bad_input(format!(
                "topics {other} and {} would both be built into {}; give them different names",
                t.name,
                out.display()
            )));
        }
    }
    Ok(())
}

/// Builds every topic in turn, each into `collections/<name>` (`opts.out` must be None), all
/// through one fetcher of the crawl configuration `crawl` ([`merged_crawl`]). A topic that
/// fails does not stop the others; `done` hears of each topic as it finishes.
pub fn build_all(
    topics: &[Topic],
    crawl: &CrawlConfig,
    opts: &BuildOptions,
    done: &mut dyn FnMut(&Topic, &Result<BuildSummary>),
) -> Result<()> {
    debug_assert!(opts.out.is_none());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let fetcher = {
        // reqwest's client belongs to the runtime it is built in.
        let _in = runtime.enter();
        Fetcher::new(crawl)?.with_page_cache(PAGE_CACHE_BYTES)
    };
    let shared = SharedWeb { runtime, fetcher };
    for t in topics {
        let mut t = t.clone();
        t.crawl = crawl.clone();
        let result = build_in(&t, opts, Some(&shared));
        done(&t, &result);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, crawl: &str) -> Topic {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.yaml");
        std::fs::write(
            &p,
            format!(
                "name: {name}\nlanguages: [en]\nsources:\n  - {{kind: local, path: x}}\ncrawl: {crawl}\n"
            ),
        )
        .unwrap();
        Topic::load(&p).unwrap()
    }

    #[test]
    fn the_strictest_crawl_settings_win_and_allow_private_mixes_are_refused() {
        let a = topic(
            "a",
            "{per_host_rps: 5, concurrency: 8, user_agent: \"a/1\"}",
        );
        let b = topic(
            "b",
            "{per_host_rps: 2, concurrency: 16, user_agent: \"b/1\"}",
        );
        let (c, warnings) = merged_crawl(&[a.clone(), b]).unwrap();
        assert_eq!(c.per_host_rps, 2.0);
        assert_eq!(c.concurrency, 8);
        assert_eq!(c.user_agent, "a/1");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let p = topic("p", "{allow_private: true}");
        let e = merged_crawl(&[a, p]).unwrap_err();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
    }

    #[test]
    fn two_topics_of_one_name_are_refused() {
        let a = topic("same", "{}");
        assert!(check_distinct_outputs(&[a.clone(), a]).is_err());
    }
}
