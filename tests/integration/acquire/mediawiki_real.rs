//! The `mediawiki` source against a real MediaWiki (see .ci/mediawiki.sh; .ci/run serves one
//! during `cargo test`).
//! Skipped unless COLLECT_MEDIAWIKI_URL points at its api.php, e.g.
//! `http://127.0.0.1:8091/w/api.php`, loaded with the enwiki 2016 sample.

use collect::acquire::{
    acquire, CollectEvents, CrawlConfig, MemoryFrontier, Payload, UrlState, WebSourceConfig,
    WikiText,
};

use crate::common::{env_url, mediawiki};

fn api() -> Option<String> {
    let api = env_url("COLLECT_MEDIAWIKI_URL");
    if api.is_none() {
        eprintln!("COLLECT_MEDIAWIKI_URL not set: skipping the real MediaWiki test");
    }
    api
}

fn source(api: &str, text: WikiText, limit: usize) -> Vec<WebSourceConfig> {
    vec![mediawiki(api, text, limit, Some("real-wiki"))]
}

/// Not the loopback web's `common::crawl`: a real server gets the default timeouts.
fn crawl() -> CrawlConfig {
    CrawlConfig {
        allow_private: true,
        per_host_rps: 10.0,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_mediawiki_wikitext_and_extracts() {
    let Some(api) = api() else { return };
    let frontier = MemoryFrontier::new();
    let events = CollectEvents::default();
    let kw = vec!["species".to_string(), "aardvark".to_string()];
    let report = acquire(
        &source(&api, WikiText::Wikitext, 60),
        &kw,
        &crawl(),
        &frontier,
        &events,
    )
    .await
    .unwrap();
    let r = &report.sources[0];
    eprintln!("{r:?}");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // "species" has 30 hits in the 2016 sample: more than one search page (srlimit 50 → one),
    // and all of them real articles.
    assert!(r.results >= 30, "{r:?}");
    assert!(r.fetched >= 30, "{r:?}");
    let docs = frontier.documents();
    let aard = docs
        .iter()
        .find(|(_, p)| p.title.as_deref() == Some("Aardvark"))
        .expect("Aardvark obtained");
    assert_eq!(aard.1.payload, Payload::Wikitext);
    assert!(aard.1.body.contains("'''aardvark'''"));
    assert!(aard.0.url.ends_with("/wiki/Aardvark"), "{}", aard.0.url);
    assert!(docs
        .iter()
        .all(|(r, p)| r.state == UrlState::Fetched && !p.body.is_empty()));

    // Plain text through TextExtracts (one page per request, `excontinue`).
    let frontier = MemoryFrontier::new();
    let report = acquire(
        &source(&api, WikiText::Extracts, 3),
        &["species".to_string()],
        &crawl(),
        &frontier,
        &events,
    )
    .await
    .unwrap();
    let r = &report.sources[0];
    assert_eq!(r.fetched, 3, "{r:?}");
    let wolf = frontier
        .documents()
        .into_iter()
        .find(|(_, p)| p.title.as_deref() == Some("Aardwolf"))
        .expect("Aardwolf");
    assert_eq!(wolf.1.payload, Payload::PlainText);
    assert!(
        wolf.1.body.contains("aardwolf") && !wolf.1.body.contains("[["),
        "{}",
        &wolf.1.body[..200]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_mediawiki_russian() {
    let Some(api) = env_url("COLLECT_MEDIAWIKI_RU_URL") else {
        eprintln!("COLLECT_MEDIAWIKI_RU_URL not set: skipping the real Russian MediaWiki test");
        return;
    };
    for text in [WikiText::Wikitext, WikiText::Extracts] {
        let frontier = MemoryFrontier::new();
        let events = CollectEvents::default();
        let report = acquire(
            &source(&api, text, 5),
            &["Литва".to_string()],
            &crawl(),
            &frontier,
            &events,
        )
        .await
        .unwrap();
        assert!(
            report.sources[0].warnings.is_empty(),
            "{:?}",
            report.sources[0]
        );
        let (rec, page) = frontier
            .documents()
            .into_iter()
            .find(|(_, p)| p.title.as_deref() == Some("Литва"))
            .expect("Литва obtained");
        assert!(
            rec.url.ends_with("/wiki/%D0%9B%D0%B8%D1%82%D0%B2%D0%B0"),
            "{}",
            rec.url
        );
        assert!(
            page.body.contains("Литовская Республика"),
            "{}",
            &page.body[..300]
        );
        match text {
            WikiText::Wikitext => assert!(page.body.contains("[[")),
            WikiText::Extracts => assert!(!page.body.contains("[[")),
        }
    }
}
