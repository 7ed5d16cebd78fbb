#![allow(dead_code)]

use std::time::Duration;

use collect::acquire::loopback::{LogEntry, Server};
use collect::acquire::{CrawlConfig, MemoryFrontier, UrlRecord, UrlState};

/// Env var the Brave/Yandex stand-ins' key is read from in tests.
pub const KEY_ENV: &str = "COLLECT_TEST_LOOPBACK_KEY";

pub fn set_key() {
    // Every test writes the same value, so concurrent writes cannot disagree.
    std::env::set_var(KEY_ENV, collect::acquire::loopback::LOOPBACK_KEY);
}

/// Fast but still paced crawl settings for the loopback web.
pub fn crawl(rps: f64) -> CrawlConfig {
    CrawlConfig {
        per_host_rps: rps,
        concurrency: 8,
        allow_private: true,
        timeout_secs: 1.5,
        connect_timeout_secs: 1.0,
        max_body_bytes: 1024 * 1024,
        retries: 2,
        backoff_ms: 50,
        max_retry_after_secs: 5.0,
        ..CrawlConfig::default()
    }
}

/// Asserts that requests to one server respect a minimum spacing: every gap
/// (with a little slack for scheduling jitter on a loaded 2-core machine,
/// since the server sees arrival, not send, times) and, exactly in the long
/// run, every window of consecutive requests.
pub fn assert_spacing(name: &str, log: &[LogEntry], min: Duration) {
    let slack = Duration::from_millis(40);
    let mut at: Vec<_> = log.iter().map(|e| (e.at, e.target.clone())).collect();
    at.sort_by_key(|(t, _)| *t);
    for w in at.windows(2) {
        let gap = w[1].0.duration_since(w[0].0);
        assert!(
            gap + slack >= min,
            "{name}: {} then {} only {gap:?} apart (limit {min:?})",
            w[0].1,
            w[1].1
        );
    }
    for k in 2..at.len() {
        for i in 0..at.len() - k {
            let span = at[i + k].0.duration_since(at[i].0);
            let want = min * k as u32;
            assert!(
                span + slack >= want,
                "{name}: {} requests within {span:?} (limit {want:?})",
                k + 1
            );
        }
    }
}

pub fn record(f: &MemoryFrontier, url: &str) -> UrlRecord {
    f.records()
        .into_iter()
        .find(|r| r.url == url)
        .unwrap_or_else(|| {
            panic!(
                "no record for {url}; have {:#?}",
                f.records()
                    .iter()
                    .map(|r| (&r.url, &r.state))
                    .collect::<Vec<_>>()
            )
        })
}

pub fn state(f: &MemoryFrontier, s: &Server, path: &str) -> UrlState {
    record(f, &s.url(path)).state
}
