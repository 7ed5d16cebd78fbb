//! Search and wiki sources against the loopback stand-ins (captured answers).

use std::time::Duration;

use crate::common::*;
use collect::acquire::sources::duckduckgo::{parse_page, DdgPage};
use collect::acquire::sources::yandex::parse_xml;
use collect::acquire::{
    acquire, plan, BraveConfig, CollectEvents, DuckDuckGoConfig, MediaWikiConfig, MemoryFrontier,
    NoEvents, Payload, SearxngConfig, SkipReason, TuplesConfig, UrlState, WebSourceConfig,
    WikiText, YandexConfig,
};
use collect::demo::loopback::LoopbackWeb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mediawiki_wikitext_with_continuation_maxlag_and_resume() {
    let web = LoopbackWeb::start_with(1).await.unwrap();
    let frontier = MemoryFrontier::new();
    let events = CollectEvents::default();
    let srcs = vec![mediawiki(
        &web.wiki_en.url("/w/api.php"),
        WikiText::Wikitext,
        7,
        None,
    )];
    let report = acquire(
        &srcs,
        &["species".to_string()],
        &crawl(20.0),
        &frontier,
        &events,
    )
    .await
    .unwrap();
    let r = &report.sources[0];
    assert_eq!((r.queries, r.results), (1, 7), "{r:?}");
    // Page 1 (5 hits) + page 2 via sroffset=5, truncated at the limit.
    let searches: Vec<_> = web
        .wiki_en
        .log()
        .into_iter()
        .filter(|e| e.target.contains("list=search"))
        .collect();
    assert_eq!(searches.len(), 3, "maxlag retry + 2 pages: {searches:?}");
    assert!(searches.iter().all(|e| e.target.contains("maxlag=5")));
    assert!(searches[2].target.contains("sroffset=5"));
    assert!(
        events.warnings().iter().any(|(_, m)| m.contains("lag")),
        "{:?}",
        events.warnings()
    );
    // Wikipedia's robots.txt disallows /w/: the API never consults it.
    assert_eq!(web.wiki_en.hits("/robots.txt"), 0);
    let aard = record(&frontier, &web.wiki_en.url("/wiki/Aardvark"));
    assert_eq!(aard.state, UrlState::Fetched);
    let page = aard.fetched.unwrap();
    assert_eq!(page.payload, Payload::Wikitext);
    assert_eq!(page.title.as_deref(), Some("Aardvark"));
    assert!(
        page.body.contains("'''aardvark'''"),
        "{}",
        &page.body[..200]
    );
    assert_eq!(
        state(&frontier, &web.wiki_en, "/wiki/Aardwolf"),
        UrlState::Fetched
    );
    assert_eq!(
        state(&frontier, &web.wiki_en, "/wiki/Abraham_Lincoln"),
        UrlState::Skipped(SkipReason::Missing)
    );
    // One content batch for all titles.
    let batches: Vec<_> = web
        .wiki_en
        .log()
        .into_iter()
        .filter(|e| e.target.contains("prop=revisions"))
        .collect();
    assert_eq!(batches.len(), 1);
    assert!(
        batches[0].target.contains("rvslots=main") && batches[0].target.contains("redirects=1")
    );

    // Resume: nothing at all is asked again.
    web.wiki_en.clear_log();
    let again = acquire(
        &srcs,
        &["species".to_string()],
        &crawl(20.0),
        &frontier,
        &NoEvents,
    )
    .await
    .unwrap();
    assert!(web.wiki_en.log().is_empty(), "{:?}", web.wiki_en.log());
    assert_eq!(again.sources[0].resumed, 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mediawiki_extracts_russian() {
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    let srcs = vec![mediawiki(
        &web.wiki_ru.url("/w/api.php"),
        WikiText::Extracts,
        5,
        None,
    )];
    acquire(
        &srcs,
        &["Литва".to_string()],
        &crawl(20.0),
        &frontier,
        &NoEvents,
    )
    .await
    .unwrap();
    let rec = record(
        &frontier,
        &web.wiki_ru.url("/wiki/%D0%9B%D0%B8%D1%82%D0%B2%D0%B0"),
    );
    let p = rec.fetched.expect("Литва fetched");
    assert_eq!(p.payload, Payload::PlainText);
    assert!(
        p.body.contains("Литва") && p.body.contains("Литовская Республика"),
        "{}",
        &p.body[..300]
    );
    assert!(!p.body.contains("[["), "extracts are plain text");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extracts_follow_excontinue_across_titles() {
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    // "aardvark" finds A, Aardvark, Aardwolf; only Aardvark has a captured plain extract.
    let srcs = vec![mediawiki(
        &web.wiki_en.url("/w/api.php"),
        WikiText::Extracts,
        3,
        None,
    )];
    acquire(
        &srcs,
        &["aardvark".to_string()],
        &crawl(20.0),
        &frontier,
        &NoEvents,
    )
    .await
    .unwrap();
    let ext: Vec<_> = web
        .wiki_en
        .log()
        .into_iter()
        .filter(|e| e.target.contains("prop=extracts"))
        .collect();
    assert_eq!(
        ext.len(),
        3,
        "one request per title via excontinue: {ext:?}"
    );
    let p = record(&frontier, &web.wiki_en.url("/wiki/Aardvark"))
        .fetched
        .unwrap();
    assert!(p.body.starts_with("The aardvark"), "{}", &p.body[..100]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searxng_pages_and_unresponsive_engines() {
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    let events = CollectEvents::default();
    let sx = |engines: Option<&str>| {
        WebSourceConfig::Searxng(SearxngConfig {
            url: Some(web.searxng.base()),
            pages: 2,
            limit: 20,
            engines: engines.map(str::to_string),
            language: None,
            tuples: None,
            name: Some(format!("sx-{}", engines.unwrap_or("all"))),
        })
    };
    let report = acquire(
        &[sx(None), sx(Some("localwiki,deadwiki"))],
        &["species".to_string()],
        &crawl(20.0),
        &frontier,
        &events,
    )
    .await
    .unwrap();
    let r = &report.sources[0];
    assert!(r.results >= 10, "{r:?}");
    assert!(web
        .searxng
        .log()
        .iter()
        .any(|e| e.target.contains("pageno=2")));
    // Results were rewritten onto the loopback site and fetched there once each.
    let aard = web.open.url("/ext/127.0.0.1_8081/wiki/Aardvark");
    let rec = record(&frontier, &aard);
    assert_eq!(rec.state, UrlState::Fetched);
    assert_eq!(rec.query.as_deref(), Some("species"));
    assert_eq!(
        web.open.hits("/ext/127.0.0.1_8081/wiki/Aardvark"),
        1,
        "cross-source dedup"
    );
    assert!(
        events
            .warnings()
            .iter()
            .any(|(s, m)| s == "sx-localwiki,deadwiki" && m.contains("deadwiki")),
        "{:?}",
        events.warnings()
    );
    assert_spacing("open", &web.open.log(), Duration::from_millis(50));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brave_yandex_keys_and_results() {
    set_key();
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    let events = CollectEvents::default();
    let srcs = vec![
        WebSourceConfig::Brave(BraveConfig {
            api: web.brave.url("/res/v1/web/search"),
            key_env: KEY_ENV.into(),
            count: 20,
            pages: 2,
            limit: 3,
            country: None,
            search_lang: None,
            tuples: None,
            name: Some("brave".into()),
        }),
        WebSourceConfig::Brave(BraveConfig {
            api: web.brave.url("/res/v1/web/search"),
            key_env: "COLLECT_TEST_UNSET_KEY_VAR".into(),
            count: 20,
            pages: 1,
            limit: 3,
            country: None,
            search_lang: None,
            tuples: None,
            name: Some("brave-nokey".into()),
        }),
        WebSourceConfig::Yandex(YandexConfig {
            api: web.yandex.url("/v2/web/search"),
            key_env: KEY_ENV.into(),
            folder_id: Some("f1".into()),
            folder_env: "YANDEX_FOLDER_ID".into(),
            search_type: "SEARCH_TYPE_RU".into(),
            pages: 1,
            limit: 5,
            tuples: None,
            name: Some("yandex".into()),
        }),
    ];
    let report = acquire(
        &srcs,
        &["hello world".to_string()],
        &crawl(20.0),
        &frontier,
        &events,
    )
    .await
    .unwrap();
    assert_eq!(report.sources[0].results, 3, "{:?}", report.sources[0]);
    assert_eq!(report.sources[0].fetched, 3);
    assert!(report.sources[1]
        .not_run
        .as_deref()
        .unwrap_or("")
        .contains("COLLECT_TEST_UNSET_KEY_VAR"));
    assert_eq!(
        events
            .warnings()
            .iter()
            .filter(|(s, _)| s == "brave-nokey")
            .count(),
        1
    );
    assert_eq!(report.sources[2].results, 1, "{:?}", report.sources[2]);
    assert_eq!(
        state(&frontier, &web.open, "/ext/www.yandex.ru/"),
        UrlState::Fetched
    );
    let y = web.yandex.log();
    assert_eq!(y.len(), 1);
    assert_eq!(y[0].method, "POST");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duckduckgo_results_and_block_page() {
    let web = LoopbackWeb::start().await.unwrap();
    let frontier = MemoryFrontier::new();
    let events = CollectEvents::default();
    let src = vec![WebSourceConfig::Duckduckgo(DuckDuckGoConfig {
        url: web.duckduckgo.url("/html/"),
        limit: 12,
        pages: 2,
        region: None,
        tuples: None,
        name: Some("ddg".into()),
    })];
    let kw = vec![
        "foo".to_string(),
        "blocked".to_string(),
        "never asked".to_string(),
    ];
    let report = acquire(&src, &kw, &crawl(20.0), &frontier, &events)
        .await
        .unwrap();
    let r = &report.sources[0];
    // Page 2 is the captured "Next" form POSTed back; the stand-in repeats page 1.
    assert_eq!((r.queries, r.results, r.fetched), (1, 10, 10), "{r:?}");
    let log = web.duckduckgo.log();
    assert_eq!(
        log.len(),
        3,
        "foo GET + foo POST + blocked; then the source stops: {log:?}"
    );
    assert_eq!(log[1].method, "POST");
    assert!(
        events
            .warnings()
            .iter()
            .any(|(_, m)| m.contains("bot/rate-limit")),
        "{:?}",
        events.warnings()
    );
}

#[test]
fn duckduckgo_parser_on_the_real_capture() {
    let html = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/demo/loopback/fixtures/duckduckgo/html_search_foo_page1.html"
    ));
    let base = url::Url::parse("https://html.duckduckgo.com/html/?q=foo").unwrap();
    match parse_page(html, &base) {
        DdgPage::Results(r, next) => {
            let next = next.expect("next-page form");
            assert_eq!(next.action, "https://html.duckduckgo.com/html/");
            assert!(next.fields.contains(&("s".to_string(), "10".to_string())));
            assert!(next
                .fields
                .iter()
                .any(|(k, v)| k == "vqd" && v.starts_with("4-")));
            assert!(r.len() >= 8, "{r:?}");
            assert_eq!(r[0], "https://en.wikipedia.org/wiki/Foo_Fighters");
            assert!(r.iter().all(|u| !u.contains("duckduckgo.com")));
        }
        DdgPage::Blocked => panic!("not a block page"),
    }
}

#[test]
fn yandex_parser_on_the_documented_structure() {
    let xml = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/demo/loopback/fixtures/yandex/xml_response_structure_from_docs.xml"
    ));
    assert_eq!(
        parse_xml(xml).unwrap(),
        vec!["https://www.yandex.ru/".to_string()]
    );
    let err =
        "<yandexsearch><response><error code=\"15\">No results</error></response></yandexsearch>";
    assert!(parse_xml(err).unwrap_err().contains("No results"));
    assert!(parse_xml("<a><b></a>").is_err());
}

#[test]
fn dry_run_plan_fetches_nothing_and_expands_tuples() {
    let srcs = vec![
        WebSourceConfig::Mediawiki(MediaWikiConfig {
            api: Some("https://ru.wikipedia.org/w/api.php".into()),
            limit: 120,
            text: WikiText::Wikitext,
            article_path: None,
            namespace: 0,
            search_what: None,
            concurrency: 3,
            tuples: Some(TuplesConfig {
                size: 2,
                count: 3,
                seed: 7,
            }),
            name: None,
        }),
        WebSourceConfig::Brave(BraveConfig {
            api: "https://api.search.brave.com/res/v1/web/search".into(),
            key_env: "COLLECT_TEST_UNSET_KEY_VAR".into(),
            count: 20,
            pages: 1,
            limit: 20,
            country: None,
            search_lang: None,
            tuples: None,
            name: None,
        }),
    ];
    let kw: Vec<String> = ["лайка", "хаски", "овчарка"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let p = plan(&srcs, &kw);
    let wiki: Vec<_> = p.iter().filter(|q| q.kind == "mediawiki").collect();
    assert_eq!(wiki.len(), 6);
    assert_eq!(wiki[0].source, "mediawiki:ru.wikipedia.org");
    assert_eq!(
        wiki[0].requests,
        3 + 3,
        "3 search pages of 50 + 3 batches of 50"
    );
    assert_eq!(p, plan(&srcs, &kw), "deterministic");
    let brave: Vec<_> = p.iter().filter(|q| q.kind == "brave").collect();
    assert_eq!(brave.len(), 1);
    assert!(brave[0]
        .skipped
        .as_deref()
        .unwrap()
        .contains("COLLECT_TEST_UNSET_KEY_VAR"));
}
