//! Every source at once against the loopback web, as `collect demo` runs it.

use std::time::Duration;

use crate::common::*;
use collect::acquire::{acquire, CollectEvents, MemoryFrontier, Payload, UrlState};
use collect::demo::loopback::{LoopbackWeb, CAPTURED_KEYWORDS};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_sources_together_offline() {
    set_key();
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    let events = CollectEvents::default();
    let kw: Vec<String> = CAPTURED_KEYWORDS.iter().map(|s| s.to_string()).collect();
    let cfg = crawl(10.0);
    let report = acquire(&web.source_configs(KEY_ENV), &kw, &cfg, &frontier, &events)
        .await
        .unwrap();
    for s in &report.sources {
        assert!(s.not_run.is_none(), "{s:?}");
        assert!(s.fetched > 0, "{s:?}");
    }
    // Each host was paced, whichever sources shared it.
    for (name, s) in web.servers() {
        let min = if name == "main" {
            Duration::from_secs_f64(collect::demo::loopback::MAIN_CRAWL_DELAY)
        } else {
            Duration::from_millis(100)
        };
        assert_spacing(name, &s.log(), min);
    }
    // No document URL was requested twice across sources.
    let mut targets: Vec<String> = web.open.log().into_iter().map(|e| e.target).collect();
    let n = targets.len();
    targets.sort();
    targets.dedup();
    assert_eq!(n, targets.len());
    let docs = frontier.documents();
    assert!(docs.iter().any(|(_, p)| p.payload == Payload::Wikitext));
    assert!(docs
        .iter()
        .any(|(_, p)| p.payload == Payload::PlainText && p.body.contains("Литва")));
    assert!(docs
        .iter()
        .any(|(_, p)| p.payload == Payload::Html && p.body.contains("Лайка")));
    assert!(
        frontier
            .records()
            .iter()
            .all(|r| r.state != UrlState::Discovered),
        "all done"
    );
}
