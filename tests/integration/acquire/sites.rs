//! Sites crawl against the loopback web: politeness, robots, charsets, faults,
//! address policy and resume.

use std::time::Duration;

use crate::common::*;
use collect::acquire::{
    acquire, CollectEvents, Fetcher, MemoryFrontier, NoEvents, PageOutcome, Payload, SitesConfig,
    SkipReason, UrlState, WebSourceConfig,
};
use collect::demo::loopback::{LoopbackWeb, MAIN_CRAWL_DELAY, RU_TEXT};

fn sites(urls: Vec<String>, depth: usize) -> Vec<WebSourceConfig> {
    vec![WebSourceConfig::Sites(SitesConfig {
        urls,
        depth,
        max_pages: 100,
        sitemaps: true,
        name: Some("sites".into()),
    })]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_is_polite_and_handles_every_fault() {
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    let events = CollectEvents::default();
    let cfg = crawl(5.0);
    let report = acquire(
        &sites(
            vec![web.main.url("/"), web.closed.url("/"), web.open.url("/")],
            2,
        ),
        &[],
        &cfg,
        &frontier,
        &events,
    )
    .await
    .unwrap();

    // Politeness: Crawl-delay on main, per_host_rps elsewhere.
    assert_spacing(
        "main",
        &web.main.log(),
        Duration::from_secs_f64(MAIN_CRAWL_DELAY),
    );
    assert_spacing(
        "open",
        &web.open.log(),
        Duration::from_secs_f64(1.0 / cfg.per_host_rps),
    );
    // robots.txt: Disallow respected, also for sitemap entries and redirect targets.
    assert_eq!(web.main.hits("/private/secret"), 0);
    assert_eq!(web.main.hits("/private/in-sitemap"), 0);
    assert_eq!(
        state(&frontier, &web.main, "/private/secret"),
        UrlState::Skipped(SkipReason::Robots)
    );
    assert_eq!(
        state(&frontier, &web.main, "/deep-redirect"),
        UrlState::Skipped(SkipReason::Robots)
    );
    // robots.txt answering 5xx: disallow all, nothing but robots.txt asked.
    assert!(
        web.closed.log().iter().all(|e| e.path == "/robots.txt"),
        "{:?}",
        web.closed.log()
    );
    assert_eq!(
        state(&frontier, &web.closed, "/"),
        UrlState::Skipped(SkipReason::Robots)
    );
    // robots.txt 404: allow all.
    assert_eq!(state(&frontier, &web.open, "/x"), UrlState::Fetched);

    // Charsets.
    for path in ["/cp1251", "/koi8r", "/detect1251", "/utf8"] {
        let rec = record(&frontier, &web.main.url(path));
        let page = rec
            .fetched
            .unwrap_or_else(|| panic!("{path} not fetched: {:?}", rec.state));
        assert!(
            page.body.contains(RU_TEXT),
            "{path} decoded wrong: {}",
            page.body
        );
        assert_eq!(page.payload, Payload::Html);
    }
    let koi = record(&frontier, &web.main.url("/koi8r")).fetched.unwrap();
    assert_eq!(koi.title.as_deref(), Some("КОИ-8"));

    // URL normalisation: tracking parameters and fragments collapse onto /utf8.
    assert_eq!(web.main.hits("/utf8"), 1);
    assert_eq!(
        web.main.hits("/a"),
        1,
        "linked twice and listed in the sitemap"
    );
    // Depth 2: /d is three links away.
    assert_eq!(web.main.hits("/d"), 0);
    assert_eq!(
        state(&frontier, &web.main, "/from-sitemap"),
        UrlState::Fetched
    );

    // Compression within the cap is fine.
    let gz = record(&frontier, &web.main.url("/gz")).fetched.unwrap();
    assert!(gz.body.contains("Compressed fine."));

    // Faults.
    assert_eq!(
        state(&frontier, &web.main, "/big"),
        UrlState::Skipped(SkipReason::TooLarge)
    );
    assert_eq!(
        state(&frontier, &web.main, "/bomb"),
        UrlState::Skipped(SkipReason::TooLarge)
    );
    // A PDF is a document now: fetched as bytes (the reader later finds this one corrupt).
    assert_eq!(state(&frontier, &web.main, "/pdf"), UrlState::Fetched);
    assert_eq!(
        state(&frontier, &web.main, "/loop1"),
        UrlState::Skipped(SkipReason::RedirectLoop)
    );
    assert_eq!(
        state(&frontier, &web.main, "/to-metadata"),
        UrlState::Skipped(SkipReason::PrivateAddress)
    );
    let redirected = record(&frontier, &web.main.url("/redirect"))
        .fetched
        .unwrap();
    assert_eq!(redirected.final_url, web.main.url("/redirected"));
    assert_eq!(state(&frontier, &web.main, "/flaky"), UrlState::Fetched);
    assert_eq!(web.main.hits("/flaky"), 2);
    assert_eq!(state(&frontier, &web.main, "/limited"), UrlState::Fetched);
    let lim: Vec<_> = web
        .main
        .log()
        .into_iter()
        .filter(|e| e.path == "/limited")
        .collect();
    assert_eq!(lim.len(), 2);
    assert!(
        lim[1].at.duration_since(lim[0].at) >= Duration::from_millis(990),
        "Retry-After not honoured"
    );
    match state(&frontier, &web.main, "/slow") {
        UrlState::Failed(m) => assert!(m.starts_with("timeout") && m.contains("/slow"), "{m}"),
        s => panic!("slow: {s:?}"),
    }
    assert_eq!(web.main.hits("/slow"), 3, "1 try + 2 retries");
    match state(&frontier, &web.main, "/reset") {
        UrlState::Failed(m) => assert!(m.contains("/reset"), "{m}"),
        s => panic!("reset: {s:?}"),
    }
    assert_eq!(web.main.hits("/reset"), 3);
    match state(&frontier, &web.main, "/always500") {
        UrlState::Failed(m) => assert!(m.contains("500") && m.contains("/always500"), "{m}"),
        s => panic!("500: {s:?}"),
    }
    // Offsite links are not followed (and never resolved).
    assert!(frontier
        .records()
        .iter()
        .all(|r| !r.url.contains("example.invalid")));

    // Nothing fetched twice overall (robots.txt retries aside).
    for s in [&web.main, &web.open] {
        let mut paths: Vec<_> = s.log().into_iter().map(|e| e.target).collect();
        paths.sort();
        let before = paths.len();
        paths.dedup();
        let retried = ["/flaky", "/limited", "/slow", "/reset", "/always500"];
        let dups = before - paths.len();
        let allowed: usize = retried.iter().map(|p| s.hits(p).saturating_sub(1)).sum();
        assert_eq!(
            dups,
            allowed,
            "duplicate requests: {:?}",
            s.log().iter().map(|e| &e.target).collect::<Vec<_>>()
        );
    }

    let r = &report.sources[0];
    assert!(r.robots_blocked >= 3, "{r:?}");
    assert_eq!(r.skipped.get("too-large"), Some(&2), "{r:?}");
    assert!(r.failed.contains_key("timeout"), "{r:?}");
    assert!(r.fetched >= 12, "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_rate_is_one_request_per_second_per_host() {
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    let cfg = collect::acquire::CrawlConfig {
        allow_private: true,
        ..Default::default()
    };
    assert_eq!(cfg.per_host_rps, 1.0);
    acquire(
        &sites(vec![web.open.url("/")], 1),
        &[],
        &cfg,
        &frontier,
        &NoEvents,
    )
    .await
    .unwrap();
    let log = web.open.log();
    assert!(log.len() >= 4, "{log:?}"); // robots, /, /x, /y (+ sitemap.xml)
    assert_spacing("open", &log, Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_are_refused_without_allow_private() {
    let web = LoopbackWeb::start().await.unwrap();
    let port = web.main.addr().port();
    let frontier = MemoryFrontier::new();
    let events = CollectEvents::default();
    let cfg = collect::acquire::CrawlConfig {
        allow_private: false,
        ..crawl(5.0)
    };
    let urls = vec![
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/a"),
        format!("http://[::1]:{port}/b"),
    ];
    let report = acquire(&sites(urls.clone(), 1), &[], &cfg, &frontier, &events)
        .await
        .unwrap();
    assert!(web.main.log().is_empty(), "{:?}", web.main.log());
    for u in &urls {
        let rec = record(
            &frontier,
            collect::acquire::urls::normalize_str(u).unwrap().as_str(),
        );
        assert_eq!(
            rec.state,
            UrlState::Skipped(SkipReason::PrivateAddress),
            "{u}"
        );
    }
    assert_eq!(report.sources[0].skipped.get("private-address"), Some(&3));

    let f = Fetcher::new(&cfg).unwrap();
    for (u, why) in [
        (
            "http://169.254.169.254/latest/meta-data/",
            SkipReason::PrivateAddress,
        ),
        ("http://10.0.0.1/", SkipReason::PrivateAddress),
        ("http://100.64.1.1/", SkipReason::PrivateAddress),
        ("ftp://127.0.0.1/x", SkipReason::Scheme),
        ("file:///etc/passwd", SkipReason::Scheme),
    ] {
        match f
            .fetch(
                &url::Url::parse(u).unwrap(),
                collect::acquire::FetchKind::Page,
            )
            .await
        {
            PageOutcome::Skipped(r, m) => {
                assert_eq!(r, why, "{u}: {m}");
                assert!(m.contains(&u[..12]), "message names the URL: {m}");
            }
            o => panic!("{u}: {o:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_run_resumes_without_refetching() {
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    let cfg = crawl(20.0);
    let srcs = sites(vec![web.main.url("/")], 2);
    // Drop the future midway (Crawl-delay 0.4 s: about a third of the site gets done).
    let first = tokio::time::timeout(
        Duration::from_millis(3500),
        acquire(&srcs, &[], &cfg, &frontier, &NoEvents),
    )
    .await;
    assert!(
        first.is_err(),
        "run finished before the interruption; make it longer"
    );
    let after_first = frontier.records();
    let final_after_first: Vec<String> = after_first
        .iter()
        .filter(|r| r.state.is_final())
        .map(|r| r.url.clone())
        .collect();
    assert!(final_after_first.len() >= 3, "{after_first:?}");
    let first_log = web.main.log();
    web.main.clear_log();

    let report = acquire(&srcs, &[], &cfg, &frontier, &NoEvents)
        .await
        .unwrap();
    let second_log = web.main.log();
    for e in &second_log {
        if e.path == "/robots.txt" {
            continue; // a new run reads robots.txt again, by design
        }
        let url = web.main.url(&e.target);
        assert!(
            !final_after_first.contains(&url),
            "{url} was final after the first run but requested again"
        );
    }
    // Pages requested in run 1 were requested again only if they were still in flight
    // (Discovered) when the run was dropped.
    for e in &first_log {
        let url = web.main.url(&e.target);
        if second_log.iter().any(|s| s.target == e.target) && e.path != "/robots.txt" {
            let was = after_first
                .iter()
                .find(|r| r.url == url)
                .map(|r| r.state.clone());
            assert!(
                matches!(was, Some(UrlState::Discovered) | None),
                "{url}: {was:?}"
            );
        }
    }
    assert!(
        report.sources[0].resumed >= final_after_first.len().min(3),
        "{:?}",
        report.sources[0]
    );
    // Everything reachable is final now, and the charset pages made it.
    assert!(
        frontier.records().iter().all(|r| r.state.is_final()),
        "{:?}",
        frontier.records()
    );
    assert_eq!(state(&frontier, &web.main, "/cp1251"), UrlState::Fetched);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_host_does_not_starve_the_others() {
    use collect::demo::loopback::{Reply, Request, Response, Server};
    use std::sync::Arc;
    let slow = Server::start(Arc::new(|req: &Request| -> Reply {
        match req.path.as_str() {
            "/robots.txt" => Response::not_found().into(),
            "/" => Response::html("<a href=/1>1</a><a href=/2>2</a><a href=/3>3</a>")
                .delayed(Duration::from_secs(1))
                .into(),
            _ => Response::html("<p>slow</p>")
                .delayed(Duration::from_secs(1))
                .into(),
        }
    }))
    .await
    .unwrap();
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    // Two slots overall, one per host: the slow host can hold only one of them.
    let cfg = collect::acquire::CrawlConfig {
        concurrency: 2,
        per_host_concurrency: 1,
        ..crawl(10.0)
    };
    let t0 = std::time::Instant::now();
    let srcs = sites(vec![slow.url("/"), web.open.url("/")], 1);
    acquire(&srcs, &[], &cfg, &frontier, &NoEvents)
        .await
        .unwrap();
    let open_done = web.open.log().iter().map(|e| e.at).max().unwrap();
    let slow_done = slow.log().iter().map(|e| e.at).max().unwrap();
    assert!(
        open_done.duration_since(t0) < Duration::from_millis(1500),
        "open site waited for the slow one"
    );
    assert!(slow_done > open_done);
    assert_eq!(state(&frontier, &slow, "/3"), UrlState::Fetched);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_page_redirecting_to_another_host_keeps_the_crawl_on_that_site() {
    use collect::demo::loopback::{Reply, Request, Response, Server};
    use std::sync::Arc;
    let web = LoopbackWeb::start().await.unwrap();
    let target = web.open.url("/");
    let front = Server::start(Arc::new(move |req: &Request| -> Reply {
        match req.path.as_str() {
            "/robots.txt" => Response::not_found().into(),
            _ => Response::redirect(301, &target).into(),
        }
    }))
    .await
    .unwrap();
    let frontier = MemoryFrontier::new();
    acquire(
        &sites(vec![front.url("/")], 1),
        &[],
        &crawl(20.0),
        &frontier,
        &NoEvents,
    )
    .await
    .unwrap();
    assert_eq!(
        record(&frontier, &front.url("/"))
            .fetched
            .unwrap()
            .final_url,
        web.open.url("/")
    );
    assert_eq!(state(&frontier, &web.open, "/x"), UrlState::Fetched);
    assert_eq!(state(&frontier, &web.open, "/y"), UrlState::Fetched);
}

/// A page a search source fetched first is still a step of the crawl: its links are followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_follows_the_links_of_a_page_a_search_result_took() {
    use collect::acquire::SearxngConfig;
    use collect::demo::loopback::{Reply, Request, Response, Server};
    use std::sync::Arc;

    let server = Server::start(Arc::new(move |req: &Request| -> Reply {
        let page = |body: &str| Response::html(format!("<html><body>{body}</body></html>"));
        match req.path.as_str() {
            // The crawl reaches /a a second or more after it starts; the search, on its own
            // host, has taken it by then.
            "/robots.txt" => Response::new(200, "text/plain", "User-agent: *\nCrawl-delay: 1\n"),
            "/" => page("<a href=\"/a\">a</a>"),
            "/a" => page("<p>Alpha.</p><a href=\"/c\">c</a>"),
            "/c" => page("<p>Only page a links here.</p>"),
            _ => Response::not_found(),
        }
        .into()
    }))
    .await
    .unwrap();
    let site = server.base();
    let search = Server::start(Arc::new(move |_: &Request| -> Reply {
        Response::json(
            serde_json::json!({"query": "q", "results": [
                {"url": format!("{site}/a"), "title": "A", "content": "a"}
            ]})
            .to_string(),
        )
        .into()
    }))
    .await
    .unwrap();
    let mut sources = sites(vec![server.url("/")], 2);
    sources.push(WebSourceConfig::Searxng(SearxngConfig {
        url: Some(search.base()),
        pages: 1,
        limit: 10,
        engines: None,
        language: None,
        tuples: None,
        name: Some("search".into()),
    }));
    let frontier = MemoryFrontier::new();
    acquire(&sources, &["q".into()], &crawl(5.0), &frontier, &NoEvents)
        .await
        .unwrap();
    let a = record(&frontier, &server.url("/a"));
    assert_eq!(a.source, "search", "the search result claimed /a first");
    assert_eq!(state(&frontier, &server, "/c"), UrlState::Fetched);
    assert_eq!(record(&frontier, &server.url("/c")).source, "sites");
    assert_eq!(server.hits("/a"), 1, "the crawl did not fetch /a again");
}
